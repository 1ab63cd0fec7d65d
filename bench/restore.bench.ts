// Restore into an empty cluster against the raw rate of concurrently CREATEing the same objects at the same client
// concurrency, in the same run (issue 5's target: ≥ 0.8). Like bench/scale, the embedded cluster runs in its own
// process and every measured client in another, so neither shares an event loop with the other or with the runner.
//   raw:  bench/support/client.ts raw-create: the archive's objects read before the clock starts; then Profiles,
//         the wait for their namespaces (the profile controller must run), then everything else unordered, 32 in
//         flight over a client of concurrency 16.
//   ours: runRestore from S3 (this file run as a client: `node --import tsx bench/restore.bench.ts restore
//         <kubeconfig> <s3.json> <backup-id>`), preflight included: reading and verifying the archive is part of
//         what a user waits for; its share is reported beside the rate.
// Both create the same objects (checked) into their own fresh empty cluster; rounds alternate raw and ours and the
// best of each is kept, because the machine is shared and single runs disagree by 2×.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { execa } from 'execa';
import { KubeClient } from '../src/kube/client.ts';
import { ObjectStore } from '../src/store/objects.ts';
import { S3BackupStore } from '../src/store/backup-store.ts';
import { runRestore } from '../src/restore/engine.ts';
import { startS3Server } from '../tests/support/s3/server.ts';
import { CONCURRENCY, PAGE_SIZE, type ClientResult, type S3Target } from './support/client.ts';
import { runClient, startClusterProcess, type ClusterProcess } from './support/processes.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const BUCKET = 'bench';
const node = join(process.cwd(), 'node_modules/.bin/node');

export interface RestoreResult extends ClientResult {
  /** from the start until the preflight said the backup was verified */
  preflightMs: number;
}

/** The measured restore client: prints one JSON line, RestoreResult. */
async function restoreClient(kubeconfig: string, s3File: string, backupId: string, dryRun: boolean): Promise<void> {
  const s3 = JSON.parse(readFileSync(s3File, 'utf8')) as S3Target;
  // the same bucket and prefix as bench/support/client.ts, whose backup this restores
  const store = new S3BackupStore(new ObjectStore({
    client: new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } }),
    bucket: s3.bucket, prefix: 'bench',
  }));
  const kube = await KubeClient.load({ kubeconfig, concurrency: CONCURRENCY, pageSize: PAGE_SIZE });
  try {
    let preflightMs = Number.NaN;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const outcome = await runRestore(kube, store, {
      backupId, waitTimeoutMs: 600_000, dryRun,
      progress: (message) => { if (Number.isNaN(preflightMs) && message.includes('verified')) preflightMs = performance.now() - started; },
    });
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    const result: RestoreResult = {
      mode: 'restore', ms: Math.round(ms), preflightMs: Math.round(preflightMs), objects: outcome.totals.created,
      peakRssMiB: peak ? Math.round(Number(peak[1]) / 1024) : Number.NaN,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000), requests: kube.requestPurposes(), waits: outcome.waits,
    };
    if (outcome.totals.failed > 0) throw new Error(`the restore failed ${outcome.totals.failed} objects: ${outcome.failures.slice(0, 3).join('; ')}`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    kube.close();
  }
}

/** one measured restore (or, with dryRun, its dry run) in a client process of its own */
export async function runRestoreClient(kubeconfig: string, s3File: string, backupId: string, dryRun = false): Promise<RestoreResult> {
  const { stdout } = await execa(node, ['--import', 'tsx', 'bench/restore.bench.ts', dryRun ? 'dry-run' : 'restore', kubeconfig, s3File, backupId], { stderr: 'inherit' });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as RestoreResult;
}

const rate = (objects: number, ms: number) => Math.round(objects / (ms / 1000));
const round2 = (x: number) => Math.round(x * 100) / 100;

export default async function restoreBench(opts: BenchOptions): Promise<BenchRow[]> {
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

    let raw: ClientResult | undefined;
    let ours: RestoreResult | undefined;
    for (let round = 0; round < rounds; round++) {
      const rawTarget = await cluster(`raw-${round}`, 0);
      const rawRun = await runClient('raw-create', rawTarget.kubeconfigPath, s3File, backupId);
      await rawTarget.stop();
      const target = await cluster(`restore-${round}`, 0);
      const ourRun = await runRestoreClient(target.kubeconfigPath, s3File, backupId);
      await target.stop();
      if (ourRun.objects !== rawRun.objects) throw new Error(`the restore created ${ourRun.objects} objects, raw CREATE ${rawRun.objects}: not the same objects`);
      if (!raw || rawRun.ms < raw.ms) raw = rawRun;
      if (!ours || ourRun.ms < ours.ms) ours = ourRun;
    }
    const rawRate = rate(raw!.objects, raw!.ms);
    const ourRate = rate(ours!.objects, ours!.ms);
    const ratio = ourRate / rawRate;
    const note = `P=${profiles}, ${raw!.objects} objects into an empty cluster process, concurrency ${CONCURRENCY} (${CONCURRENCY * 2} in flight), best of ${rounds} alternated`;
    return [
      { bench: 'restore', metric: 'raw concurrent CREATE (Profiles, namespace wait, the rest)', value: rawRate, unit: 'objects/s', note: `${raw!.ms} ms; ${note}` },
      { bench: 'restore', metric: 'restore into an empty cluster (runRestore from S3)', value: ourRate, unit: 'objects/s', note: `${ours!.ms} ms, of which preflight ${ours!.preflightMs} ms; ${note}` },
      { bench: 'restore', metric: 'restore rate / raw CREATE rate', value: round2(ratio), unit: 'ratio', target: '>= 0.8', verdict: ratio >= 0.8 ? 'met' : 'missed', note },
      { bench: 'restore', metric: 'restore peak RSS', value: ours!.peakRssMiB, unit: 'MiB', note: `P=${profiles}, VmHWM of the restore process, which runs through tsx without the engines' V8 flags (bench/scale measures the shipped bundle)` },
    ];
  } finally {
    for (const c of clusters) await c.stop().catch(() => undefined);
    await s3Server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, kubeconfig, s3File, backupId] = process.argv.slice(2);
  if ((mode !== 'restore' && mode !== 'dry-run') || !kubeconfig || !s3File || !backupId) throw new Error('usage: restore.bench.ts restore|dry-run <kubeconfig> <s3.json> <backup-id>');
  await restoreClient(kubeconfig, s3File, backupId, mode === 'dry-run');
}
