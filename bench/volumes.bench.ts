// Volume copy throughput through the mover Jobs (Secret + Job + Pod + read-only view + the mover's rclone copy, run by
// the simulated kubelet) against a direct `rclone copy` of the same tree to the same s3rver, in the same run, with the
// same rclone flags and settings as the mover's. The S3 is HTTPS unless `--s3 http` (bench/support/bench-s3.ts), the
// mover trusting its CA from the run's Secret, the direct copy from the same PEM as RCLONE_CA_CERT, as the Job's is set.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newBackupId } from '../src/store/layout.ts';
import { MOVER_COPY_FLAGS } from '../src/volumes/job.ts';
import { backupVolumes } from '../src/volumes/mover.ts';
import { REMOTE_NAME, rcloneBehaviourEnv, rcloneRemoteEnv } from '../src/volumes/rclone-env.ts';
import type { MoverS3Settings } from '../src/volumes/settings.ts';
import { createBoundPvc, startVolumeCluster, writeWorkspace } from '../tests/volumes/helpers.ts';
import { startBenchS3 } from './support/bench-s3.ts';
import type { BenchOptions, BenchRow } from './types.ts';
import { resticSideBySide } from './volumes-restic.ts';

const MIB = 1024 * 1024;

/**
 * `rclone copy` of the tree with exactly the mover's flags (MOVER_COPY_FLAGS) and settings (the same remote definition
 * and behaviour env the Job gets from its Secret and spec), to `<bucket>/kubeflow/direct`. Like the Job's container
 * it runs in a session of its own (detached), so the kernel's per-session CPU grouping treats both sides alike.
 */
function directCopy(from: string, s3: MoverS3Settings, scratch: string, caFile: string | undefined): Promise<number | undefined> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...rcloneRemoteEnv(s3),
    ...rcloneBehaviourEnv(),
    HOME: scratch,
    RCLONE_CACHE_DIR: join(scratch, 'rclone-cache'),
    // the store's CA as the Job gets it (src/jobs/template.ts: RCLONE_CA_CERT at the mounted store CA)
    ...(caFile ? { RCLONE_CA_CERT: caFile } : {}),
  };
  return new Promise((resolve, reject) => {
    const child = spawn('rclone', ['copy', ...MOVER_COPY_FLAGS, from, `${REMOTE_NAME}:${s3.bucket}/kubeflow/direct`], {
      env, stdio: ['ignore', 'ignore', 'pipe'], detached: true,
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4096); });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(copySeconds(err)) : reject(new Error(`direct rclone copy failed: ${err.trim()}`))));
  });
}

/** rclone's own elapsed time for the copy, from the last JSON stats line of its log (the mover's outcome has the same). */
function copySeconds(log: string): number | undefined {
  const line = log.split('\n').filter((l) => l.includes('"stats"')).at(-1);
  try {
    const elapsed = (JSON.parse(line ?? '') as { stats?: { elapsedTime?: unknown } }).stats?.elapsedTime;
    return typeof elapsed === 'number' ? elapsed : undefined;
  } catch {
    return undefined;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Untimed, before each measured copy: the previous copy's (or the tree's) dirty pages are written back, not billed to the next. */
function flushWrites(): void {
  spawnSync('sync', { stdio: 'ignore' });
}

export default async function volumesBench(opts: BenchOptions): Promise<BenchRow[]> {
  const throughput = await rcloneJobThroughput(opts);
  return [...throughput, ...await resticSideBySide(opts)];
}

async function rcloneJobThroughput(opts: BenchOptions): Promise<BenchRow[]> {
  // Large enough that per-Job costs (Secret, Job and Pod lifecycle: ~0.1-0.2 s a Job here once warm, the row 'mover Job
  // time outside rclone') weigh as they would on real volumes.
  const bigBytes = (opts.quick ? 16 : 256) * MIB;
  // An even number of rounds: each side goes first in half of them (the machine is shared and noisy; order mattered).
  const rounds = opts.quick ? 2 : 4;
  // A fresh bucket per measured copy: s3rver slows down as a bucket fills, which would favour whichever side ran first.
  const buckets = ['warm-up', ...Array.from({ length: rounds }, (_, i) => [`jobs-${i}`, `direct-${i}`]).flat()];
  const store = await startBenchS3({ buckets, scheme: opts.s3Scheme ?? 'https' });
  // Read-only bind mounts (the kubelet's default where the machine allows them): a private copy of the tree would be the
  // simulator's cost, not the mover's (a real kubelet mounts read-only for free).
  const vc = await startVolumeCluster({ bindingMode: 'Immediate', readOnlyViews: 'bind-mount' });
  const scratch = mkdtempSync(join(tmpdir(), 'bench-direct-rclone-'));
  try {
    const folder = await createBoundPvc(vc, 'alice', 'workspace');
    writeWorkspace(folder, { files: 200, bigFileBytes: bigBytes });
    let jobsBest = Infinity;
    let directBest = Infinity;
    let bytes = 0;
    // Time outside rclone's own copy (wall time minus rclone's elapsedTime), per copy: the fixed cost of each side,
    // much steadier on a shared machine than the copies themselves.
    const jobsOutside: number[] = [];
    const jobsMs: number[] = [];
    const directMs: number[] = [];
    const directOutside: number[] = [];
    let lastMoverMessage = '';
    const unsubscribe = vc.cluster.api.subscribe((event) => {
      if (event.ref.resource !== 'pods') return;
      const statuses = (event.object.status as { containerStatuses?: { state?: { terminated?: { message?: string } } }[] } | undefined)?.containerStatuses;
      const message = statuses?.[0]?.state?.terminated?.message;
      if (message) lastMoverMessage = message;
    });
    const viaJobs = async (round: number) => {
      flushWrites();
      lastMoverMessage = '';
      const t0 = performance.now();
      const [result] = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: store.settings(`jobs-${round}`), pvcs: [{ namespace: 'alice', name: 'workspace' }], concurrency: 1 });
      const ms = performance.now() - t0;
      jobsMs[round] = ms;
      jobsBest = Math.min(jobsBest, ms);
      bytes = result?.bytes ?? 0;
      const copy = lastMoverMessage ? copySeconds(JSON.stringify((JSON.parse(lastMoverMessage) as { copy?: unknown }).copy ?? {})) : undefined;
      if (copy !== undefined) jobsOutside.push(ms - copy * 1000);
    };
    const direct = async (round: number) => {
      flushWrites();
      const t0 = performance.now();
      const copy = await directCopy(folder, store.settings(`direct-${round}`), scratch, store.caFile);
      const ms = performance.now() - t0;
      directMs[round] = ms;
      directBest = Math.min(directBest, ms);
      if (copy !== undefined) directOutside.push(ms - copy * 1000);
    };
    // One untimed copy each way first: the process's first copy ran ~20% slower whichever side made it (s3rver, the API
    // server and the kubelet are JavaScript in this process and start cold), and the Jobs always made it.
    await backupVolumes(vc.kube, { backupId: newBackupId(), s3: store.settings('warm-up'), pvcs: [{ namespace: 'alice', name: 'workspace' }], concurrency: 1 });
    await directCopy(folder, store.settings('warm-up'), scratch, store.caFile);
    // Alternating rounds, each to a fresh bucket, so both sides see the same server state and machine load; the order
    // within a round alternates too.
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? [viaJobs, direct] : [direct, viaJobs]) await side(round);
    }
    unsubscribe();
    const jobsRate = bytes / MIB / (jobsBest / 1000);
    const directRate = bytes / MIB / (directBest / 1000);
    const ratio = jobsRate / directRate;
    // The two copies of a round run back to back, so they share the machine's load far more than two best-of times do.
    const paired = median(jobsMs.map((ms, round) => directMs[round]! / ms));
    const note = `S3 over ${store.scheme}; ${(bytes / MIB).toFixed(1)} MiB in 200+ files; best of ${rounds} after an untimed warm-up copy each, alternating order; same rclone flags both sides; the Jobs include Secret, Job/Pod lifecycle and the kubelet's read-only view`;
    return [
      { bench: 'volumes', metric: 'mover Job throughput', value: Number(jobsRate.toFixed(1)), unit: 'MiB/s', note },
      { bench: 'volumes', metric: 'direct rclone copy throughput', value: Number(directRate.toFixed(1)), unit: 'MiB/s' },
      { bench: 'volumes', metric: 'Job / direct throughput', value: Number(ratio.toFixed(2)), unit: 'ratio', target: '>= 0.9', verdict: ratio >= 0.9 ? 'met' : 'missed' },
      {
        bench: 'volumes', metric: 'Job / direct throughput, paired', value: Number(paired.toFixed(2)), unit: 'ratio',
        note: `median over the ${rounds} rounds of direct time / Job time within the round: ${jobsMs.map((ms, round) => (directMs[round]! / ms).toFixed(2)).join(', ')}`,
      },
      {
        bench: 'volumes', metric: 'mover Job time outside rclone', value: Math.round(median(jobsOutside)), unit: 'ms',
        note: `median per copy of wall time minus rclone's own elapsed time; the direct copy's: ${Math.round(median(directOutside))} ms (rclone start and exit)`,
      },
    ];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await vc.stop();
    await store.stop();
  }
}
