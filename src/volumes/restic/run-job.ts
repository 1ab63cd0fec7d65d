// One restic Job run to its end, as the check, key and prune Jobs each run theirs: created or adopted, watched to its
// end (src/jobs/watch.ts), its termination message read; and the one-clause reason a failed one gives.
import type { KubeObject } from '../../kube/types.ts';
import { watchJob, type WatchOptions } from '../../jobs/watch.ts';
import { startOrAdopt } from '../adopt.ts';
import { PODS, type VolumeKube } from '../kube-port.ts';
import { jobFailedCondition, terminationMessage } from '../outcome.ts';
import { resticFailureReason } from './outcome.ts';

export interface FinishedResticJob {
  finished: KubeObject;
  /** what its container wrote to its termination message (or its log's tail, on error) */
  message: string | undefined;
}

/** Resolves with the finished Job and its message; throws `${noun} <name> was deleted before it finished` otherwise. */
export async function runResticJobToEnd(kube: VolumeKube, job: KubeObject, options: WatchOptions & { deletedPrefix?: string }): Promise<FinishedResticJob> {
  const namespace = job.metadata.namespace ?? '';
  const jobName = job.metadata.name ?? '';
  await startOrAdopt(kube, job, options.signal);
  const finished = await watchJob(kube, namespace, jobName, options);
  if (!finished) throw new Error(`${options.deletedPrefix ?? 'its'} ${options.noun} ${jobName} was deleted before it finished`);
  return { finished, message: terminationMessage(await kube.list(PODS, namespace, `job-name=${jobName}`)) };
}

/** Why a restic Job failed: restic's own line (secrets masked), else its deadline, else the Job's Failed condition. */
export function resticJobFailureReason(run: FinishedResticJob, secrets: string[], deadlineSeconds: number, otherwise: string): string {
  const failed = jobFailedCondition(run.finished);
  return resticFailureReason(run.message, secrets)
    ?? (failed?.reason === 'DeadlineExceeded' ? `it did not finish within ${deadlineSeconds} seconds` : failed?.message ?? failed?.reason ?? otherwise);
}
