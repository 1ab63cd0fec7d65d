// A Job in a profile namespace that holds the Profile's ResourceQuota: the API server defaults its Pod's requests and
// limits from the namespace's LimitRange before the quota looks at them (kubernetes/kubernetes plugin/pkg/admission/limitranger
// before plugin/pkg/admission/resourcequota), so the Pod is admitted and the Job runs; without a LimitRange the Pod is
// refused and the Job controller reports FailedCreate with no active Pod (kubernetes/kubernetes pkg/controller/job/job_controller.go).
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import { startCluster, type RunningCluster } from '../cluster/index.ts';
import { simulatedKubelet, type SimulatedKubelet } from './index.ts';
import { JOBS, PODS } from './refs.ts';

const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };
const QUOTAS = { group: '', resource: 'resourcequotas' };
const LIMIT_RANGES = { group: '', resource: 'limitranges' };
const EVENTS = { group: '', resource: 'events' };

async function until<T>(what: string, probe: () => T | undefined | false, ms = 10_000): Promise<T> {
  for (const deadline = Date.now() + ms; ; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

const conditions = (job: KubeObject | undefined) => ((job?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []);

describe('simulated kubelet: a Job under a profile\'s quota and limit range', function () {
  let cluster: RunningCluster;
  let kubelet: SimulatedKubelet;
  let stop: () => void;
  let dataDir: string;

  const job = (name: string, namespace: string): KubeObject => ({
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'echo done'] }] } } },
  });

  before(async () => {
    cluster = await startCluster({});
    dataDir = mkdtempSync(join(tmpdir(), 'kubelet-quota-'));
    kubelet = simulatedKubelet({ dataDir, nodes: ['n1'] });
    stop = kubelet.start(cluster.api);
    for (const name of ['limited', 'bare']) {
      cluster.api.create(PROFILES, {
        apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name },
        spec: { owner: { kind: 'User', name: `${name}@example.com` }, resourceQuotaSpec: { hard: { cpu: '4', memory: '8Gi' } } },
      });
      // the quota counts once the quota controller has written its status (admission reads status.hard)
      await until(`the quota of ${name}`, () => (cluster.api.get(QUOTAS, 'kf-resource-quota', name)?.status as { used?: object } | undefined)?.used);
    }
    cluster.api.create(LIMIT_RANGES, {
      apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'defaults', namespace: 'limited' },
      spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '512Mi' }, defaultRequest: { cpu: '100m', memory: '128Mi' } }] },
    });
  });
  after(async () => {
    stop?.();
    await kubelet?.idle();
    await cluster?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('admits the Pod with the LimitRange\'s defaults, and the Job runs to completion', async () => {
    cluster.api.create(JOBS, job('with-defaults', 'limited'));
    const done = await until('the Job to finish', () => {
      const live = cluster.api.get(JOBS, 'with-defaults', 'limited');
      return conditions(live).some((c) => c.type === 'Complete' || c.type === 'Failed') && live;
    });
    expect(conditions(done).find((c) => c.type === 'Complete')?.status).to.equal('True');
    const pod = cluster.api.list(PODS, { namespace: 'limited', labelSelector: 'job-name=with-defaults' })[0]!;
    const resources = (pod.spec as { containers: Array<{ resources: unknown }> }).containers[0]!.resources;
    expect(resources).to.deep.equal({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
  });

  it('without a LimitRange the Pod is refused: FailedCreate on the Job, which has started but has no active Pod', async () => {
    const created = cluster.api.create(JOBS, job('no-defaults', 'bare'));
    const event = await until('a FailedCreate event', () => cluster.api.list(EVENTS, { namespace: 'bare' })
      .find((e) => (e as { involvedObject?: { uid?: string } }).involvedObject?.uid === created.metadata.uid));
    expect(event).to.deep.include({ reason: 'FailedCreate', type: 'Warning' });
    expect((event as { message?: string }).message).to.match(/^Error creating: pods "no-defaults-[a-z0-9]+" is forbidden: failed quota: kf-resource-quota: must specify cpu for: main; memory for: main$/);
    const status = cluster.api.get(JOBS, 'no-defaults', 'bare')!.status as { startTime?: string; active?: number };
    expect(status.startTime).to.be.a('string');
    expect(status.active ?? 0).to.equal(0);
    expect(cluster.api.list(PODS, { namespace: 'bare', labelSelector: 'job-name=no-defaults' })).to.deep.equal([]);
    cluster.api.delete(JOBS, 'no-defaults', 'bare', { propagationPolicy: 'Background' });
  });
});
