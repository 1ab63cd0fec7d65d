// `npm run cluster -- --kubelet --data-dir DIR` as a user runs it: the embedded cluster in its own process, with the
// simulated kubelet. A PVC of the default StorageClass binds at once and its files are DIR/<namespace>/<pvc>: a Job that
// writes into it leaves the file there, and a file put there by hand is what a Pod mounting the PVC sees. The default
// StorageClass is the one annotated storageclass.kubernetes.io/is-default-class=true, which the API server's
// DefaultStorageClass admission gives a PVC without one (kubernetes/kubernetes plugin/pkg/admission/storage/
// storageclass/setdefault/admission.go).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { KubeClient } from '../../../src/kube/client.ts';
import type { ApiResource } from '../../../src/kube/types.ts';

const resource = (group: string, version: string, plural: string, kind: string): ApiResource => ({
  group, version, resource: plural, kind, namespaced: true, verbs: ['create', 'get', 'list', 'watch'], preferredVersion: version, versions: [version],
});
const PVCS = resource('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim');
const JOBS = resource('batch', 'v1', 'jobs', 'Job');

describe('npm run cluster -- --kubelet --data-dir DIR', function () {
  this.timeout(60_000);
  let work: string;
  let child: ChildProcess;
  let kube: KubeClient;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'cluster-main-'));
    child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'main.ts'), '--kubeconfig', join(work, 'kubeconfig'), '--kubelet', '--data-dir', join(work, 'volumes')], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the cluster exited with ${code}`)));
      lines.on('line', (line) => { if (line.startsWith('cluster ready')) resolve(); });
    });
    kube = await KubeClient.load({ kubeconfig: join(work, 'kubeconfig') });
  });
  after(async () => {
    kube?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('binds a PVC at once, runs a Job into it, and keeps its files in DIR/<namespace>/<pvc>', async () => {
    await kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'notes', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await kube.waitFor(PVCS, 'notes', 'default', (o) => (o?.status as { phase?: string } | undefined)?.phase === 'Bound', { timeoutMs: 10_000, description: 'be bound' });
    writeFileSync(join(work, 'volumes', 'default', 'notes', 'by-hand.txt'), 'put there by the user\n');
    await kube.create(JOBS, {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'writer', namespace: 'default' },
      spec: { backoffLimit: 0, template: { spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'sh', image: 'busybox:1.36', command: ['sh', '-c', 'cp /data/by-hand.txt /data/seen-by-pod.txt && echo written > /data/from-job.txt'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'notes' } }],
      } } },
    });
    const job = await kube.waitFor(JOBS, 'writer', 'default', (o) => JSON.stringify(o?.status ?? {}).includes('"type":"Complete"') || JSON.stringify(o?.status ?? {}).includes('"type":"Failed"'), { timeoutMs: 20_000, description: 'finish' });
    expect(JSON.stringify(job?.status)).to.include('"type":"Complete"');
    expect(readFileSync(join(work, 'volumes', 'default', 'notes', 'from-job.txt'), 'utf8')).to.equal('written\n');
    expect(readFileSync(join(work, 'volumes', 'default', 'notes', 'seen-by-pod.txt'), 'utf8')).to.equal('put there by the user\n');
  });

  it('refuses --kubelet without --data-dir in one sentence', async () => {
    const run = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'main.ts'), '--kubeconfig', join(work, 'other'), '--kubelet'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    run.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    const code = await new Promise((r) => run.once('exit', r));
    expect(code).to.equal(2);
    expect(stderr.trim()).to.equal("--kubelet needs --data-dir <dir>: each PVC's files live in <dir>/<namespace>/<pvc>.");
  });
});
