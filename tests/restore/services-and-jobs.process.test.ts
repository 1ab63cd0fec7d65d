// A restore into a fresh cluster whose Service range is already in use, against the strict embedded API server
// (tests/support/cluster/services.ts, jobs.ts): Services get the target's own addresses and node ports, a running Job
// is accepted with a selector of the target's making and runs, and a finished Job is not created to run again.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { backupStore } from '../support/backup-store.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { MICROK8S_NETWORK } from '../support/cluster/services.ts';
import { simulatedKubelet, type SimulatedKubelet } from '../support/kubelet/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore } from '../../src/restore/engine.ts';
import { collectUserState, compareStates, describeDifferences, isDifference, parseNamedSkips } from '../../src/restore/compare.ts';

const SERVICES = { group: '', resource: 'services' };
const JOBS = { group: 'batch', resource: 'jobs' };
const PODS = { group: '', resource: 'pods' };
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };
const PVCS = { group: '', resource: 'persistentvolumeclaims' };

interface Port { name?: string; port: number; nodePort?: number }
interface ServiceSpec { clusterIP?: string; clusterIPs?: string[]; ports?: Port[] }
const specOf = (o: KubeObject | undefined) => (o?.spec ?? {}) as ServiceSpec;
const conditions = (o: KubeObject | undefined) => ((o?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []);
const inMicroK8sRange = (ip: string | undefined) => /^10\.152\.183\.\d+$/.test(ip ?? '');

async function until<T>(what: string, probe: () => T | undefined, ms = 15_000): Promise<T> {
  for (const deadline = Date.now() + ms; ; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe('restore of Services and Jobs into a cluster whose Service range is in use', function () {
  this.timeout(120_000);
  let source: RunningCluster;
  let target: RunningCluster;
  let s3: S3ServerHandle;
  let kubeSource: KubeClient;
  let kubeTarget: KubeClient;
  let kubelet: SimulatedKubelet;
  let stopKubelet: () => void;
  let dataDir: string;
  let namespace: string;
  let outcome: Awaited<ReturnType<typeof runRestore>>;
  let rerun: Awaited<ReturnType<typeof runRestore>>;
  let restoreAgain: (conflictPolicy: 'update') => ReturnType<typeof runRestore>;
  const sourceObjects = new Map<string, KubeObject>();

  const job = (name: string, script: string): KubeObject => ({
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', script] }] } } },
  });

  before(async () => {
    [source, target, s3] = await Promise.all([
      startCluster({ profiles: 1, seed: 11, serviceNetwork: MICROK8S_NETWORK }),
      startCluster({ seed: 11, serviceNetwork: MICROK8S_NETWORK }),
      startS3Server({ buckets: ['svc-jobs'] }),
    ]);
    kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: 4 });
    kubeTarget = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 });
    namespace = source.api.list(PROFILES)[0]!.metadata.name!;

    const web = source.api.create(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
    const np = source.api.create(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web-np', namespace }, spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] } });
    const headless = source.api.create(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace }, spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 5432 }] } });
    for (const s of [web, np, headless]) sourceObjects.set(s.metadata.name!, s);
    // one Job ran to the end in the source cluster, the other was still running when the backup was taken
    const done = source.api.create(JOBS, job('export-done', 'echo exported'));
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    source.api.updateStatus(JOBS, { ...done, status: { startTime: at, completionTime: at, succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }] } });
    const running = source.api.create(JOBS, job('export-running', 'echo running'));
    source.api.updateStatus(JOBS, { ...running, status: { startTime: at, active: 1 } });
    sourceObjects.set('export-running', running);
    source.api.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace, labels: { tier: 'gold' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });

    // the target's range already holds the source's addresses and node port, taken by Services of its own
    target.api.create(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'taken-a', namespace: 'default' }, spec: { clusterIP: specOf(web).clusterIP, ports: [{ port: 1 }] } });
    target.api.create(SERVICES, {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'taken-b', namespace: 'default' },
      spec: { type: 'NodePort', clusterIP: specOf(np).clusterIP, ports: [{ port: 1, nodePort: specOf(np).ports![0]!.nodePort }] },
    });

    dataDir = mkdtempSync(join(tmpdir(), 'svc-jobs-kubelet-'));
    kubelet = simulatedKubelet({ dataDir, nodes: ['n1'] });
    stopKubelet = kubelet.start(target.api);

    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const store = new ObjectStore({ client, bucket: 'svc-jobs', prefix: 'kf' });
    const backup = await runBackup(kubeSource, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', namespaces: [namespace],
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    outcome = await runRestore(kubeTarget, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000 });
    rerun = await runRestore(kubeTarget, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000 });
    restoreAgain = (conflictPolicy) => runRestore(kubeTarget, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000, conflictPolicy });
  });
  after(async () => {
    stopKubelet?.();
    await kubelet?.idle();
    kubeSource?.close();
    kubeTarget?.close();
    await Promise.all([source?.stop(), target?.stop(), s3?.stop()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('succeeds, with nothing failed', () => {
    expect(outcome.failures).to.deep.equal([]);
    expect(outcome.totals.failed).to.equal(0);
  });

  it('gives the ClusterIP and NodePort Services addresses and node ports of the target, and keeps the headless one headless', () => {
    const web = target.api.get(SERVICES, 'web', namespace);
    const np = target.api.get(SERVICES, 'web-np', namespace);
    const db = target.api.get(SERVICES, 'db', namespace);
    for (const [name, s] of [['web', web], ['web-np', np]] as const) {
      expect(s, name).to.not.equal(undefined);
      expect(inMicroK8sRange(specOf(s).clusterIP), `${name}: ${specOf(s).clusterIP}`).to.equal(true);
      expect(specOf(s).clusterIP, name).to.not.equal(specOf(sourceObjects.get(name)).clusterIP);
      expect(specOf(s).clusterIPs, name).to.deep.equal([specOf(s).clusterIP]);
    }
    const nodePort = specOf(np).ports![0]!.nodePort!;
    expect(nodePort).to.be.within(30000, 32767);
    expect(nodePort).to.not.equal(specOf(sourceObjects.get('web-np')).ports![0]!.nodePort);
    expect(specOf(db).clusterIP).to.equal('None');
    expect(specOf(db).clusterIPs).to.deep.equal(['None']);
  });

  it('does not create the finished Job again, and says so in the results', async () => {
    expect(target.api.get(JOBS, 'export-done', namespace)).to.equal(undefined);
    const jobs = outcome.plan.find((p) => p.namespace === namespace && p.kind === 'Job')!;
    expect(jobs).to.include({ create: 1, skip: 1, fail: 0 });
    expect(jobs.reasons.join('\n')).to.match(/not restored: the Job had finished \(Complete\) in the source cluster/);
    expect(target.api.list(PODS, { namespace, labelSelector: 'job-name=export-done' })).to.deep.equal([]);
  });

  it('names the finished Job in skipped-objects, and the state comparison counts it as skipped with that reason, not missing', async () => {
    const named = outcome.skippedObjects.filter((line) => line.startsWith(`Job/${namespace}/export-done: `));
    expect(named).to.have.length(1);
    expect(named[0]).to.match(/: not restored: the Job had finished \(Complete\) in the source cluster/);
    const [before, after] = await Promise.all([collectUserState(kubeSource), collectUserState(kubeTarget)]);
    const id = `batch/Job/${namespace}/export-done`;
    expect(compareStates(before, after).find((d) => d.object === id)).to.deep.equal({ object: id, problem: 'missing' });
    const compared = compareStates(before, after, parseNamedSkips(outcome.skippedObjects)).find((d) => d.object === id)!;
    expect(compared).to.include({ problem: 'skipped' });
    expect(isDifference(compared)).to.equal(false);
    expect(describeDifferences([compared])[0]).to.match(new RegExp(`^${id}: skipped by the restore: not restored: the Job had finished`));
  });

  it('creates the running Job with a selector of the target\'s making, and it runs to completion there', async () => {
    const restored = target.api.get(JOBS, 'export-running', namespace)!;
    const uid = restored.metadata.uid!;
    expect(uid).to.not.equal(sourceObjects.get('export-running')!.metadata.uid);
    expect((restored.spec as { selector: unknown }).selector).to.deep.equal({ matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    const finished = await until('the restored Job to finish', () => {
      const live = target.api.get(JOBS, 'export-running', namespace);
      return conditions(live).some((c) => c.type === 'Complete' || c.type === 'Failed') ? live : undefined;
    });
    expect(conditions(finished).find((c) => c.type === 'Complete')?.status).to.equal('True');
  });

  it('a rerun finds the Services and the Job as the archive has them, and writes nothing', () => {
    expect(rerun.totals.failed).to.equal(0);
    expect(rerun.totals.created).to.equal(0);
    expect(rerun.totals.updated).to.equal(0);
  });

  it('conflict-policy=update puts a changed Job and a bound PVC back, keeping what the target made that may not change', async () => {
    // the target bound the claim meanwhile (its provisioner, or here by hand), and someone changed both objects
    let pvc = target.api.get(PVCS, 'data', namespace)!;
    if (!(pvc.spec as { volumeName?: string }).volumeName) pvc = target.api.update(PVCS, { ...pvc, spec: { ...(pvc.spec as object), volumeName: 'pv-on-target' } });
    if ((pvc.status as { phase?: string } | undefined)?.phase !== 'Bound') target.api.updateStatus(PVCS, { ...pvc, status: { phase: 'Bound' } });
    const volumeName = (pvc.spec as { volumeName: string }).volumeName;
    target.api.mergePatch(PVCS, 'data', namespace, { metadata: { labels: { tier: 'changed' } } });
    target.api.mergePatch(JOBS, 'export-running', namespace, { spec: { backoffLimit: 3 } });
    const result = await restoreAgain('update');
    expect(result.failures).to.deep.equal([]);
    expect(result.totals.updated).to.equal(2);
    const claim = target.api.get(PVCS, 'data', namespace)!;
    expect(claim.metadata.labels).to.deep.equal({ tier: 'gold' });
    expect((claim.spec as { volumeName?: string }).volumeName).to.equal(volumeName);
    const job = target.api.get(JOBS, 'export-running', namespace)!;
    expect((job.spec as { backoffLimit?: number }).backoffLimit).to.equal(0);
    expect((job.spec as { selector: unknown }).selector).to.deep.equal({ matchLabels: { 'batch.kubernetes.io/controller-uid': job.metadata.uid } });
  });
});
