// Before/after rounds of the scale bench (issue 34 "Done when": the bench beside the code before the change, in
// alternated rounds). The code before a change and the code after it each have their client bundle; both run against
// the same embedded cluster process (this checkout's: the server is the instrument, not what is compared), round after
// round, the order swapped every round (A B, B A, …), so load that comes and goes on a shared machine falls on both.
//   npm run bench:alternate -- --before <git revision> [--after <git revision>] [--profiles 1000] [--rounds 3] [--ordered]
// Without --after, "after" is this checkout as it is on disk, uncommitted changes included. Each round records the
// load average, and per side: backup and restore wall time, the client's CPU per 1,000 objects and its peak RSS, and
// the raw LIST and raw CREATE of the same round for the ratios. The summary gives per-round after/before ratios and
// their median. Rows also go to .bench/alternate-P<profiles>.json.
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startS3Server } from '../tests/support/s3/server.ts';
import { clientBundle } from './support/bundle.ts';
import type { ClientResult, S3Target } from './support/client.ts';
import { runClient, startClusterProcess, type ClientBuild, type ClusterProcess } from './support/processes.ts';
import { treeCpuSeconds } from './cpu.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUCKET = 'bench';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run bench:alternate -- --before <revision> [--after <revision>] [--profiles N] [--rounds N] [--skip-backup] [--skip-restore] [--after-first] [--ordered]\n`);
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: {
      before: { type: 'string' },
      after: { type: 'string' },
      profiles: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '3' },
      'skip-backup': { type: 'boolean', default: false },
      'skip-restore': { type: 'boolean', default: false },
      // which side runs first in the first round (a second run can then start where the first one's order would go on)
      'after-first': { type: 'boolean', default: false },
      // raw CREATE in the restore's order too (bench/support/client.ts raw-create-ordered), each round
      ordered: { type: 'boolean', default: false },
    },
  }).values;
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
if (!args.before) usage('--before is required: the git revision of the code before the change.');
const profiles = Number(args.profiles);
const rounds = Number(args.rounds);
if (!Number.isInteger(profiles) || profiles < 1) usage(`--profiles must be a positive whole number, not "${args.profiles}".`);
if (!Number.isInteger(rounds) || rounds < 1) usage(`--rounds must be a positive whole number, not "${args.rounds}".`);

interface Side {
  label: 'before' | 'after';
  revision: string;
  build: ClientBuild;
}

/** A revision's tree exported into a scratch folder (git archive: no worktree is registered), its client built. */
async function exported(revision: string, label: 'before' | 'after', scratch: string): Promise<Side> {
  const { stdout: commit } = await execa('git', ['-C', root, 'rev-parse', '--short', `${revision}^{commit}`]);
  const dir = join(scratch, label);
  mkdirSync(dir);
  await execa('sh', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'sh', root, commit, dir]);
  // the same dependencies as this checkout (the lock file is compared below: a different one is a different product)
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  const { stdout: lockDiff } = await execa('git', ['-C', root, 'diff', '--stat', commit, '--', 'package-lock.json']);
  if (lockDiff.trim()) process.stderr.write(`note: package-lock.json differs between ${commit} and this checkout; ${label} is bundled with this checkout's node_modules\n`);
  return { label, revision: commit, build: await buildOf(dir, `${label}-${commit}`) };
}

async function buildOf(dir: string, label: string): Promise<ClientBuild> {
  // each side runs with the V8 flags and environment its own code ships with
  const flags = (await import(pathToFileURL(join(dir, 'src', 'node-flags.ts')).href)) as { ENGINE_NODE_FLAGS: readonly string[]; ENGINE_ENV: Record<string, string> };
  return { bundle: await clientBundle({ dir, label }), flags: flags.ENGINE_NODE_FLAGS, env: flags.ENGINE_ENV };
}

async function workingTree(): Promise<Side> {
  const { stdout: head } = await execa('git', ['-C', root, 'rev-parse', '--short', 'HEAD']);
  const { stdout: dirty } = await execa('git', ['-C', root, 'status', '--porcelain', '--', 'src', 'bench', 'package-lock.json']);
  return { label: 'after', revision: dirty.trim() ? `${head}+changes` : head, build: await buildOf(root, 'working-tree') };
}

interface Measured extends ClientResult {
  serverCpuMs: number;
}

interface Round {
  round: number;
  order: string;
  load: [number, number, number];
  rawList?: Measured;
  rawCreate?: Measured;
  rawCreateOrdered?: Measured;
  backup: Partial<Record<Side['label'], Measured>>;
  restore: Partial<Record<Side['label'], Measured>>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const r2 = (x: number) => Math.round(x * 100) / 100;
const load = (): [number, number, number] => loadavg().map((x) => r2(x)) as [number, number, number];

async function measured(cluster: ClusterProcess, mode: string, s3File: string, backupId: string | undefined, build: ClientBuild | undefined): Promise<Measured> {
  const writesBefore = process.env.KFU_BENCH_WRITES ? await clusterRevision(cluster) : undefined;
  const before = treeCpuSeconds(cluster.pid);
  // for the client's opt-in timeline (KFU_BENCH_TIMELINE): the cluster's CPU per 100 ms
  process.env.KFU_BENCH_SERVER_PID = String(cluster.pid);
  const run = await runClient(mode, cluster.kubeconfigPath, s3File, backupId, build);
  const serverCpuMs = Math.round((treeCpuSeconds(cluster.pid) - before) * 1000);
  if (writesBefore !== undefined) {
    // the cluster's writes (its resourceVersion) during the client's run, and once its controllers had 5 s more
    const atExit = (await clusterRevision(cluster)) - writesBefore;
    await new Promise((resolve) => setTimeout(resolve, 5000));
    process.stderr.write(`${mode}${build ? ` (${build.bundle.split('/').pop()})` : ''}: cluster writes during the run ${atExit}, 5 s later ${(await clusterRevision(cluster)) - writesBefore}\n`);
  }
  return { ...run, serverCpuMs };
}

/** the embedded cluster's resourceVersion now (a LIST's), read with the kubeconfig the clients use */
async function clusterRevision(cluster: ClusterProcess): Promise<number> {
  const { KubeClient } = await import('../src/kube/client.ts');
  const kube = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
  try {
    const namespaces = (await kube.findByResource('', 'namespaces'))!;
    return Number((await kube.listAll(namespaces, { limit: 1 } as never)).resourceVersion);
  } finally {
    kube.close();
  }
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-alternate-'));
const s3Server = await startS3Server({ buckets: [BUCKET] });
const clusters: ClusterProcess[] = [];
const results: Round[] = [];
let sides: [Side, Side] | undefined;
try {
  sides = [await exported(args.before, 'before', scratch), args.after ? await exported(args.after, 'after', scratch) : await workingTree()];
  process.stderr.write(`before = ${sides[0].revision}, after = ${sides[1].revision}, P=${profiles}, ${rounds} round(s)\n`);
  const s3: S3Target = { endpoint: s3Server.endpoint, accessKeyId: s3Server.accessKeyId, secretAccessKey: s3Server.secretAccessKey, bucket: BUCKET };
  const s3File = join(scratch, 's3.json');
  writeFileSync(s3File, JSON.stringify(s3));
  const source = await startClusterProcess(join(scratch, 'source.kubeconfig'), profiles);
  clusters.push(source);
  process.stderr.write(`source cluster ready: ${source.objects} objects in ${r2(source.readySeconds)} s\n`);
  // every restore restores the same archive: the first backup made by the code before the change
  let archive: string | undefined;
  for (let round = 0; round < rounds; round++) {
    const order = (round + (args['after-first'] ? 1 : 0)) % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
    const entry: Round = { round: round + 1, order: order.map((s) => s.label).join(' '), load: load(), backup: {}, restore: {} };
    if (!args['skip-backup'] || archive === undefined) {
      entry.rawList = await measured(source, 'raw-list', s3File, undefined, undefined);
      for (const side of order) {
        const run = await measured(source, 'backup', s3File, undefined, side.build);
        if (!args['skip-backup']) entry.backup[side.label] = run;
        if (side.label === 'before') archive ??= run.backupId;
      }
    }
    if (!args['skip-restore']) {
      // raw CREATE (and with --ordered, raw CREATE in the restore's order) and each side into a fresh empty cluster
      // of their own, raw CREATE first
      const raws = args.ordered ? ['raw-create', 'raw-create-ordered'] : ['raw-create'];
      for (const contender of [...raws, ...order]) {
        const side = typeof contender === 'string' ? undefined : contender;
        const mode = side ? 'restore' : (contender as string);
        const target = await startClusterProcess(join(scratch, `target-${round}-${side?.label ?? mode}.kubeconfig`), 0);
        clusters.push(target);
        const run = await measured(target, mode, s3File, archive, side?.build);
        await target.stop();
        if (side) entry.restore[side.label] = run;
        else if (mode === 'raw-create') entry.rawCreate = run;
        else entry.rawCreateOrdered = run;
      }
    }
    entry.load = load().map((x, i) => Math.max(x, entry.load[i]!)) as [number, number, number];
    results.push(entry);
    process.stderr.write(`${describeRound(entry)}\n`);
  }
} finally {
  for (const c of clusters) await c.stop().catch(() => undefined);
  await s3Server.stop();
  rmSync(scratch, { recursive: true, force: true });
}

function describeRound(r: Round): string {
  const parts = [`round ${r.round} (${r.order}; load average up to ${r.load.join(' / ')})`];
  for (const label of ['before', 'after'] as const) {
    const b = r.backup[label];
    const s = r.restore[label];
    if (b) parts.push(`${label} backup ${b.ms} ms (${r2(b.ms / r.rawList!.ms)}× raw LIST, ${perThousand(b.cpuMs, r.rawList!.objects)} ms CPU/1k listed, ${b.peakRssMiB} MiB)`);
    if (s) parts.push(`${label} restore ${s.ms} ms (${r2(r.rawCreate!.ms / s.ms)} of raw CREATE's rate${r.rawCreateOrdered ? `, ${r2(r.rawCreateOrdered.ms / s.ms)} of raw CREATE's in the restore's order` : ''}, ${perThousand(s.cpuMs, s.objects)} ms CPU/1k, ${s.peakRssMiB} MiB; preflight ${s.preflightMs ?? '?'} ms; requests ${describeRequests(s.requests)})`);
  }
  if (r.rawCreate) parts.push(`raw CREATE ${r.rawCreate.ms} ms (requests ${describeRequests(r.rawCreate.requests)})`);
  return parts.join('\n  ');
}

/** the purposes a run sent requests for, with their counts (src/kube/counters.ts) */
function describeRequests(requests: Measured['requests'] | undefined): string {
  if (!requests) return 'not counted';
  return Object.entries(requests).filter(([, n]) => n > 0).map(([purpose, n]) => `${purpose} ${n}`).join(', ');
}

function perThousand(ms: number, objects: number): number {
  return Math.round((ms * 1000) / objects);
}

/** per-round values of one figure, and their median */
function series(pick: (r: Round) => number | undefined): { rounds: number[]; median: number } {
  const values = results.map(pick).filter((x): x is number => x !== undefined && Number.isFinite(x)).map(r2);
  return { rounds: values, median: r2(median(values)) };
}

const summary = {
  at: new Date().toISOString(),
  profiles,
  before: sides![0].revision,
  after: sides![1].revision,
  loadAverage: results.map((r) => r.load),
  backup: args['skip-backup'] ? undefined : {
    'after / before (time)': series((r) => r.backup.after && r.backup.before && r.backup.after.ms / r.backup.before.ms),
    'before: backup / raw LIST': series((r) => r.backup.before && r.backup.before.ms / r.rawList!.ms),
    'after: backup / raw LIST': series((r) => r.backup.after && r.backup.after.ms / r.rawList!.ms),
    'before: client CPU per 1,000 listed (ms)': series((r) => r.backup.before && (r.backup.before.cpuMs * 1000) / r.rawList!.objects),
    'after: client CPU per 1,000 listed (ms)': series((r) => r.backup.after && (r.backup.after.cpuMs * 1000) / r.rawList!.objects),
    'raw LIST: client CPU per 1,000 listed (ms)': series((r) => r.rawList && (r.rawList.cpuMs * 1000) / r.rawList.objects),
    'before: peak RSS (MiB)': series((r) => r.backup.before?.peakRssMiB),
    'after: peak RSS (MiB)': series((r) => r.backup.after?.peakRssMiB),
  },
  restore: args['skip-restore'] ? undefined : {
    'after / before (time)': series((r) => r.restore.after && r.restore.before && r.restore.after.ms / r.restore.before.ms),
    'before: restore rate / raw CREATE rate': series((r) => r.restore.before && r.rawCreate!.ms / r.restore.before.ms),
    'after: restore rate / raw CREATE rate': series((r) => r.restore.after && r.rawCreate!.ms / r.restore.after.ms),
    'before: client CPU per 1,000 objects (ms)': series((r) => r.restore.before && (r.restore.before.cpuMs * 1000) / r.restore.before.objects),
    'after: client CPU per 1,000 objects (ms)': series((r) => r.restore.after && (r.restore.after.cpuMs * 1000) / r.restore.after.objects),
    'raw CREATE: client CPU per 1,000 objects (ms)': series((r) => r.rawCreate && (r.rawCreate.cpuMs * 1000) / r.rawCreate.objects),
    'before: server CPU per 1,000 objects (ms)': series((r) => r.restore.before && (r.restore.before.serverCpuMs * 1000) / r.restore.before.objects),
    'after: server CPU per 1,000 objects (ms)': series((r) => r.restore.after && (r.restore.after.serverCpuMs * 1000) / r.restore.after.objects),
    'raw CREATE: server CPU per 1,000 objects (ms)': series((r) => r.rawCreate && (r.rawCreate.serverCpuMs * 1000) / r.rawCreate.objects),
    ...(args.ordered ? {
      'before: restore rate / raw CREATE rate in the restore\'s order': series((r) => r.restore.before && r.rawCreateOrdered!.ms / r.restore.before.ms),
      'after: restore rate / raw CREATE rate in the restore\'s order': series((r) => r.restore.after && r.rawCreateOrdered!.ms / r.restore.after.ms),
      'raw CREATE in the restore\'s order / raw CREATE (time)': series((r) => r.rawCreate && r.rawCreateOrdered && r.rawCreateOrdered.ms / r.rawCreate.ms),
      'raw CREATE in the restore\'s order: client CPU per 1,000 objects (ms)': series((r) => r.rawCreateOrdered && (r.rawCreateOrdered.cpuMs * 1000) / r.rawCreateOrdered.objects),
      'raw CREATE in the restore\'s order: server CPU per 1,000 objects (ms)': series((r) => r.rawCreateOrdered && (r.rawCreateOrdered.serverCpuMs * 1000) / r.rawCreateOrdered.objects),
    } : {}),
    'before: peak RSS (MiB)': series((r) => r.restore.before?.peakRssMiB),
    'after: peak RSS (MiB)': series((r) => r.restore.after?.peakRssMiB),
    'before: preflight (ms)': series((r) => r.restore.before?.preflightMs),
    'after: preflight (ms)': series((r) => r.restore.after?.preflightMs),
  },
};
mkdirSync(join(root, '.bench'), { recursive: true });
writeFileSync(join(root, '.bench', `alternate-P${profiles}.json`), `${JSON.stringify({ summary, rounds: results }, null, 2)}\n`);
const lines = [`before ${summary.before}, after ${summary.after}, P=${profiles}, ${results.length} round(s); load average per round (1/5/15 min, highest seen): ${summary.loadAverage.map((l) => l.join('/')).join(', ')}`];
for (const [side, figures] of Object.entries({ backup: summary.backup, restore: summary.restore })) {
  if (!figures) continue;
  for (const [metric, s] of Object.entries(figures)) lines.push(`${side}: ${metric}: median ${s.median} (rounds: ${s.rounds.join(', ')})`);
}
process.stdout.write(`${lines.join('\n')}\n`);
