// Objects of a mover run are named after backup, namespace and PVC (labels.ts), so a rerun after a crash meets what the
// dead run left under the same names: its credentials Secret is replaced, its Job is adopted while it still copies.
import type { KubeObject } from '../kube/types.ts';
import { JOBS, type MoverResource, type VolumeKube } from './kube-port.ts';
import { jobFinished } from './outcome.ts';

function isTaken(error: unknown): boolean {
  return (error as { status?: unknown } | undefined)?.status === 409;
}

/** A crashed run of the same backup id left its Secret under the same name: the new one (fresh keys) takes its place. */
export async function createOrReplace(kube: VolumeKube, resource: MoverResource, object: KubeObject): Promise<void> {
  try {
    await kube.create(resource, object);
  } catch (error) {
    if (!isTaken(error)) throw error;
    await kube.delete(resource, object.metadata.namespace ?? '', object.metadata.name ?? '');
    await kube.create(resource, object);
  }
}

/**
 * The mover Job of this PVC, created or adopted: one that a previous run left running goes on and is waited for (a
 * second copy into the same volume would only race it); one that finished or is being deleted is removed first, so
 * the copy runs again with this run's settings.
 */
export async function startOrAdopt(kube: VolumeKube, job: KubeObject, signal: AbortSignal | undefined): Promise<'created' | 'adopted'> {
  const namespace = job.metadata.namespace ?? '';
  const name = job.metadata.name ?? '';
  const found = await kube.get(JOBS, namespace, name);
  if (found && !found.metadata.deletionTimestamp && !jobFinished(found)) return 'adopted';
  if (found) {
    await kube.delete(JOBS, namespace, name);
    await kube.waitFor(JOBS, namespace, name, (o) => o === undefined, { timeoutMs: 120_000, signal });
  }
  try {
    await kube.create(JOBS, job);
  } catch (error) {
    // A create resent after a lost answer finds the Job it made: the same name is only ever this PVC's mover.
    if (isTaken(error)) return 'adopted';
    throw error;
  }
  return 'created';
}
