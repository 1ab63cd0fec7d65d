// One measured client run in its own process, so its peak RSS is its own (VmHWM of /proc/self/status at exit) and
// it never shares an event loop with the cluster or the bench runner. Prints one JSON line: ClientResult.
//   node --import tsx bench/support/client.ts <mode> <kubeconfig> <s3.json> [backup-id]
// The bench runs it as an esbuild bundle (bench/support/bundle.ts), built like the charm, so RSS is the product's.
// modes: backup (runBackup), raw-list (plain paginated LIST of the same kinds), restore (runRestore into the
// cluster of <kubeconfig>), raw-create (concurrent CREATE of the archive's objects at the restore's concurrency),
// raw-create-ordered (the same, with the objects taken namespace by namespace in the restore's order of kinds).
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import https from 'node:https';
import { S3Client } from '@aws-sdk/client-s3';
import { KubeConfig } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import { runBackup } from '../../src/backup/engine.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { PurposeCounts } from '../../src/kube/counters.ts';
import { resourcePath } from '../../src/kube/paths.ts';
import type { RestoreOutcome } from '../../src/restore/engine.ts';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import { stateResources } from '../../src/kubeflow/kinds.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { restoreActivity } from '../../src/restore/activity.ts';
import { S3BackupStore } from '../../src/store/backup-store.ts';

export interface S3Target {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

export interface ClientResult {
  mode: string;
  ms: number;
  objects: number;
  bytes?: number;
  backupId?: string;
  peakRssMiB: number;
  /** this process's CPU (user + system, process.cpuUsage) over the measured part, in milliseconds */
  cpuMs: number;
  /** requests sent over the measured part, by purpose (src/kube/counters.ts) */
  requests: PurposeCounts;
  /** restore only: its waits on controllers (RestoreOutcome.waits) */
  waits?: RestoreOutcome['waits'];
  /** restore only: how long its preflight took, the cluster idle meanwhile (src/restore/activity.ts) */
  preflightMs?: number;
}

/** requests in flight for every client mode: the engines' own default for api-concurrency is lower */
export const CONCURRENCY = 16;
export const PAGE_SIZE = 500;

function peakRssMiB(): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : Number.NaN;
}

function openStore(s3: S3Target): S3BackupStore {
  const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  return new S3BackupStore(new ObjectStore({ client, bucket: s3.bucket, prefix: 'bench' }));
}

type Measured = Omit<ClientResult, 'mode' | 'ms' | 'peakRssMiB' | 'cpuMs' | 'requests'>;

async function backup(kube: KubeClient, s3: S3Target): Promise<Measured> {
  const outcome = await runBackup(kube, openStore(s3), {
    // only when tracing memory: the trace's lines then say which step of the backup they fall in
    ...(process.env.KFU_BENCH_MEMORY_TRACE ? { progress: (message: string) => void (memoryPhase = message.split(/[ :;]/, 2).join(' ')) } : {}),
    kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'bench',
    profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile',
    protectedCrdGroups: ['kubeflow.org', 'tensorboard.kubeflow.org', 'serving.kserve.io'], modelNamespace: 'kubeflow',
  });
  return { objects: outcome.objects, bytes: outcome.bytes, backupId: outcome.backupId };
}

/** The limit: every page of every kind the backup lists, requested, read and parsed; nothing else. */
async function rawList(kube: KubeClient, kubeconfig: string): Promise<Measured> {
  const resources: ApiResource[] = stateResources(await kube.discover());
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const options: https.RequestOptions = {};
  await config.applyToHTTPSOptions(options);
  const base = new URL(config.getCurrentCluster()!.server);
  const agent = new https.Agent({ keepAlive: true, ca: options.ca });
  const headers = { Accept: 'application/json', ...(options.headers as Record<string, string>) };
  const get = (path: string) =>
    new Promise<{ items: unknown[]; metadata: { continue?: string } }>((resolve, reject) => {
      const request = https.request({ hostname: base.hostname, port: base.port, path, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => (response.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`${path}: ${response.statusCode}`))));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end();
    });
  let objects = 0;
  for (const resource of resources) {
    let token: string | undefined;
    do {
      const page = await get(`${resourcePath(resource)}?limit=${PAGE_SIZE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      objects += page.items.length;
      token = page.metadata.continue || undefined;
    } while (token);
  }
  agent.destroy();
  return { objects };
}

async function restore(kube: KubeClient, s3: S3Target, backupId: string): Promise<Measured> {
  const { runRestore } = await import('../../src/restore/engine.ts');
  const outcome = await runRestore(kube, openStore(s3), { backupId, waitTimeoutMs: 600_000 });
  return { objects: outcome.totals.created, waits: outcome.waits, preflightMs: Math.round(restoreActivity.preflightMs) };
}

/** The archive's objects as the restore would send them (read before the clock starts). */
export async function archiveObjects(s3: S3Target, backupId: string): Promise<KubeObject[]> {
  const { readItems } = await import('../../src/catalog/index.ts');
  const { restorable } = await import('../../src/restore/normalize.ts');
  const store = openStore(s3);
  const read = await store.readManifest(backupId);
  const objects: KubeObject[] = [];
  for await (const item of readItems(store, backupId, { expected: read.state === 'present' ? read : null })) objects.push(restorable(item.object));
  return objects;
}

/**
 * Profiles, the wait for their namespaces (the profile controller must run), then everything else: unordered, or with
 * `ordered` namespace by namespace, each namespace's kinds in the order the restore writes them
 * (src/kubeflow/restore-order.ts). Ordered, the cluster's controllers meet the objects in an order they can act on (a
 * Notebook after its PVC, a workload after its PodDefaults), with nothing of the restore's own work around them.
 */
async function rawCreate(kube: KubeClient, objects: KubeObject[], ordered = false): Promise<{ ms: number; cpuMs: number; requests: PurposeCounts }> {
  const { waitForProfileNamespaces } = await import('../../src/restore/wait.ts');
  const { inCreateOrder } = await import('./create-orders.ts');
  const resources = new Map<string, Awaited<ReturnType<KubeClient['findByKind']>>>();
  for (const o of objects) if (!resources.has(`${o.apiVersion}/${o.kind}`)) resources.set(`${o.apiVersion}/${o.kind}`, await kube.findByKind(o.apiVersion, o.kind));
  if (ordered) objects = inCreateOrder(objects, 'namespace', (o) => resources.get(`${o.apiVersion}/${o.kind}`)!);
  const limit = pLimit(CONCURRENCY * 2);
  const create = (o: KubeObject) => limit(() => kube.create(resources.get(`${o.apiVersion}/${o.kind}`)!, o));
  const profiles = objects.filter((o) => o.kind === 'Profile');
  const requestsBefore = kube.requestPurposes();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  rawCreatePhase = 'profiles';
  await Promise.all(profiles.map(create));
  rawCreatePhase = 'namespaces';
  await waitForProfileNamespaces(kube, profiles, { timeoutMs: 600_000 });
  rawCreatePhase = 'writes';
  await Promise.all(objects.filter((o) => o.kind !== 'Profile').map(create));
  rawCreatePhase = 'done';
  return { ms: performance.now() - started, cpuMs: cpuMs(process.cpuUsage(cpuBefore)), requests: requestsSince(kube, requestsBefore) };
}

/**
 * With KFU_BENCH_THREADS set, the client prints its CPU over the measured part by thread name (/proc/self/task/<tid>/
 * stat: utime + stime, in clock ticks of 10 ms): the main thread apart from V8's helpers (parallel and concurrent GC,
 * compilation) and libuv's pool (zlib, crypto, file system), which a CPU profile of the main thread does not see.
 */
function threadCpuMs(): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '').trim();
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return Math.round((usage.user + usage.system) / 1000);
}

function requestsSince(kube: KubeClient, before: PurposeCounts): PurposeCounts {
  const now = kube.requestPurposes();
  return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - before[k as keyof PurposeCounts]])) as PurposeCounts;
}

/** the backup's last progress line, in short (its first two words), while a memory trace runs */
let memoryPhase = 'start';

/**
 * For finding what a client's memory is made of (not used by the benches' figures): with KFU_BENCH_MEMORY_TRACE=<file>
 * process.memoryUsage() is appended there every 100 ms (KFU_BENCH_MEMORY_TRACE_MS: another interval) as a JSON line,
 * with a backup's step (its last progress line's first words) and the RSS high-water mark; with
 * KFU_BENCH_HEAP_SNAPSHOT_MIB=<n> as well, one heap snapshot is written (into the working folder) the first time the
 * used heap passes n MiB, or with KFU_BENCH_HEAP_SNAPSHOT_RSS_MIB=<n> the first time the RSS does.
 */
function traceMemory(): void {
  const file = process.env.KFU_BENCH_MEMORY_TRACE;
  if (!file) return;
  const snapshotAt = Number(process.env.KFU_BENCH_HEAP_SNAPSHOT_MIB ?? Number.NaN) * 1024 ** 2;
  const snapshotAtRss = Number(process.env.KFU_BENCH_HEAP_SNAPSHOT_RSS_MIB ?? Number.NaN) * 1024 ** 2;
  const interval = Number(process.env.KFU_BENCH_MEMORY_TRACE_MS ?? 100);
  let snapshotTaken = false;
  const started = performance.now();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const mib = (x: number) => Math.round(x / 1024 ** 2);
    appendFileSync(file, `${JSON.stringify({ ms: Math.round(performance.now() - started), rss: mib(m.rss), heapTotal: mib(m.heapTotal), heapUsed: mib(m.heapUsed), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers), hwm: peakRssMiB(), phase: memoryPhase, restorePhase: restoreActivity.phase, pid: process.pid })}\n`);
    if (!snapshotTaken && (m.heapUsed >= snapshotAt || m.rss >= snapshotAtRss)) {
      snapshotTaken = true;
      process.stderr.write(`heap snapshot: ${writeHeapSnapshot()}\n`);
    }
  }, interval);
  timer.unref();
}

/** raw CREATE's phase, for the timeline */
let rawCreatePhase = 'idle';

/** CPU milliseconds of a process and its threads (utime and stime of /proc/<pid>/stat, at 100 ticks a second), NaN when unreadable */
function processCpuMs(pid: number): { user: number; system: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/**
 * Where a run's time goes (docs/performance.md): with KFU_BENCH_TIMELINE=<prefix>, every 100 ms one JSON line to
 * <prefix>.<mode>.<pid>.jsonl: requests in flight at the transport now and sent in the interval (the client's request
 * counter), the restore's phase and namespaces (ready from the profile controller, in its pipeline, parked for
 * PodDefaults, done), this process's CPU and, with KFU_BENCH_SERVER_PID set (bench/alternate.ts sets it), the embedded cluster's CPU in the interval; each
 * CPU figure with its system share beside it (time in the kernel: syscalls and context switches).
 */
function traceTimeline(mode: string, kube: KubeClient): void {
  const prefix = process.env.KFU_BENCH_TIMELINE;
  if (!prefix) return;
  const file = `${prefix}.${mode}.${process.pid}.jsonl`;
  const serverPid = Number(process.env.KFU_BENCH_SERVER_PID ?? Number.NaN);
  const started = performance.now();
  const sent = () => Object.values(kube.requestPurposes()).reduce((a, b) => a + b, 0);
  let counted = sent();
  let cpu = process.cpuUsage();
  let server = processCpuMs(serverPid);
  const timer = setInterval(() => {
    const nowCpu = process.cpuUsage();
    const nowServer = processCpuMs(serverPid);
    const nowSent = sent();
    const line = {
      ms: Math.round(performance.now() - started),
      phase: mode.startsWith('raw-create') ? rawCreatePhase : restoreActivity.phase,
      inFlight: kube.inFlight,
      sent: nowSent - counted,
      ready: restoreActivity.namespacesReady,
      pipeline: restoreActivity.namespacesInPipeline,
      parked: restoreActivity.namespacesParked,
      done: restoreActivity.namespacesDone,
      clientCpuMs: Math.round((nowCpu.user - cpu.user + nowCpu.system - cpu.system) / 1000),
      clientSystemMs: Math.round((nowCpu.system - cpu.system) / 1000),
      serverCpuMs: nowServer.user - server.user + nowServer.system - server.system,
      serverSystemMs: nowServer.system - server.system,
    };
    counted = nowSent;
    cpu = nowCpu;
    server = nowServer;
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, 100);
  timer.unref();
}

async function main(): Promise<void> {
  traceMemory();
  const [mode, kubeconfig, s3File, backupId] = process.argv.slice(2);
  if (!mode || !kubeconfig || !s3File) throw new Error('usage: client.ts <backup|raw-list|restore|raw-create|raw-create-ordered> <kubeconfig> <s3.json> [backup-id]');
  const s3 = JSON.parse(readFileSync(s3File, 'utf8')) as S3Target;
  const kube = await KubeClient.load({ kubeconfig, concurrency: CONCURRENCY, pageSize: PAGE_SIZE });
  traceTimeline(mode, kube);
  try {
    let result: Measured;
    let ms: number;
    let cpu: number;
    let requests: PurposeCounts;
    let threadsBefore = threadCpuMs();
    if (mode === 'raw-create' || mode === 'raw-create-ordered') {
      const objects = await archiveObjects(s3, backupId!);
      threadsBefore = threadCpuMs();
      ({ ms, cpuMs: cpu, requests } = await rawCreate(kube, objects, mode === 'raw-create-ordered'));
      result = { objects: objects.length };
    } else {
      const requestsBefore = kube.requestPurposes();
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      if (mode === 'backup') result = await backup(kube, s3);
      else if (mode === 'raw-list') result = await rawList(kube, kubeconfig);
      else if (mode === 'restore') result = await restore(kube, s3, backupId!);
      else throw new Error(`unknown mode ${mode}`);
      ms = performance.now() - started;
      cpu = cpuMs(process.cpuUsage(cpuBefore));
      requests = requestsSince(kube, requestsBefore);
    }
    if (process.env.KFU_BENCH_THREADS) {
      const after = threadCpuMs();
      const spent = [...after].map(([name, ms]) => `${name} ${ms - (threadsBefore.get(name) ?? 0)} ms`);
      process.stderr.write(`${mode}: CPU by thread over the measured part: ${spent.join(', ')}\n`);
    }
    const out: ClientResult = { mode, ms: Math.round(ms), ...result, peakRssMiB: peakRssMiB(), cpuMs: cpu, requests };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    kube.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
