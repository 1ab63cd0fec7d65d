// The volume movers side by side on the same data, in one run (issue 31's table): our restic mover (Jobs run by the
// simulated kubelet with Debian's restic), restic run directly on the same trees, and the plain-file rclone mover.
// Each gets its own bucket prefix. Measured per side: the first backup's time; a second backup of unchanged data over
// the first; after five backups of unchanged data, the bytes stored (the sum of the objects' sizes: a server-side
// copy is an object of its own, stored and billed as such) over the data; after changing 1 % of the data in place
// (same sizes), the bytes uploaded over the bytes changed, and again after rewriting 1 % of the data as whole small
// files; a restore's throughput and the CPU every process spent on it; the movers' peak memory (the simulated kubelet
// samples each container's process tree). The S3 is HTTPS unless `--s3 http` (bench/support/bench-s3.ts): every side
// trusts the run's CA as the product does, direct restic with --cacert.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, openSync, readdirSync, statSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newBackupId } from '../src/store/layout.ts';
import { backupVolumes, restoreVolumes, type VolumeResult } from '../src/volumes/mover.ts';
import { onContainerFinished } from '../tests/support/kubelet/container.ts';
import type { S3ServerHandle } from '../tests/support/s3/server.ts';
import { createBoundPvc, pvc, PVC_REF, startVolumeCluster, type VolumeCluster } from '../tests/volumes/helpers.ts';
import { cpuSeconds } from './cpu.ts';
import { startBenchS3 } from './support/bench-s3.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const MIB = 1024 * 1024;
const PVCS = 5;
const PASSWORD = 'bench repository password';

/** `files` files per PVC: one large file holding most of the bytes, the rest 1-64 KiB; incompressible bytes. */
function writeTree(root: string, bytes: number, files: number): void {
  let small = 0;
  for (let i = 1; i < files; i++) {
    const dir = join(root, `run-${i % 5}`);
    mkdirSync(dir, { recursive: true });
    const size = 1024 + ((i * 7919) % (63 * 1024));
    small += size;
    writeFileSync(join(dir, `part-${i}.bin`), randomBytes(size));
  }
  const big = openSync(join(root, 'model.ckpt'), 'w');
  for (let left = bytes - small; left > 0; left -= 16 * MIB) writeSync(big, randomBytes(Math.min(16 * MIB, left)));
  closeSync(big);
}

/** Overwrites `bytes` in the middle of the large file, in place: same size, new content. */
function changeInPlace(root: string, bytes: number): void {
  const file = join(root, 'model.ckpt');
  const fd = openSync(file, 'r+');
  writeSync(fd, randomBytes(bytes), 0, bytes, Math.floor(statSync(file).size / 2));
  closeSync(fd);
}

/** Rewrites small files (new content, same sizes) until at least `bytes` changed; returns the bytes rewritten. */
function rewriteSmallFiles(root: string, bytes: number): number {
  let rewritten = 0;
  for (const dir of readdirSync(root).filter((name) => name.startsWith('run-')).sort()) {
    for (const name of readdirSync(join(root, dir)).sort()) {
      if (rewritten >= bytes) return rewritten;
      const file = join(root, dir, name);
      const size = statSync(file).size;
      writeFileSync(file, randomBytes(size));
      rewritten += size;
    }
  }
  return rewritten;
}

/** The sum of the sizes of the objects s3rver holds under `bucket/prefix` (its files end in `._S3rver_object`). */
function storedBytes(s3: S3ServerHandle, bucket: string, prefix: string): number {
  const walk = (dir: string): number => readdirSync(dir, { withFileTypes: true }).reduce((sum, e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return sum + walk(full);
    return sum + (e.name.endsWith('._S3rver_object') ? statSync(full).size : 0);
  }, 0);
  try {
    return walk(join(s3.directory, bucket, prefix));
  } catch {
    return 0;
  }
}

/** restic 0.14's warnings that it retries loading a lock file another restic removed (restic/restic#1523), per run */
let lockLoadRetries = 0;

function run(command: string, args: string[], env: Record<string, string>, cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => {
      lockLoadRetries += (d.toString().match(/^Load\(<lock\//gm) ?? []).length;
      err = (err + d.toString()).slice(-4096);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.find((a) => /^(init|backup|restore)$/.test(a)) ?? ''} failed: ${err.trim()}`))));
  });
}

interface Side {
  name: string;
  prefix: string;
  /** `uploaded`: what the backup added to the bucket (restic: every object it wrote; rclone: what it did not copy inside the bucket) */
  backup(round: number): Promise<{ uploaded: number }>;
  restore(): Promise<number>;
  /** resolves once the restore's containers are gone (the CPU of a reaped child counts only then) */
  settled?(): Promise<void>;
}

const seconds = async (work: () => Promise<unknown>) => {
  const t0 = performance.now();
  await work();
  return (performance.now() - t0) / 1000;
};

export async function resticSideBySide(opts: BenchOptions): Promise<BenchRow[]> {
  // Services forwarded in the kernel, as a cluster's kube-proxy does (tests/support/net/kube-proxy.ts), unless told otherwise
  process.env.KFU_KUBE_PROXY_MODE ??= 'iptables';
  lockLoadRetries = 0;
  const total = (opts.quick ? 64 : 1024) * MIB;
  const files = opts.quick ? 50 : 100; // per PVC: 500 in all for the full run
  const store = await startBenchS3({ buckets: ['movers'], scheme: opts.s3Scheme ?? 'https' });
  const s3 = store.server;
  // the gateway runs in 'kubeflow', the model's namespace, which every embedded cluster has
  const vc: VolumeCluster = await startVolumeCluster({ bindingMode: 'Immediate', readOnlyViews: 'bind-mount' });
  // restores go into fresh claims of the same names in another cluster, as a restore after an upgrade does
  const targets = {
    ours: await startVolumeCluster({ bindingMode: 'Immediate' }), rclone: await startVolumeCluster({ bindingMode: 'Immediate' }),
    gateway: await startVolumeCluster({ bindingMode: 'Immediate' }),
  };
  try {
    const names = Array.from({ length: PVCS }, (_, i) => `vol-${i}`);
    const folders: string[] = [];
    for (const name of names) {
      const folder = await createBoundPvc(vc, 'alice', name);
      writeTree(folder, total / PVCS, files);
      folders.push(folder);
    }
    const refs = names.map((name) => ({ namespace: 'alice', name }));
    const settings = (prefix: string) => store.settings('movers', prefix);

    // our restic mover: parents are the previous round's snapshots, as the backup step passes them
    let parents = new Map<string, string>();
    let lastSnapshots = new Map<string, string>();
    const ours: Side = {
      name: 'restic mover', prefix: 'ours',
      async backup() {
        const results = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: settings('ours'), pvcs: refs, engine: 'restic', restic: { password: () => PASSWORD, parents } });
        lastSnapshots = new Map(results.map((r) => [`alice/${r.pvc}`, r.restic!.snapshot]));
        parents = lastSnapshots;
        return { uploaded: results.reduce((sum, r) => sum + (r.restic?.dataAdded ?? 0), 0) };
      },
      async restore() {
        for (const ref of refs) targets.ours.cluster.api.create(PVC_REF, pvc('alice', ref.name));
        return seconds(() => restoreVolumes(targets.ours.kube, { backupId: newBackupId(), s3: settings('ours'), pvcs: refs, engine: 'restic', restic: { password: () => PASSWORD, snapshots: lastSnapshots } }));
      },
      settled: () => targets.ours.kubelet.idle(),
    };

    // our restic mover through the run's repository gateway (src/volumes/restic/gateway.ts), as the charm runs it
    const gatewayOptions = { namespace: 'kubeflow', image: 'docker.io/rclone/rclone:1.68.2', imageSetting: 'gateway image' };
    let gatewayParents = new Map<string, string>();
    let gatewaySnapshots = new Map<string, string>();
    const viaGateway: Side = {
      name: 'restic mover via gateway', prefix: 'gateway',
      async backup() {
        const results = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: settings('gateway'), pvcs: refs, engine: 'restic', restic: { password: () => PASSWORD, parents: gatewayParents, gateway: gatewayOptions } });
        gatewaySnapshots = new Map(results.map((r) => [`alice/${r.pvc}`, r.restic!.snapshot]));
        gatewayParents = gatewaySnapshots;
        return { uploaded: results.reduce((sum, r) => sum + (r.restic?.dataAdded ?? 0), 0) };
      },
      async restore() {
        for (const ref of refs) targets.gateway.cluster.api.create(PVC_REF, pvc('alice', ref.name));
        return seconds(() => restoreVolumes(targets.gateway.kube, { backupId: newBackupId(), s3: settings('gateway'), pvcs: refs, engine: 'restic', restic: { password: () => PASSWORD, snapshots: gatewaySnapshots, gateway: gatewayOptions } }));
      },
      settled: () => targets.gateway.kubelet.idle(),
    };

    // restic run directly: the same repository layout and settings, two PVCs at a time as the movers run
    const directEnv: Record<string, string> = {
      HOME: opts.workDir, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: PASSWORD,
      RESTIC_REPOSITORY: `s3:${s3.endpoint}/movers/direct/restic/alice`, RESTIC_CACHE_DIR: join(opts.workDir, 'restic-cache'),
    };
    // the store's CA as the mover's script passes it (src/volumes/restic/job.ts: --cacert of the mounted store CA)
    const resticTls = store.caFile ? ['--cacert', store.caFile] : [];
    const directSnapshots = new Map<string, string>();
    const inPairs = async (work: (i: number) => Promise<void>) => {
      for (let i = 0; i < PVCS; i += 2) await Promise.all([i, i + 1].filter((j) => j < PVCS).map(work));
    };
    const direct: Side = {
      name: 'restic direct', prefix: 'direct',
      async backup(round) {
        if (round === 0) await run('restic', [...resticTls, '-o', 's3.bucket-lookup=path', 'init'], directEnv);
        let uploaded = 0;
        await inPairs(async (i) => {
          const out = await run('restic', [...resticTls, '-o', 's3.bucket-lookup=path', 'backup', '--json', '--host', `alice-${names[i]}`, '.'], directEnv, folders[i]);
          const summary = JSON.parse(out.split('\n').filter((l) => l.includes('"message_type":"summary"')).at(-1)!) as { data_added: number; snapshot_id: string };
          uploaded += summary.data_added;
          directSnapshots.set(names[i]!, summary.snapshot_id);
        });
        return { uploaded };
      },
      async restore() {
        return seconds(() => inPairs(async (i) => {
          await run('restic', [...resticTls, '-o', 's3.bucket-lookup=path', 'restore', directSnapshots.get(names[i]!)!, '--target', join(opts.workDir, 'direct-restore', names[i]!)], directEnv);
        }));
      },
    };

    // the plain-file mover: each backup after the first copies the previous one's files inside the bucket
    let previous: string | undefined;
    let lastRclone = '';
    const rclone: Side = {
      name: 'rclone mover', prefix: 'rclone',
      async backup() {
        const backupId = newBackupId();
        const copyFrom = previous ? new Map(names.map((name) => [`alice/${name}`, previous!])) : undefined;
        const results: VolumeResult[] = await backupVolumes(vc.kube, { backupId, s3: settings('rclone'), pvcs: refs, ...(copyFrom ? { copyFrom } : {}) });
        previous = backupId;
        lastRclone = backupId;
        return { uploaded: results.reduce((sum, r) => sum + (r.bytes - (r.reused?.bytes ?? 0)), 0) };
      },
      async restore() {
        for (const ref of refs) targets.rclone.cluster.api.create(PVC_REF, pvc('alice', ref.name));
        return seconds(() => restoreVolumes(targets.rclone.kube, { backupId: lastRclone, s3: settings('rclone'), pvcs: refs }));
      },
      settled: () => targets.rclone.kubelet.idle(),
    };

    const rows: BenchRow[] = [];
    const note = `S3 over ${store.scheme}; ${(total / MIB).toFixed(0)} MiB of incompressible data in ${files * PVCS} files on ${PVCS} PVCs; the movers 2 at a time (the default), direct restic 2 at a time; the embedded kube-proxy: ${vc.kubelet.proxyMode() ?? 'none'}`;
    // CPU seconds of this process and its reaped children (the containers' processes, direct restic) and of s3rver
    const allCpu = () => {
      const self = cpuSeconds('self');
      return self.own + self.children + cpuSeconds(s3.pid).own;
    };
    let phase: 'backup' | 'restore' = 'backup';
    const peaks = { backup: 0, restore: 0 };
    const unlisten = onContainerFinished((usage) => { peaks[phase] = Math.max(peaks[phase], usage.peakRssBytes); });
    const perPvc = Math.round(total * 0.01 / PVCS);
    try {
      for (const side of [ours, viaGateway, direct, rclone]) {
        phase = 'backup';
        peaks.backup = 0;
        peaks.restore = 0;
        const first = await seconds(() => side.backup(0));
        const second = await seconds(() => side.backup(1));
        for (let round = 2; round < 5; round++) await side.backup(round);
        const stored = storedBytes(s3, 'movers', side.prefix);
        // restic's uploads are every object it wrote (packs, index, snapshot: the prefix's growth, restic never rewrites
        // an object); rclone's are the bytes it did not copy inside the bucket (a server-side copy is not an upload)
        const afterChange = async (round: number, change: () => number) => {
          const before = storedBytes(s3, 'movers', side.prefix);
          const changed = change();
          const { uploaded } = await side.backup(round);
          const written = storedBytes(s3, 'movers', side.prefix) - before;
          return { changed, uploaded: side === rclone ? uploaded : written, dataAdded: uploaded };
        };
        const inPlace = await afterChange(5, () => folders.reduce((sum, folder) => { changeInPlace(folder, perPvc); return sum + perPvc; }, 0));
        const wholeFiles = await afterChange(6, () => folders.reduce((sum, folder) => sum + rewriteSmallFiles(folder, perPvc), 0));
        phase = 'restore';
        const cpu0 = allCpu();
        const restoreSeconds = await side.restore();
        await side.settled?.();
        const restoreCpu = allCpu() - cpu0;
        const changeRow = (what: string, m: { changed: number; uploaded: number; dataAdded: number }): BenchRow => ({
          bench: 'volumes', metric: `${side.name}: 1 % changed ${what}, bytes uploaded / bytes changed`, value: Number((m.uploaded / m.changed).toFixed(2)), unit: 'ratio',
          target: '<= 1.1', verdict: m.uploaded / m.changed <= 1.1 ? 'met' : 'missed',
          ...(side === rclone ? {} : { note: `restic's data_added / changed: ${(m.dataAdded / m.changed).toFixed(2)}` }),
        });
        rows.push(
          { bench: 'volumes', metric: `${side.name}: first backup`, value: Number(first.toFixed(1)), unit: 's', note },
          { bench: 'volumes', metric: `${side.name}: second backup of unchanged data / first`, value: Number((second / first).toFixed(2)), unit: 'ratio', target: '<= 0.1', verdict: second / first <= 0.1 ? 'met' : 'missed' },
          { bench: 'volumes', metric: `${side.name}: bytes stored by 5 backups of unchanged data / the data`, value: Number((stored / total).toFixed(2)), unit: 'ratio', target: '<= 1.05', verdict: stored / total <= 1.05 ? 'met' : 'missed' },
          changeRow('in place in the large file', inPlace),
          changeRow('as whole small files rewritten', wholeFiles),
          { bench: 'volumes', metric: `${side.name}: restore throughput`, value: Number((total / MIB / restoreSeconds).toFixed(1)), unit: 'MiB/s' },
          {
            bench: 'volumes', metric: `${side.name}: restore CPU per GiB, all processes`, value: Number((restoreCpu / (total / 1024 / MIB)).toFixed(1)), unit: 's',
            note: 'this process (API server, kubelet, DNS) and its reaped children (the containers, direct restic), and s3rver',
          },
        );
        if (side !== direct) {
          rows.push(
            { bench: 'volumes', metric: `${side.name}: mover peak memory, backup`, value: Number((peaks.backup / MIB).toFixed(0)), unit: 'MiB', note: 'resident set of the Pod\'s processes, sampled' },
            { bench: 'volumes', metric: `${side.name}: mover peak memory, restore`, value: Number((peaks.restore / MIB).toFixed(0)), unit: 'MiB' },
          );
        }
      }
    } finally {
      unlisten();
    }
    rows.push({ bench: 'volumes', metric: 'restic direct: lock files it retried loading after another restic removed them', value: lockLoadRetries, unit: 'retries', note: 'restic 0.14 retries each such load 10 times, ~44 s (restic/restic#1523)' });
    const rate = (name: string) => rows.find((r) => r.metric === `${name}: restore throughput`)!.value;
    const ratio = rate('restic mover') / rate('restic direct');
    rows.push({ bench: 'volumes', metric: 'restic mover / direct restic, restore throughput', value: Number(ratio.toFixed(2)), unit: 'ratio', target: '>= 0.9', verdict: ratio >= 0.9 ? 'met' : 'missed' });
    const throughGateway = rate('restic mover via gateway') / rate('restic direct');
    rows.push({ bench: 'volumes', metric: 'restic mover via gateway / direct restic, restore throughput', value: Number(throughGateway.toFixed(2)), unit: 'ratio', target: '>= 0.9', verdict: throughGateway >= 0.9 ? 'met' : 'missed' });
    const firstOf = (name: string) => rows.find((r) => r.metric === `${name}: first backup`)!.value;
    const firstRatio = firstOf('restic direct') / firstOf('restic mover via gateway');
    rows.push({ bench: 'volumes', metric: 'direct restic / restic mover via gateway, first backup time (speed ratio)', value: Number(firstRatio.toFixed(2)), unit: 'ratio', target: '>= 0.9', verdict: firstRatio >= 0.9 ? 'met' : 'missed' });
    return rows;
  } finally {
    await Promise.all([vc.stop(), targets.ours.stop(), targets.rclone.stop(), targets.gateway.stop()]);
    await store.stop();
  }
}
