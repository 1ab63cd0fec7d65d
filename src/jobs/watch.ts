// The watcher of a hardened Job, from creation to its end: until its Pod runs (or the start timeout names why it does
// not), then whatever the owner follows while it runs (a mover's progress), while the Job's own watch waits for it to
// finish. A Job nobody will read any more is deleted rather than left running unobserved.
import type { KubeObject } from '../kube/types.ts';
import { JOBS, type VolumeKube } from './kube-port.ts';
import { StartObserver, type StartRemedies } from './start-watch.ts';
import { jobFinished } from './outcome.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once the Job's Pod runs (or the Job finished); throws one sentence naming why it has not started after
 * `timeoutSeconds`. Looks every two seconds: the reasons live on Pods and Events, which the Job's own watch does not see.
 */
export async function waitUntilStarted(
  kube: VolumeKube, namespace: string, jobName: string, timeoutSeconds: number, finishing: Promise<unknown>, remedies: StartRemedies, noun: string,
): Promise<void> {
  const observer = new StartObserver(kube, namespace, jobName, remedies);
  const giveUpAt = Date.now() + timeoutSeconds * 1000;
  let settled = false;
  const ended = finishing.then(() => { settled = true; }, () => { settled = true; });
  while (!settled) {
    if (await observer.look()) return;
    const left = giveUpAt - Date.now();
    if (left <= 0) throw new Error(`its ${noun} ${jobName} did not start within ${timeoutSeconds} second${timeoutSeconds === 1 ? '' : 's'}: ${await observer.reason()}`);
    await Promise.race([sleep(Math.min(2000, left)), ended]);
  }
}

export interface WatchOptions {
  /** the Job's activeDeadlineSeconds: its own controller ends it then */
  deadlineSeconds: number;
  startTimeoutSeconds: number;
  remedies: StartRemedies;
  /** how the Job is named in a sentence: "mover Job", "copy Job" */
  noun: string;
  signal?: AbortSignal | undefined;
  /** runs once the Pod has started; resolves with `finishing` (e.g. after following the Pod's log meanwhile) */
  whileRunning?: (finishing: Promise<KubeObject | undefined>) => Promise<KubeObject | undefined>;
}

/**
 * Waits for a created Job: its start (bounded by the start timeout), then its end. Resolves with the finished Job,
 * undefined when it was deleted first. On any failure to watch it to its end, the Job is deleted.
 */
export async function watchJob(kube: VolumeKube, namespace: string, jobName: string, options: WatchOptions): Promise<KubeObject | undefined> {
  const stopWatching = new AbortController();
  // The extra minute lets the Job controller write the Failed condition of an exceeded deadline, which is then read.
  const finishing = kube.waitFor(JOBS, namespace, jobName, jobFinished, {
    timeoutMs: (options.deadlineSeconds + 60) * 1000,
    signal: options.signal ? AbortSignal.any([options.signal, stopWatching.signal]) : stopWatching.signal,
  });
  finishing.catch(() => undefined); // judged below; meanwhile a rejection is not unhandled
  try {
    await waitUntilStarted(kube, namespace, jobName, options.startTimeoutSeconds, finishing, options.remedies, options.noun);
    return await (options.whileRunning ? options.whileRunning(finishing) : finishing);
  } catch (error) {
    stopWatching.abort();
    await kube.delete(JOBS, namespace, jobName).catch(() => undefined);
    throw error;
  }
}
