// Volume copy throughput through the mover Jobs (Job + Pod + read-only view + rclone copy/check/size, run by the
// simulated kubelet) against a direct `rclone copy` of the same tree to the same s3rver, in the same run.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { newBackupId } from '../src/store/layout.ts';
import { backupVolumes } from '../src/volumes/mover.ts';
import { startS3Server } from '../tests/support/s3/server.ts';
import { createBoundPvc, s3For, startVolumeCluster, writeWorkspace } from '../tests/volumes/helpers.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const MIB = 1024 * 1024;

function directCopy(from: string, endpoint: string, key: string, secret: string, target: string): Promise<void> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: join(from, '..'),
    RCLONE_CONFIG_DIRECT_TYPE: 's3', RCLONE_CONFIG_DIRECT_PROVIDER: 'Other', RCLONE_CONFIG_DIRECT_ENV_AUTH: 'false',
    RCLONE_CONFIG_DIRECT_ACCESS_KEY_ID: key, RCLONE_CONFIG_DIRECT_SECRET_ACCESS_KEY: secret,
    RCLONE_CONFIG_DIRECT_ENDPOINT: endpoint, RCLONE_CONFIG_DIRECT_FORCE_PATH_STYLE: 'true',
    RCLONE_CONFIG_DIRECT_NO_CHECK_BUCKET: 'true', RCLONE_CONFIG_DIRECT_REGION: 'us-east-1',
    RCLONE_LINKS: 'true', RCLONE_FAST_LIST: 'true', RCLONE_LOG_LEVEL: 'ERROR', RCLONE_TRANSFERS: '8', RCLONE_CHECKERS: '16',
  };
  return new Promise((resolve, reject) => {
    const child = spawn('rclone', ['copy', from, `direct:${target}`], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`direct rclone copy failed: ${err.trim()}`))));
  });
}

export default async function volumesBench(opts: BenchOptions): Promise<BenchRow[]> {
  // Large enough that per-Job costs (Secret, Job and Pod lifecycle, ~0.5 s here) weigh as they would on real volumes.
  const bigBytes = (opts.quick ? 16 : 256) * MIB;
  const rounds = opts.quick ? 2 : 3;
  // A fresh bucket per measured copy: s3rver slows down as a bucket fills, which would favour whichever side ran first.
  const buckets = Array.from({ length: rounds }, (_, i) => [`jobs-${i}`, `direct-${i}`]).flat();
  const s3 = await startS3Server({ buckets });
  // Read-only bind mounts where the machine allows them: a private copy of the tree would be the simulator's cost, not
  // the mover's (a real kubelet mounts read-only for free).
  const vc = await startVolumeCluster({ bindingMode: 'Immediate', readOnlyViews: 'bind-mount' });
  try {
    const folder = await createBoundPvc(vc, 'alice', 'workspace');
    writeWorkspace(folder, { files: 200, bigFileBytes: bigBytes });
    let jobsBest = Infinity;
    let directBest = Infinity;
    let bytes = 0;
    // Alternating rounds, each to a fresh prefix, so both sides see the same server state and machine load.
    for (let round = 0; round < rounds; round++) {
      const t0 = performance.now();
      const [result] = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: s3For(s3, `jobs-${round}`), pvcs: [{ namespace: 'alice', name: 'workspace' }], concurrency: 1 });
      jobsBest = Math.min(jobsBest, performance.now() - t0);
      bytes = result?.bytes ?? 0;
      const t1 = performance.now();
      await directCopy(folder, s3.endpoint, s3.accessKeyId, s3.secretAccessKey, `direct-${round}/kubeflow/direct`);
      directBest = Math.min(directBest, performance.now() - t1);
    }
    const jobsRate = bytes / MIB / (jobsBest / 1000);
    const directRate = bytes / MIB / (directBest / 1000);
    const ratio = jobsRate / directRate;
    const note = `${(bytes / MIB).toFixed(1)} MiB in 200+ files; best of ${rounds}; the Jobs include Secret, Job/Pod lifecycle and the kubelet's read-only view`;
    return [
      { bench: 'volumes', metric: 'mover Job throughput', value: Number(jobsRate.toFixed(1)), unit: 'MiB/s', note },
      { bench: 'volumes', metric: 'direct rclone copy throughput', value: Number(directRate.toFixed(1)), unit: 'MiB/s' },
      { bench: 'volumes', metric: 'Job / direct throughput', value: Number(ratio.toFixed(2)), unit: 'ratio', target: '>= 0.9', verdict: ratio >= 0.9 ? 'met' : 'missed' },
    ];
  } finally {
    await vc.stop();
    await s3.stop();
  }
}
