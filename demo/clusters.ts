// The demo's two embedded clusters: each an HTTPS API server with Kubeflow's CRDs and simulated controllers, a
// simulated kubelet that runs the volume mover Jobs on this machine with rclone, and a default StorageClass it serves.
// Cluster A also gets the generated dataset and real files in the notebooks' workspace volumes.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { KubeObject } from '../src/kube/types.ts';
import { startCluster, type RunningCluster } from '../tests/support/cluster/index.ts';
import type { Release } from '../tests/support/cluster/kubeflow/releases.ts';
import { simulatedKubelet, storageClass, type SimulatedKubelet } from '../tests/support/kubelet/index.ts';
import { claimFolder } from '../tests/support/kubelet/storage.ts';

export interface DemoCluster {
  name: string;
  kubeconfigPath: string;
  running: RunningCluster;
  kubelet: SimulatedKubelet;
  dataDir: string;
  stop(): Promise<void>;
}

const NAMESPACES = { group: '', resource: 'namespaces' };
const PVCS = { group: '', resource: 'persistentvolumeclaims' };

/** `release`: serve the Kubeflow CRDs of that CKF release (tests/support/cluster/kubeflow/releases.ts) */
export async function startDemoCluster(name: string, root: string, release?: Release): Promise<DemoCluster> {
  const dataDir = join(root, `${name}-volumes`);
  mkdirSync(dataDir, { recursive: true });
  const running = await startCluster({ kubeconfigPath: join(root, `${name}.kubeconfig`), seed: 11, ...(release ? { kubeflowRelease: release } : {}) });
  const kubelet = simulatedKubelet({ dataDir, configRetryMs: 5000 });
  const stopKubelet = kubelet.start(running.api);
  running.api.create({ group: 'storage.k8s.io', resource: 'storageclasses' }, storageClass('standard', { isDefault: true }));
  return {
    name, kubeconfigPath: running.kubeconfigPath, running, kubelet, dataDir,
    async stop() {
      stopKubelet();
      await kubelet.idle();
      await running.stop();
    },
  };
}

export interface DatasetFacts {
  profiles: number;
  objects: number;
  pvcs: number;
  files: number;
  bytes: number;
}

/** The generated dataset, then files in every workspace volume of the profile namespaces (a big one each unless quick). */
export async function fillClusterA(cluster: DemoCluster, options: { profiles: number; quick: boolean }): Promise<DatasetFacts> {
  const { applyDataset } = await import('../tests/support/cluster/kubeflow/dataset.ts');
  const summary = await applyDataset(cluster.kubeconfigPath, { profiles: options.profiles, seed: 11 });
  // Only users' volumes: the model's own claims (mlmd's storage in the kubeflow namespace) are control plane, not
  // workspaces, and a restore of user state does not carry them.
  const profileNamespaces = new Set(cluster.running.api.list(NAMESPACES).filter((ns) => ns.metadata.labels?.['app.kubernetes.io/part-of'] === 'kubeflow-profile').map((ns) => ns.metadata.name));
  const pvcs = (await boundPvcs(cluster, 20_000)).filter((pvc) => profileNamespaces.has(pvc.metadata.namespace));
  const finishedJob = addFinishedJob(cluster, [...profileNamespaces].sort()[0]);
  let files = 0;
  let bytes = 0;
  for (const pvc of pvcs) {
    const root = cluster.kubelet.volumePath(pvc.metadata.namespace!, pvc.metadata.name!);
    const written = writeWorkspace(root, options.quick ? 4 : 12, options.quick ? 0 : 8 * 1024 * 1024);
    files += written.files;
    bytes += written.bytes;
  }
  return { profiles: options.profiles, objects: summary.created + finishedJob, pvcs: pvcs.length, files, bytes };
}

/**
 * A batch Job that ran to the end in cluster A: the restore leaves it out on purpose (a restored Job would run again)
 * and names it, and the comparison shows it as skipped with that reason. Returns how many objects it added.
 */
function addFinishedJob(cluster: DemoCluster, namespace: string | undefined): number {
  if (namespace === undefined) return 0;
  const jobs = { group: 'batch', resource: 'jobs' };
  const made = cluster.running.api.create(jobs, {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'export-results', namespace },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'echo exported'] }] } } },
  });
  const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  cluster.running.api.updateStatus(jobs, { ...made, status: { startTime: at, completionTime: at, succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }] } });
  return 1;
}

async function boundPvcs(cluster: DemoCluster, timeoutMs: number): Promise<KubeObject[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pvcs = cluster.running.api.list(PVCS);
    if (pvcs.every((p) => (p.status as { phase?: string } | undefined)?.phase === 'Bound')) return pvcs;
    if (Date.now() > deadline) throw new Error(`the PVCs of cluster ${cluster.name} were not bound within ${timeoutMs / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What a notebook leaves in its workspace: nested folders, a unicode name, an empty file and, on request, a big one. */
function writeWorkspace(root: string, count: number, bigBytes: number): { files: number; bytes: number } {
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const dir = join(root, `project-${i % 3}`, i % 2 ? 'data' : 'notebooks');
    mkdirSync(dir, { recursive: true });
    const size = i === 0 ? 0 : 1000 + ((i * 7919) % 50_000);
    writeFileSync(join(dir, i === 1 ? 'résumé des données.csv' : `file-${i}.bin`), randomBytes(size));
    bytes += size;
  }
  if (bigBytes > 0) {
    writeFileSync(join(root, 'model.ckpt'), randomBytes(bigBytes));
    bytes += bigBytes;
  }
  return { files: count + (bigBytes > 0 ? 1 : 0), bytes };
}

/**
 * `<namespace>/<pvc>/<path>` → sha256 of every file of every claim, read from the folder of the volume the claim is
 * bound to: a restore hands each filled volume over from a claim of the model's namespace (src/volumes/rebind.ts), so
 * a claim's files are where its PersistentVolume says, not under its own name.
 */
export function volumeHashes(cluster: DemoCluster): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, root: string, prefix: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path, root, prefix);
      else out.set(`${prefix}/${relative(root, path)}`, createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  for (const pvc of cluster.running.api.list(PVCS)) {
    const folder = claimFolder(cluster.running.api, cluster.dataDir, pvc);
    if (existsSync(folder)) walk(folder, folder, `${pvc.metadata.namespace}/${pvc.metadata.name}`);
  }
  return out;
}
