// A running mover's progress: rclone's stats in its Pod's log, read while the Job's own watch waits for it to finish
// (the start and the end are the hardened Job's watcher's, src/jobs/watch.ts).
import type { KubeObject } from '../kube/types.ts';
import { MOVER_CONTAINER } from './job.ts';
import { PODS, type VolumeKube } from './kube-port.ts';
import { parseCopyProgress, type CopyProgress } from './outcome.ts';
import { sleep } from '../jobs/watch.ts';

/**
 * Waits for the Job to finish, reading its Pod's log every `intervalMs` meanwhile: each time rclone's latest stats
 * differ from the ones reported before, they are reported. A log that cannot be read is only a missed line.
 */
export async function followUntilFinished(
  kube: VolumeKube, pvc: { namespace: string; name: string }, jobName: string, finishing: Promise<KubeObject | undefined>,
  intervalMs: number, report: (copying: CopyProgress & { namespace: string; pvc: string }) => void,
  parse: (log: string) => CopyProgress | undefined = parseCopyProgress,
): Promise<KubeObject | undefined> {
  let settled = false;
  const ended = finishing.then(() => { settled = true; }, () => { settled = true; });
  let last = '';
  while (!settled) {
    await Promise.race([sleep(intervalMs), ended]);
    if (settled) break;
    const stats = await latestStats(kube, pvc.namespace, jobName, parse).catch(() => undefined);
    if (!stats) continue;
    const key = `${stats.files}/${stats.bytes}`;
    if (key === last) continue;
    last = key;
    report({ namespace: pvc.namespace, pvc: pvc.name, ...stats });
  }
  return finishing;
}

async function latestStats(kube: VolumeKube, namespace: string, jobName: string, parse: (log: string) => CopyProgress | undefined): Promise<CopyProgress | undefined> {
  const pods = await kube.list(PODS, namespace, `job-name=${jobName}`);
  const running = pods.find((p) => (p.status as { phase?: string } | undefined)?.phase === 'Running');
  if (!running) return undefined;
  return parse(await kube.podLog(namespace, running.metadata.name ?? '', MOVER_CONTAINER, 20));
}
