// Following a mover Job from creation to its end: until its Pod runs (or the start timeout names why it does not), then
// its progress from rclone's stats in the Pod's log, while the Job's own watch waits for it to finish.
import type { KubeObject } from '../kube/types.ts';
import { MOVER_CONTAINER } from './job.ts';
import { PODS, type VolumeKube } from './kube-port.ts';
import { parseCopyProgress, type CopyProgress } from './outcome.ts';
import { StartObserver } from './start-watch.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once the Job's Pod runs (or the Job finished); throws one sentence naming why it has not started after
 * `timeoutSeconds`. Looks every two seconds: the reasons live on Pods and Events, which the Job's own watch does not see.
 */
export async function waitUntilStarted(kube: VolumeKube, namespace: string, jobName: string, timeoutSeconds: number, finishing: Promise<unknown>): Promise<void> {
  const observer = new StartObserver(kube, namespace, jobName);
  const giveUpAt = Date.now() + timeoutSeconds * 1000;
  let settled = false;
  const ended = finishing.then(() => { settled = true; }, () => { settled = true; });
  while (!settled) {
    if (await observer.look()) return;
    const left = giveUpAt - Date.now();
    if (left <= 0) throw new Error(`its mover Job ${jobName} did not start within ${timeoutSeconds} second${timeoutSeconds === 1 ? '' : 's'}: ${await observer.reason()}`);
    await Promise.race([sleep(Math.min(2000, left)), ended]);
  }
}

/**
 * Waits for the Job to finish, reading its Pod's log every `intervalMs` meanwhile: each time rclone's latest stats
 * differ from the ones reported before, they are reported. A log that cannot be read is only a missed line.
 */
export async function followUntilFinished(
  kube: VolumeKube, pvc: { namespace: string; name: string }, jobName: string, finishing: Promise<KubeObject | undefined>,
  intervalMs: number, report: (copying: CopyProgress & { namespace: string; pvc: string }) => void,
): Promise<KubeObject | undefined> {
  let settled = false;
  const ended = finishing.then(() => { settled = true; }, () => { settled = true; });
  let last = '';
  while (!settled) {
    await Promise.race([sleep(intervalMs), ended]);
    if (settled) break;
    const stats = await latestStats(kube, pvc.namespace, jobName).catch(() => undefined);
    if (!stats) continue;
    const key = `${stats.files}/${stats.bytes}`;
    if (key === last) continue;
    last = key;
    report({ namespace: pvc.namespace, pvc: pvc.name, ...stats });
  }
  return finishing;
}

async function latestStats(kube: VolumeKube, namespace: string, jobName: string): Promise<CopyProgress | undefined> {
  const pods = await kube.list(PODS, namespace, `job-name=${jobName}`);
  const running = pods.find((p) => (p.status as { phase?: string } | undefined)?.phase === 'Running');
  if (!running) return undefined;
  return parseCopyProgress(await kube.podLog(namespace, running.metadata.name ?? '', MOVER_CONTAINER, 20));
}
