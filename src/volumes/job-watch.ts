// A running mover's progress: rclone's stats (or restic's status lines) in its Pod's log, read while the Job's own watch waits for it to finish
// (the start and the end are the hardened Job's watcher's, src/jobs/watch.ts).
import type { KubeObject } from '../kube/types.ts';
import { MOVER_CONTAINER } from './job.ts';
import { PODS, type VolumeKube } from './kube-port.ts';
import { parseCopyProgress, type CopyProgress } from './outcome.ts';
import { sleep } from '../jobs/watch.ts';

/**
 * Waits for the Job to finish, reading its running Pod's log (the last `tailLines`) every `intervalMs` meanwhile: each
 * time what `read` finds there differs from what was reported before (by `keyOf`), it is reported. A log that cannot
 * be read is only a missed line. The movers' copy progress and restic check's progress both follow a Job so.
 */
export async function followJobLog<T>(
  kube: VolumeKube, namespace: string, jobName: string, finishing: Promise<KubeObject | undefined>, intervalMs: number,
  watch: { read: (log: string) => T | undefined; keyOf: (value: T) => string; report: (value: T) => void; tailLines: number },
): Promise<KubeObject | undefined> {
  let settled = false;
  const ended = finishing.then(() => { settled = true; }, () => { settled = true; });
  let last = '';
  while (!settled) {
    await Promise.race([sleep(intervalMs), ended]);
    if (settled) break;
    const value = await latestLog(kube, namespace, jobName, watch.tailLines).then((log) => (log === undefined ? undefined : watch.read(log))).catch(() => undefined);
    if (value === undefined) continue;
    const key = watch.keyOf(value);
    if (key === last) continue;
    last = key;
    watch.report(value);
  }
  return finishing;
}

/**
 * A mover's copy progress: rclone's latest stats (or restic's status lines, with `parse`), per PVC; the Job runs in
 * `jobNamespace` (the PVC's own, or the model's when it fills a claim there to hand over: ./rebind.ts).
 */
export function followUntilFinished(
  kube: VolumeKube, pvc: { namespace: string; name: string }, jobName: string, finishing: Promise<KubeObject | undefined>,
  intervalMs: number, report: (copying: CopyProgress & { namespace: string; pvc: string }) => void,
  parse: (log: string) => CopyProgress | undefined = parseCopyProgress,
  jobNamespace: string = pvc.namespace,
): Promise<KubeObject | undefined> {
  return followJobLog(kube, jobNamespace, jobName, finishing, intervalMs, {
    read: parse, keyOf: (stats) => `${stats.files}/${stats.bytes}`, tailLines: 20,
    report: (stats) => report({ namespace: pvc.namespace, pvc: pvc.name, ...stats }),
  });
}

async function latestLog(kube: VolumeKube, namespace: string, jobName: string, tailLines: number): Promise<string | undefined> {
  const pods = await kube.list(PODS, namespace, `job-name=${jobName}`);
  const running = pods.find((p) => (p.status as { phase?: string } | undefined)?.phase === 'Running');
  if (!running) return undefined;
  return kube.podLog(namespace, running.metadata.name ?? '', MOVER_CONTAINER, tailLines);
}
