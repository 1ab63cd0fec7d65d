// What every engine's mover Job goes through alike: started (or adopted), followed while it runs, read only from the
// Job the run pinned and the Pods it controls, and a failure named in one clause. Each engine builds its Job and reads
// its own result (./rclone-engine.ts, ./restic/engine.ts).
import type { KubeObject } from '../kube/types.ts';
import { watchJob } from '../jobs/watch.ts';
import type { StartRemedies } from '../jobs/start-watch.ts';
import { describeInline as describeError } from '../errors/index.ts';
import { podsOf, startOrAdopt, stillPinned } from './adopt.ts';
import type { EngineRunRequest, MoverTask } from './engine.ts';
import { FILL_MARK_REMOVAL, hasFillMark } from './fill-mark.ts';
import { followUntilFinished } from './job-watch.ts';
import { JOBS, PVCS, type VolumeKube } from './kube-port.ts';
import type { MoveOperation } from './labels.ts';
import { jobFailedCondition, jobSucceeded, terminationMessage, type CopyProgress } from './outcome.ts';

/** The settings that fix a mover Pod that cannot start. */
export const MOVER_REMEDIES: StartRemedies = { imageSetting: () => 'volume-mover-image', resourcesSetting: 'volume-mover-resources' };

/** How an engine reads its mover: its progress lines, and the reason in a failed mover's message (secrets masked). */
export interface MoverReading {
  parseProgress?: (log: string) => CopyProgress | undefined;
  failureReason: (message: string | undefined) => string | undefined;
}

/**
 * Runs `job` (the mover of `task`) to its end and returns its name and termination message; throws naming why it
 * failed, was deleted or was replaced.
 */
export async function runMoverJob(
  kube: VolumeKube, task: MoverTask, job: KubeObject, run: Pick<EngineRunRequest, 'startTimeoutSeconds' | 'progressIntervalMs' | 'onCopying' | 'signal'>,
  reading: MoverReading,
): Promise<{ jobName: string; message: string | undefined }> {
  const { pvcRef } = task;
  const jobName = job.metadata.name ?? '';
  // the Job runs where its claim is: the PVC's namespace, or the model's for a claim made there for it (a snapshot's
  // exposed claim, ./snapshot; a hand-over's claim, ./rebind.ts)
  const namespace = jobNamespace(task);
  const deadline = task.job.activeDeadlineSeconds;
  const pinned = await startOrAdopt(kube, job, run.signal);
  const watched = await watchJob(kube, namespace, jobName, {
    deadlineSeconds: deadline, startTimeoutSeconds: run.startTimeoutSeconds, remedies: MOVER_REMEDIES, noun: 'mover Job', signal: run.signal,
    whileRunning: (finishing) => followUntilFinished(kube, pvcRef, jobName, finishing, run.progressIntervalMs, run.onCopying, reading.parseProgress, namespace),
  });
  if (!watched) throw new Error(`its mover Job ${jobName} was deleted before it finished`);
  // the result is read only from the Job this run pinned and the Pods it controls, never from anything named alike
  const finished = stillPinned(watched, pinned, 'mover Job');
  const message = terminationMessage(await podsOf(kube, namespace, pinned));
  if (!jobSucceeded(finished)) {
    const failed = jobFailedCondition(finished);
    const why = reading.failureReason(message)
      ?? (failed?.reason === 'DeadlineExceeded' ? `it did not finish within ${deadline} seconds` : failed?.message ?? failed?.reason ?? 'the mover failed');
    throw new Error(`mover Job ${jobName} failed: ${why}`);
  }
  return { jobName, message };
}

/** A finished mover's end: its Job goes, and a restored volume, complete only now, loses the mark that makes a rerun fill it. */
export async function finishMover(kube: VolumeKube, task: MoverTask, jobName: string): Promise<void> {
  await kube.delete(JOBS, jobNamespace(task), jobName);
  // a claim filled in the model's namespace carries no mark: the user's claim loses its own once it is handed over (./rebind.ts)
  if (task.job.operation === 'restore' && hasFillMark(task.pvc)) await kube.mergePatch(PVCS, task.pvc.metadata.namespace ?? '', task.pvc.metadata.name ?? '', FILL_MARK_REMOVAL);
}

/** Where a task's mover Job runs: beside the claim it mounts (MoverJobBase's `mount`). */
export function jobNamespace(task: Pick<MoverTask, 'job' | 'pvcRef'>): string {
  return task.job.mount?.namespace ?? task.pvcRef.namespace;
}

/** The sentence of a run whose gateway could not be started. */
export function gatewayDidNotStart(operation: MoveOperation, noun: string, namespace: string) {
  return (error: unknown): never => {
    throw new Error(`The volume ${operation} did not start: ${gatewayFailure(noun, namespace, error)}.`);
  };
}

/** Why a mover started beside a gateway that then failed did not finish: a clause of the PVC's failure. */
export function gatewayFailure(noun: string, namespace: string, error: unknown): string {
  return `the ${noun} in namespace ${namespace}, through which the movers reach the bucket, could not be started (${describeError(error)})`;
}
