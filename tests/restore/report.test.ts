import { expect } from 'chai';
import fc from 'fast-check';
import { RestoreReport, type Verdict } from '../../src/restore/report.ts';

describe('restore report: the plan per namespace and kind', () => {
  it('counts every verdict per namespace and kind, with at most five distinct reasons each, in name order', () => {
    const verdicts: Verdict[] = ['create', 'update', 'unchanged', 'skip', 'fail'];
    const record = fc.record({
      namespace: fc.constantFrom('', 'alice', 'bob', 'carol-ns', 'Zed'),
      kind: fc.constantFrom('ConfigMap', 'Secret', 'Notebook', 'PodDefault', 'Profile', 'configMap'),
      verdict: fc.constantFrom(...verdicts),
      reason: fc.option(fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'), { nil: undefined }),
    });
    fc.assert(fc.property(fc.array(record, { maxLength: 200 }), (records) => {
      const report = new RestoreReport();
      // the reference: one entry per namespace and kind, as the plan states it
      const expected = new Map<string, { namespace: string; kind: string; counts: Record<Verdict, number>; reasons: string[] }>();
      for (const r of records) {
        report.record(`${r.kind.toLowerCase()}s`, r.kind, r.namespace, r.verdict, r.reason);
        const key = JSON.stringify([r.namespace, r.kind]);
        const entry = expected.get(key) ?? { namespace: r.namespace, kind: r.kind, counts: { create: 0, update: 0, unchanged: 0, skip: 0, fail: 0 }, reasons: [] };
        entry.counts[r.verdict]++;
        if (r.reason && entry.reasons.length < 5 && !entry.reasons.includes(r.reason)) entry.reasons.push(r.reason);
        expected.set(key, entry);
      }
      const plan = report.planEntries();
      expect(plan.map((e) => ({ namespace: e.namespace, kind: e.kind, counts: { create: e.create, update: e.update, unchanged: e.unchanged, skip: e.skip, fail: e.fail }, reasons: e.reasons })))
        .to.deep.equal([...expected.values()].sort((a, b) => a.namespace.localeCompare(b.namespace) || a.kind.localeCompare(b.kind)));
      expect(report.done).to.equal(records.length);
      expect(report.totals().failed).to.equal(records.filter((r) => r.verdict === 'fail').length);
    }), { numRuns: 300 });
  });
});
