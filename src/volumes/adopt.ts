// Objects of a mover run are named after backup, namespace and PVC (labels.ts), so a rerun after a crash meets what the
// dead run left under the same names: its credentials Secret is replaced, its Job is adopted while it still copies.
import type { KubeObject } from '../kube/types.ts';
import { JOBS, PODS, type MoverResource, type VolumeKube } from './kube-port.ts';
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

/** A Job this run started or adopted, pinned by its UID: whatever later stands under its name is another object. */
export interface StartedJob {
  how: 'created' | 'adopted';
  name: string;
  uid: string;
}

/**
 * The mover Job of this PVC, created or adopted: one that a previous run left running goes on and is waited for (a
 * second copy into the same volume would only race it); one that finished or is being deleted is removed first, so
 * the copy runs again with this run's settings. Its name is keyed (labels.ts moverNameKey), so nobody but a run of
 * this installation can have made a Job under it beforehand.
 */
export async function startOrAdopt(kube: VolumeKube, job: KubeObject, signal: AbortSignal | undefined): Promise<StartedJob> {
  const namespace = job.metadata.namespace ?? '';
  const name = job.metadata.name ?? '';
  const found = await kube.get(JOBS, namespace, name);
  if (found && !found.metadata.deletionTimestamp && !jobFinished(found)) return { how: 'adopted', name, uid: found.metadata.uid ?? '' };
  if (found) {
    await kube.delete(JOBS, namespace, name);
    await kube.waitFor(JOBS, namespace, name, (o) => o === undefined, { timeoutMs: 120_000, signal });
  }
  try {
    const created = await kube.create(JOBS, job);
    return { how: 'created', name, uid: created.metadata.uid ?? '' };
  } catch (error) {
    // A create resent after a lost answer finds the Job it made: the same name is only ever this PVC's mover.
    if (!isTaken(error)) throw error;
    const made = await kube.get(JOBS, namespace, name);
    if (!made) throw error;
    return { how: 'adopted', name, uid: made.metadata.uid ?? '' };
  }
}

/**
 * The Pods of a Job this run pinned: those whose controller is that Job by UID (kubernetes pkg/controller/job claims
 * Pods by their controller reference). A Pod that only carries the `job-name` label is not one of them.
 */
export async function podsOf(kube: VolumeKube, namespace: string, job: StartedJob): Promise<KubeObject[]> {
  const pods = await kube.list(PODS, namespace, `job-name=${job.name}`);
  return pods.filter((pod) => pod.metadata.ownerReferences?.some((o) => o.controller === true && o.kind === 'Job' && o.uid === job.uid));
}

/** The finished Job, if it is still the one this run pinned; one sentence otherwise. */
export function stillPinned(finished: KubeObject, job: StartedJob, noun: string): KubeObject {
  if (finished.metadata.uid !== job.uid) throw new Error(`its ${noun} ${job.name} was replaced by another Job of the same name before it finished, so its result was not read`);
  return finished;
}
