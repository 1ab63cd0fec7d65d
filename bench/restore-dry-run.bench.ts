// The dry run of a restore beside the restore itself: a dry run asks the target about every object (a dryRun=All
// create each, so the target's admission, validation, defaulting and pruning answer) and writes nothing; the restore
// then writes them. Both run from S3 into the same fresh, empty cluster process (the dry run first, as a user runs
// them), each in a client process of its own; rounds alternate fresh targets and the best of each is kept.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startS3Server } from '../tests/support/s3/server.ts';
import { type S3Target } from './support/client.ts';
import { runClient, startClusterProcess, type ClusterProcess } from './support/processes.ts';
import { runRestoreClient, type RestoreResult } from './restore.bench.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const BUCKET = 'bench';
const round2 = (x: number) => Math.round(x * 100) / 100;

export default async function restoreDryRunBench(opts: BenchOptions): Promise<BenchRow[]> {
  const profiles = opts.quick ? Math.min(opts.profiles, 50) : opts.profiles;
  const rounds = opts.quick ? 1 : 2;
  const s3Server = await startS3Server({ buckets: [BUCKET] });
  const clusters: ClusterProcess[] = [];
  const cluster = async (name: string, withProfiles: number) => {
    const c = await startClusterProcess(join(opts.workDir, `${name}.kubeconfig`), withProfiles, 3);
    clusters.push(c);
    return c;
  };
  try {
    const s3: S3Target = { endpoint: s3Server.endpoint, accessKeyId: s3Server.accessKeyId, secretAccessKey: s3Server.secretAccessKey, bucket: BUCKET };
    const s3File = join(opts.workDir, 's3.json');
    writeFileSync(s3File, JSON.stringify(s3));
    const source = await cluster('source', profiles);
    const backup = await runClient('backup', source.kubeconfigPath, s3File);
    await source.stop();
    const backupId = backup.backupId!;
    let dry: RestoreResult | undefined;
    let real: RestoreResult | undefined;
    for (let round = 0; round < rounds; round++) {
      const target = await cluster(`target-${round}`, 0);
      const dryRun = await runRestoreClient(target.kubeconfigPath, s3File, backupId, true);
      const restore = await runRestoreClient(target.kubeconfigPath, s3File, backupId);
      await target.stop();
      if (dryRun.objects !== restore.objects) throw new Error(`the dry run planned ${dryRun.objects} creates, the restore made ${restore.objects}: not the same objects`);
      if (!dry || dryRun.ms < dry.ms) dry = dryRun;
      if (!real || restore.ms < real.ms) real = restore;
    }
    const note = `P=${profiles}, ${real!.objects} objects into a fresh empty cluster process, best of ${rounds}`;
    return [
      { bench: 'restore-dry-run', metric: 'dry run (dryRun=All per object, nothing written)', value: dry!.ms, unit: 'ms', note: `preflight ${dry!.preflightMs} ms; ${note}` },
      { bench: 'restore-dry-run', metric: 'restore', value: real!.ms, unit: 'ms', note: `preflight ${real!.preflightMs} ms; ${note}` },
      { bench: 'restore-dry-run', metric: 'dry run time / restore time', value: round2(dry!.ms / real!.ms), unit: 'ratio', note },
    ];
  } finally {
    for (const c of clusters) await c.stop().catch(() => undefined);
    await s3Server.stop();
  }
}
