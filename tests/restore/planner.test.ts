// The planner's decisions before the first write: the steps cut in two phases only when volumes are filled (whatever
// may mount a PVC after its data), which steps make Pods, and what is left out, each with its reason.
import { expect } from 'chai';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import type { Preflight, SpooledStep } from '../../src/restore/preflight.ts';
import { RestorePlan } from '../../src/restore/planner.ts';
import { RestoreReport } from '../../src/restore/report.ts';
import { Spool } from '../../src/restore/spool.ts';

const step = (group: string, resource: string, kind: string): SpooledStep => {
  const target = { group, version: 'v1', resource, kind, namespaced: true } as ApiResource;
  return { key: group ? `${resource}.${group}` : resource, group, resource, target, count: 1 };
};
const STEPS = [step('', 'secrets', 'Secret'), step('', 'persistentvolumeclaims', 'PersistentVolumeClaim'), step('rbac.authorization.k8s.io', 'roles', 'Role'), step('kubeflow.org', 'poddefaults', 'PodDefault'), step('kubeflow.org', 'notebooks', 'Notebook')];

function preflightOf(extra: Partial<Preflight> = {}): Preflight {
  return { profiles: [], steps: STEPS, skipped: [], unserved: [], namespaces: new Set(['alice']), ...extra } as unknown as Preflight;
}

describe('restore planner', () => {
  it('with volumes to fill, stops every namespace after its PVCs: the rest comes after the fill', () => {
    const plan = new RestorePlan(preflightOf(), true);
    expect(plan.early.map((s) => s.resource)).to.deep.equal(['secrets', 'persistentvolumeclaims']);
    expect(plan.late.map((s) => s.resource)).to.deep.equal(['roles', 'poddefaults', 'notebooks']);
  });

  it('without volumes to fill, one phase: no barrier', () => {
    const plan = new RestorePlan(preflightOf(), false);
    expect(plan.early).to.have.length(STEPS.length);
    expect(plan.late).to.deep.equal([]);
  });

  it('the steps after the PodDefaults make Pods, and wait for them', () => {
    const plan = new RestorePlan(preflightOf(), false);
    expect(STEPS.filter((s) => plan.isWorkload(s)).map((s) => s.resource)).to.deep.equal(['notebooks']);
  });

  it('records what is left out with its reason, and kinds the target serves in no version as refused or, with skip-unserved, skipped', async () => {
    const spool = await Spool.create();
    try {
      const mx: KubeObject = { apiVersion: 'kubeflow.org/v1', kind: 'MXJob', metadata: { name: 'mx', namespace: 'alice' } };
      await spool.append('mxjobs.kubeflow.org@v1', 'alice', Buffer.from(JSON.stringify(mx)), mx);
      await spool.seal();
      const preflight = preflightOf({
        spool,
        skipped: [{ key: 'jobs.batch', namespace: 'alice', kind: 'Job', name: 'done', category: 'finished-job', reason: 'not restored: the Job had finished (Complete)' }],
        unserved: [{ what: 'mxjobs.kubeflow.org/v1', key: 'mxjobs.kubeflow.org', spoolKey: 'mxjobs.kubeflow.org@v1', count: 1 }],
      } as unknown as Partial<Preflight>);
      const refused = new RestoreReport();
      await new RestorePlan(preflight, false).recordLeftOut(refused, {});
      expect(refused.totals()).to.include({ skipped: 1, failed: 1 });
      expect(refused.planEntries().flatMap((e) => e.reasons)).to.include.members([
        'Job/alice/done: not restored: the Job had finished (Complete)',
        'MXJob/alice/mx: mxjobs.kubeflow.org/v1 is not served by the target',
      ]);
      const skipped = new RestoreReport();
      await new RestorePlan(preflight, false).recordLeftOut(skipped, { skipUnserved: true });
      expect(skipped.totals()).to.include({ skipped: 2, failed: 0 });
    } finally {
      await spool.remove();
    }
  });
});
