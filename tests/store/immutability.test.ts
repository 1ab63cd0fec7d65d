// backup-immutability's syntax, one row per case: what an operator writes, and what the setting means or the one
// sentence that refuses it. The expected values are written out here, not derived from the module's own tables.
import { expect } from 'chai';
import { parseImmutability, retainUntil } from '../../src/store/immutability.ts';

const DAY = 86_400;

describe('store/immutability: backup-immutability and --immutability', () => {
  const accepted: Array<[string, { mode: string; seconds: number; text: string } | undefined]> = [
    ['', undefined],
    ['   ', undefined],
    ['off', undefined],
    ['30d', { mode: 'COMPLIANCE', seconds: 30 * DAY, text: '30d' }],
    ['30d compliance', { mode: 'COMPLIANCE', seconds: 30 * DAY, text: '30d' }],
    ['30d governance', { mode: 'GOVERNANCE', seconds: 30 * DAY, text: '30d governance' }],
    ['  90D   GOVERNANCE ', { mode: 'GOVERNANCE', seconds: 90 * DAY, text: '90d governance' }],
    ['12w', { mode: 'COMPLIANCE', seconds: 12 * 7 * DAY, text: '12w' }],
    ['1y', { mode: 'COMPLIANCE', seconds: 365 * DAY, text: '1y' }],
    ['36h', { mode: 'COMPLIANCE', seconds: 36 * 3_600, text: '36h' }],
    ['45s', { mode: 'COMPLIANCE', seconds: 45, text: '45s' }],
    ['100y', { mode: 'COMPLIANCE', seconds: 100 * 365 * DAY, text: '100y' }],
  ];
  for (const [raw, expected] of accepted) {
    it(`"${raw}" → ${expected ? `${expected.mode} for ${expected.seconds} s` : 'off'}`, () => {
      expect(parseImmutability(raw, 'backup-immutability')).to.deep.equal({ ok: true, immutability: expected });
    });
  }

  const refused: Array<[string, RegExp]> = [
    ['30', /^backup-immutability must be a duration and an optional mode, like 30d, 12w compliance or 90d governance \(units s, m, h, d, w, y\), not "30"\.$/],
    ['30 days', /not "30 days"\.$/],
    ['30d legal-hold', /not "30d legal-hold"\.$/],
    ['governance 30d', /not "governance 30d"\.$/],
    ['-5d', /not "-5d"\.$/],
    ['0d', /^backup-immutability must be between 1s and 100y, not "0d"\.$/],
    ['101y', /must be between 1s and 100y, not "101y"\.$/],
  ];
  for (const [raw, sentence] of refused) {
    it(`"${raw}" is refused in one sentence`, () => {
      const parsed = parseImmutability(raw, 'backup-immutability');
      expect(parsed.ok).to.equal(false);
      if (!parsed.ok) {
        expect(parsed.problem).to.match(sentence);
        expect(parsed.problem.split(/\. /)).to.have.length(1);
      }
    });
  }

  it('a backup that starts at a time is retained until that time plus the duration', () => {
    const parsed = parseImmutability('2d governance', 'x');
    if (!parsed.ok || !parsed.immutability) throw new Error('2d governance did not parse');
    expect(retainUntil(parsed.immutability, new Date('2026-12-07T10:00:00Z')).toISOString()).to.equal('2026-12-09T10:00:00.000Z');
  });
});
