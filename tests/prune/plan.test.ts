import { expect } from 'chai';
import fc from 'fast-check';
import { planPrune, type FolderFacts } from '../../src/prune/plan.ts';

const hour = 3_600_000;
const now = new Date('2025-06-01T12:00:00Z');
const at = (hoursAgo: number) => new Date(now.getTime() - hoursAgo * hour);
const folder = (id: string, hoursAgo: number, complete = true, ours = true): FolderFacts => ({ id, complete, created: at(hoursAgo), lastWrite: at(hoursAgo), ours });

describe('prune/plan', () => {
  it('keeps the newest N complete backups and deletes the older ones', () => {
    const plan = planPrune([folder('a', 5), folder('b', 1), folder('c', 3), folder('d', 9)], { retention: 2, incompleteGraceMs: hour, now });
    expect(plan.delete).to.deep.equal([{ id: 'a', reason: 'beyond retention' }, { id: 'd', reason: 'beyond retention' }]);
    expect(plan.keep.map((k) => k.id)).to.deep.equal(['b', 'c']);
  });

  it('deletes an incomplete folder only after the grace period, and never a foreign Velero backup', () => {
    const plan = planPrune([folder('old-partial', 3, false), folder('running', 0.2, false), folder('velero-nightly', 100, true, false), folder('x', 1)], { retention: 1, incompleteGraceMs: hour, now });
    expect(plan.delete).to.deep.equal([{ id: 'old-partial', reason: 'incomplete' }]);
    expect(plan.keep.map((k) => k.why)).to.include.members(['incomplete but recently written to', 'not made by kubeflow-upgrader', 'newest complete backup']);
  });

  it('retention 0 keeps every complete backup', () => {
    expect(planPrune([folder('a', 5), folder('b', 1)], { retention: 0, incompleteGraceMs: hour, now }).delete).to.deep.equal([]);
  });

  it('never deletes the newest complete backup nor a recent incomplete one, for any bucket (1000 cases)', () => {
    const facts = fc.uniqueArray(
      fc.record({ id: fc.stringMatching(/^[a-z]{1,6}$/), complete: fc.boolean(), hoursAgo: fc.double({ min: 0, max: 1000, noNaN: true }), ours: fc.boolean() }),
      { selector: (f) => f.id, maxLength: 12 },
    );
    fc.assert(fc.property(facts, fc.nat(10), (raw, retention) => {
      const folders = raw.map((f) => folder(f.id, f.hoursAgo, f.complete, f.ours));
      const plan = planPrune(folders, { retention, incompleteGraceMs: hour, now });
      const deleted = new Set(plan.delete.map((d) => d.id));
      expect(deleted.size + plan.keep.length).to.equal(folders.length);
      const complete = folders.filter((f) => f.complete).sort((a, b) => b.created!.getTime() - a.created!.getTime() || b.id.localeCompare(a.id));
      if (complete[0]) expect(deleted.has(complete[0].id)).to.equal(false);
      for (const f of folders) {
        if (!f.ours) expect(deleted.has(f.id)).to.equal(false);
        if (!f.complete && now.getTime() - f.lastWrite!.getTime() < hour) expect(deleted.has(f.id)).to.equal(false);
      }
      if (retention > 0) expect(complete.filter((f) => !deleted.has(f.id) && f.ours).length).to.be.at.most(Math.max(1, retention));
    }), { numRuns: 1000 });
  });

  it('with a key, folders the key does not vouch for are neither counted nor kept in a real one\'s stead', () => {
    // two copies of a marker in folders named for tomorrow, as a bucket writer without the key would make them
    const forged = [{ ...folder('kf-tomorrow-1', -24), untrusted: 'it carries no HMAC' }, { ...folder('kf-tomorrow-2', -25), untrusted: 'it carries no HMAC' }];
    const real = [folder('r1', 1), folder('r2', 2), folder('r3', 3), folder('r4', 4)];
    const plan = planPrune([...forged, ...real], { retention: 2, incompleteGraceMs: hour, now });
    expect(plan.delete).to.deep.equal([{ id: 'r3', reason: 'beyond retention' }, { id: 'r4', reason: 'beyond retention' }]);
    expect(plan.keep.map((k) => [k.id, k.why])).to.deep.equal([['r1', 'newest complete backup'], ['r2', 'within backup-retention']]);
    expect(plan.untrusted.map((u) => u.id)).to.deep.equal(['kf-tomorrow-1', 'kf-tomorrow-2']);
    const asked = planPrune([...forged, ...real], { retention: 2, incompleteGraceMs: hour, now, deleteUnauthenticated: true });
    expect(asked.delete.map((d) => d.id).sort()).to.deep.equal(['kf-tomorrow-1', 'kf-tomorrow-2', 'r3', 'r4']);
    expect(asked.keep.map((k) => k.id)).to.deep.equal(['r1', 'r2']);
  });

  it('an incomplete folder whose run record holds is kept past the grace period; one whose record ran out goes', () => {
    const running = { ...folder('running', 5, false), runningUntil: new Date(now.getTime() + 60_000) };
    const stopped = { ...folder('stopped', 5, false), runningUntil: new Date(now.getTime() - 60_000) };
    const plan = planPrune([running, stopped, folder('x', 1)], { retention: 1, incompleteGraceMs: hour, now });
    expect(plan.delete).to.deep.equal([{ id: 'stopped', reason: 'incomplete' }]);
    expect(plan.keep.find((k) => k.id === 'running')!.why).to.equal(`being written (its run record holds until ${running.runningUntil.toISOString()})`);
  });

  it('unauthenticated folders change nothing about which real backups go, for any bucket (1000 cases)', () => {
    const facts = fc.uniqueArray(
      // whole minutes, so that two folders of the same time tie exactly and the id decides, in the oracle as in the plan
      fc.record({ id: fc.stringMatching(/^[a-z]{1,6}$/), minutesAgo: fc.integer({ min: -60_000, max: 60_000 }), forged: fc.boolean() }),
      { selector: (f) => f.id, maxLength: 14 },
    );
    fc.assert(fc.property(facts, fc.nat(10), (raw, retention) => {
      const folders = raw.map((f) => ({ ...folder(f.id, f.minutesAgo / 60), ...(f.forged ? { untrusted: 'it carries no HMAC' } : {}) }));
      const plan = planPrune(folders, { retention, incompleteGraceMs: hour, now });
      // the oracle: the real ones alone, newest first; the first max(1, retention) stay (all with 0), the rest go
      const real = raw.filter((f) => !f.forged).sort((a, b) => a.minutesAgo - b.minutesAgo || b.id.localeCompare(a.id));
      const keepCount = retention === 0 ? real.length : Math.max(1, retention);
      expect(plan.delete.map((d) => d.id).sort()).to.deep.equal(real.slice(keepCount).map((f) => f.id).sort());
      expect(plan.untrusted.map((u) => u.id).sort()).to.deep.equal(raw.filter((f) => f.forged).map((f) => f.id).sort());
    }), { numRuns: 1000 });
  });
});
