// prune and backup-immutability: which backups the plan deletes are still retained by the bucket, and the sentence
// that says when each can go. The retention dates are the test's own, as a HEAD of the marker would answer them.
import { expect } from 'chai';
import { retainedSentence, splitRetained } from '../../src/prune/retention.ts';

const now = new Date('2026-12-07T12:00:00.000Z');
const later = new Date('2026-12-08T12:00:00.000Z');
const earlier = new Date('2026-12-06T12:00:00.000Z');

describe('prune/retention: a retained backup is refused with its date, and deleted after it', () => {
  const rows: Array<[string, { mode: string; until: Date } | undefined, 'deletable' | 'retained']> = [
    ['retained until tomorrow', { mode: 'COMPLIANCE', until: later }, 'retained'],
    ['retained until tomorrow in governance mode', { mode: 'GOVERNANCE', until: later }, 'retained'],
    ['whose retention ended yesterday', { mode: 'COMPLIANCE', until: earlier }, 'deletable'],
    ['whose retention ends this very millisecond', { mode: 'COMPLIANCE', until: now }, 'deletable'],
    ['with no retention (written before immutability was set)', undefined, 'deletable'],
  ];
  for (const [what, retention, verdict] of rows) {
    it(`a backup ${what} is ${verdict}`, () => {
      const split = splitRetained([{ id: 'kf-20261201-000000-aaaaaa', reason: 'beyond retention' }], new Map([['kf-20261201-000000-aaaaaa', retention]]), now);
      if (verdict === 'retained') {
        expect(split.deletable).to.deep.equal([]);
        expect(split.retained).to.deep.equal([{ id: 'kf-20261201-000000-aaaaaa', mode: retention!.mode, until: retention!.until }]);
      } else {
        expect(split.deletable).to.deep.equal([{ id: 'kf-20261201-000000-aaaaaa', reason: 'beyond retention' }]);
        expect(split.retained).to.deep.equal([]);
      }
    });
  }

  it('keeps the order of the deletable ones and leaves a backup the survey did not ask about deletable', () => {
    const split = splitRetained([{ id: 'a' }, { id: 'b' }, { id: 'c' }], new Map([['b', { mode: 'COMPLIANCE', until: later }]]), now);
    expect(split.deletable.map((d) => d.id)).to.deep.equal(['a', 'c']);
    expect(split.retained.map((r) => r.id)).to.deep.equal(['b']);
  });

  it('says in one sentence which backup, until when and what prune will do', () => {
    expect(retainedSentence({ id: 'kf-20261201-000000-aaaaaa', mode: 'COMPLIANCE', until: later })).to.equal(
      'Backup kf-20261201-000000-aaaaaa is under Object Lock retention (COMPLIANCE) until 2026-12-08T12:00:00.000Z and cannot be deleted before then; prune deletes it on its first run after that date.',
    );
  });
});
