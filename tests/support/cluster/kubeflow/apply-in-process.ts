// The dataset applied inside the cluster's own process, for scale: the same objects in the same order as
// applyDataset (Profile first; the rest once the profile controller made an Active namespace with the owner
// annotation), through the same Cluster semantics an HTTP create reaches (validation, admission, managedFields of
// the creating manager), so the controllers still make their objects. What it skips is the HTTP round trip and the
// client's JSON, which at P=5000 (≈150k objects) is minutes of work that measures nothing the benches are about.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Cluster, UserInfo } from '../cluster.ts';
import { isApiError } from '../errors.ts';
import { generateProfile, type DatasetSummary } from './dataset.ts';
import { refs } from './refs.ts';

const ADMIN: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
/** the manager name an HTTP create from @kubernetes/client-node is recorded under */
const CLIENT_MANAGER = 'kubernetes-client-javascript';

export interface InProcessApplyOptions {
  profiles: number;
  seed: number;
  /** profiles in flight at once: their namespaces are awaited together, bounding the controllers' queues */
  batch?: number;
  namespaceTimeoutMs?: number;
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function namespaceReady(cluster: Cluster, name: string, owner: string): boolean {
  const ns = cluster.getStored(refs.namespaces, name)?.obj;
  return ns?.metadata.annotations?.owner === owner && (ns.status as { phase?: string } | undefined)?.phase === 'Active';
}

/** Applies the dataset through the in-process API; safe to rerun (existing objects are counted, not changed). */
export async function applyDatasetInProcess(cluster: Cluster, options: InProcessApplyOptions): Promise<DatasetSummary> {
  const started = Date.now();
  const summary: DatasetSummary = { profiles: options.profiles, created: 0, existing: 0, byKind: {}, durationMs: 0 };
  const create = (object: KubeObject) => {
    const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
    const def = cluster.resourceByKind(group, object.kind);
    if (!def) throw new Error(`Creating ${object.kind}: the cluster does not serve ${object.apiVersion}.`);
    try {
      cluster.create(def, object, { fieldManager: CLIENT_MANAGER, user: ADMIN });
      summary.created++;
      summary.byKind[object.kind] = (summary.byKind[object.kind] ?? 0) + 1;
    } catch (error) {
      if (!(isApiError(error) && error.status === 409)) throw new Error(`Creating ${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name} failed: ${(error as Error).message}`);
      summary.existing++;
    }
  };
  const batch = options.batch ?? 250;
  const timeoutMs = options.namespaceTimeoutMs ?? 60_000;
  for (let first = 0; first < options.profiles; first += batch) {
    const generated = Array.from({ length: Math.min(batch, options.profiles - first) }, (_, i) => generateProfile(options.seed, first + i));
    for (const { profile } of generated) create(profile);
    let waiting = generated;
    const deadline = Date.now() + timeoutMs;
    while (waiting.length > 0) {
      const stillWaiting = [];
      for (const p of waiting) {
        const owner = (p.profile.spec as { owner: { name: string } }).owner.name;
        if (namespaceReady(cluster, p.profile.metadata.name!, owner)) for (const object of p.objects) create(object);
        else stillWaiting.push(p);
      }
      waiting = stillWaiting;
      if (waiting.length === 0) break;
      if (Date.now() > deadline) throw new Error(`The profile controller did not make namespace ${waiting[0]!.profile.metadata.name} within ${timeoutMs / 1000}s.`);
      await tick(5);
    }
    // let the controllers drain this batch's events before the next, as a user's pace would
    await tick(0);
  }
  summary.durationMs = Date.now() - started;
  return summary;
}
