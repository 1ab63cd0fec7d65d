// Volume data in the soak: files written into every PVC of the source (through the simulated kubelet's folders), and
// the restore run as a user would, through the CLI in its own process group, SIGKILLed as soon as its first restore
// mover Job appears (the fill has begun) and rerun; on every other run the mover Jobs are deleted after the kill, as a
// lost node would leave things, and otherwise the rerun adopts them. Then each PVC's files are compared by sha256.
import { execa } from 'execa';
import { join } from 'node:path';
import type { RunningCluster } from '../support/cluster/index.ts';
import type { SimulatedKubelet } from '../support/kubelet/index.ts';
import { hashTree, writeWorkspace } from '../volumes/helpers.ts';
import { RCLONE_IMAGE as DEFAULT_MOVER_IMAGE } from '../../src/volumes/engine.ts';
import { DEFAULT_MOVER_RESOURCES } from '../../src/volumes/resources.ts';
import type { MoverConfig } from '../../src/volumes/steps.ts';

const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const JOBS = { group: 'batch', resource: 'jobs' };
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'kubeflow-upgrader.js');

export const SOAK_MOVERS: MoverConfig = { image: DEFAULT_MOVER_IMAGE, concurrency: 2, startTimeoutSeconds: 120, resources: DEFAULT_MOVER_RESOURCES };

/** Writes a small workspace into every PVC of the profile namespaces; returns `namespace/pvc` → path → sha256. */
export function seedVolumes(cluster: RunningCluster, kubelet: SimulatedKubelet): Map<string, Map<string, string>> {
  const trees = new Map<string, Map<string, string>>();
  for (const [i, pvc] of cluster.api.list(PVCS).filter((p) => p.metadata.namespace !== 'kubeflow').entries()) {
    const folder = kubelet.volumePath(pvc.metadata.namespace!, pvc.metadata.name!);
    writeWorkspace(folder, { files: 15 + (i % 10), bigFileBytes: 300_000 });
    trees.set(`${pvc.metadata.namespace}/${pvc.metadata.name}`, hashTree(folder));
  }
  return trees;
}

/** PVCs whose files differ from the source's (or are missing), by `namespace/pvc`. */
export function differingVolumes(source: Map<string, Map<string, string>>, kubelet: SimulatedKubelet): string[] {
  const differ: string[] = [];
  for (const [key, tree] of source) {
    const [namespace, name] = key.split('/') as [string, string];
    let restored: Map<string, string>;
    try {
      restored = hashTree(kubelet.volumePath(namespace, name));
    } catch {
      differ.push(`${key} (missing)`);
      continue;
    }
    const same = restored.size === tree.size && [...tree].every(([path, sum]) => restored.get(path) === sum);
    if (!same) differ.push(key);
  }
  return differ;
}

export interface KilledRestore {
  tries: number;
  done: boolean;
  killedDuringFill: boolean;
  jobsDeleted: number;
  lastError: string;
}

/** The CLI restore of `id` into `target`, killed at the fill's start on the first try, then rerun up to `maxTries` in all. */
export async function restoreKilledDuringFill(options: {
  target: RunningCluster; id: string; s3Url: string; endpoint: string; deleteJobs: boolean; maxTries: number;
}): Promise<KilledRestore> {
  const { target } = options;
  const args = [BIN, 'restore', options.id, '--s3-url', options.s3Url, '--endpoint', options.endpoint, '--path-style', '--region', 'us-east-1',
    '--kubeconfig', target.kubeconfigPath, '--wait-timeout', '60', '--mover-start-timeout', String(SOAK_MOVERS.startTimeoutSeconds), '--json'];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
  const result: KilledRestore = { tries: 0, done: false, killedDuringFill: false, jobsDeleted: 0, lastError: '' };
  while (!result.done && result.tries < options.maxTries) {
    result.tries++;
    const child = execa(process.execPath, args, { reject: false, extendEnv: false, env, detached: true, timeout: 600_000 });
    if (result.tries === 1) {
      let fillStarted!: () => void;
      const started = new Promise<void>((resolve) => { fillStarted = resolve; });
      const unsubscribe = target.api.subscribe((e) => {
        if (e.type === 'ADDED' && e.ref.resource === 'jobs' && e.object.metadata.labels?.['kubeflow-upgrader/operation'] === 'restore') fillStarted();
      });
      const ended = await Promise.race([started.then(() => false), child.then(() => true)]);
      unsubscribe();
      if (!ended && child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // it ended on its own meanwhile
        }
        result.killedDuringFill = true;
        await child;
        if (options.deleteJobs) {
          for (const job of target.api.list(JOBS, { labelSelector: 'kubeflow-upgrader/operation=restore' })) {
            target.api.delete(JOBS, job.metadata.name!, job.metadata.namespace, { propagationPolicy: 'Background' });
            result.jobsDeleted++;
          }
        }
        continue;
      }
    }
    const run = await child;
    result.done = run.exitCode === 0;
    if (!result.done) result.lastError = String(run.stderr).split('\n').filter(Boolean).at(-1) ?? `exit ${run.exitCode}`;
  }
  return result;
}
