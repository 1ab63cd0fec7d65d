// The scheduler counts each namespace once in the restore's closing line, though a volume fill runs every namespace's
// steps in two phases (before and after the fill): the demo's shape, 4 Profiles restored with volume data, said 8
// namespaces before. A fake API server makes each Profile's namespace as soon as it is watched, and a fake writer
// answers each object; the spool, the planner and the scheduler are the real ones.
import { expect } from 'chai';
import pLimit from 'p-limit';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import type { RestoreKube } from '../../src/restore/kube-port.ts';
import type { Preflight, SpooledStep } from '../../src/restore/preflight.ts';
import type { Verdict } from '../../src/restore/report.ts';
import { Spool } from '../../src/restore/spool.ts';
import { RestorePlan } from '../../src/restore/planner.ts';
import { NamespaceScheduler } from '../../src/restore/scheduler.ts';
import { ownerAnnotation } from '../../src/kubeflow/profile-namespaces.ts';
import { restoreActivity, startRestoreActivity } from '../../src/restore/activity.ts';

const resource = (group: string, resource: string, kind: string, namespaced = true): ApiResource =>
  ({ group, version: group === '' ? 'v1' : 'v1', resource, kind, namespaced, verbs: [], preferredVersion: 'v1', versions: ['v1'] });
const NAMESPACES = resource('', 'namespaces', 'Namespace', false);
const PROFILES = resource('kubeflow.org', 'profiles', 'Profile', false);
const STEPS = [resource('', 'configmaps', 'ConfigMap'), resource('', 'persistentvolumeclaims', 'PersistentVolumeClaim'), resource('kubeflow.org', 'notebooks', 'Notebook')];

const profile = (name: string): KubeObject => ({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name, uid: `uid-${name}` }, spec: { owner: { kind: 'User', name: `${name}@example.com` } } });

/** a target whose profile controller has made every namespace: each is ready the moment the watch starts */
function fakeKube(profiles: readonly KubeObject[]): RestoreKube {
  return {
    concurrency: 4,
    findByResource: async (_group: string, name: string) => (name === 'namespaces' ? NAMESPACES : undefined),
    listAll: async () => ({ items: [], resourceVersion: '1' }),
    watch: (_resource: ApiResource, _options: unknown, onEvent: (event: { type: string; object: KubeObject }) => void) => {
      setImmediate(() => {
        for (const p of profiles) {
          const name = p.metadata.name!;
          onEvent({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { [ownerAnnotation]: `${name}@example.com` } }, status: { phase: 'Active' } } });
        }
      });
      return () => undefined;
    },
  } as unknown as RestoreKube;
}

async function run(names: string[], existing: ReadonlySet<string>): Promise<{ summary: string; said: string[]; events: string[]; done: number }> {
  const profiles = names.map(profile);
  const spool = await Spool.create();
  const steps: SpooledStep[] = [];
  for (const target of STEPS) {
    const key = target.group ? `${target.resource}.${target.group}` : target.resource;
    for (const namespace of names) {
      const object = { apiVersion: target.group ? `${target.group}/v1` : 'v1', kind: target.kind, metadata: { name: `${target.resource}-1`, namespace } } as KubeObject;
      await spool.append(`${key}@v1`, namespace, Buffer.from(JSON.stringify(object)), object);
    }
    steps.push({ key, group: target.group, resource: target.resource, target, count: names.length });
  }
  await spool.seal();
  const preflight = { backupId: 'kf-demo', profiles, profileResource: PROFILES, namespaces: new Set(names), steps, spool } as unknown as Preflight;
  const events: string[] = [];
  const report = { done: 0 };
  const writer = {
    report,
    applyOne: async (key: string, _resource: ApiResource, item: { object: KubeObject }): Promise<Verdict> => {
      report.done++;
      events.push(`${key} ${item.object.metadata.namespace ?? item.object.metadata.name}`);
      return key === 'profiles.kubeflow.org' && existing.has(item.object.metadata.name!) ? 'unchanged' : 'create';
    },
  };
  const said: string[] = [];
  startRestoreActivity();
  try {
    const scheduler = new NamespaceScheduler({
      kube: fakeKube(profiles), plan: new RestorePlan(preflight, true), writer: writer as never, mode: 'write', slots: pLimit(4), limit: 4,
      podDefaults: undefined, fill: async (created) => { events.push(`fill ${created.length}`); }, say: (m) => { said.push(m); }, status: () => undefined,
      waitTimeoutMs: 5000, wording: undefined,
    });
    await scheduler.run();
    return { summary: scheduler.summary(), said, events, done: restoreActivity.namespacesDone };
  } finally {
    await spool.remove();
  }
}

describe('restore scheduler', () => {
  it('4 Profiles restored with volume data into a fresh cluster (the demo): 4 namespaces, each counted once across the two phases', async () => {
    const names = ['alice', 'bob', 'carol', 'dave'];
    const { said, events, done } = await run(names, new Set());
    expect(said.at(-1)).to.equal(`restored ${4 + 3 * 4} objects in 4 namespace(s)`);
    expect(done).to.equal(4);
    // the fill comes after every PVC and before any Notebook: the two phases the count must not add up
    const fill = events.indexOf('fill 4');
    expect(fill).to.be.greaterThan(events.findLastIndex((e) => e.startsWith('persistentvolumeclaims ')));
    expect(fill).to.be.lessThan(events.findIndex((e) => e.startsWith('notebooks.kubeflow.org ')));
  });

  it('a rerun where 2 of the 4 Profiles existed: the namespaces compared and the ones made fresh are counted once each', async () => {
    const { summary, done } = await run(['alice', 'bob', 'carol', 'dave'], new Set(['alice', 'carol']));
    expect(summary).to.equal(`restored ${4 + 3 * 4} objects in 4 namespace(s)`);
    expect(done).to.equal(4);
  });
});
