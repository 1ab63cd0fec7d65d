// The volumes bench's restore, through the restore gateway (src/volumes/restic/restore-gateway.ts: it redirects each
// read to S3) and without it, alternated round after round in one run, with a timeline of each: when the gateway's
// Service had its ready endpoint, when each mover Pod ran and ended; the gateway process's CPU, this process's CPU
// (API server, kubelet, DNS, kube-proxy if it relays), and with --connections the connections the kernel forwarded to
// the gateway (the DNAT rule's packet counter: nat sees the first packet of each connection).
// node --import tsx bench/gateway-restore.ts [--mib 512] [--rounds 3] [--variants gateway,mover] [--s3 https|http] [--connections]
// The S3 is HTTPS unless `--s3 http` (bench/support/bench-s3.ts): the movers trust its CA through the run's Secret, direct
// restic with --cacert.
// A variant is `gateway` (as the charm runs it), `mover` (bucket credentials in the mover) or `direct` (restic run
// directly on the mover's repository, 2 PVCs at a time, as the volumes bench's direct side). `gateway` may carry
// changes to try, each `+gw:NAME=VALUE` (an environment variable of the gateway's container), `+mover:NAME=VALUE` (of
// each mover's), `+noprobe` (the gateway without its readiness probe), made to the Jobs as they are created, or
// `+userspace` (the target cluster's kube-proxy relays in this process instead of forwarding in the kernel):
// `gateway+gw:GODEBUG=http2server=0`.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newBackupId } from '../src/store/layout.ts';
import { backupVolumes, restoreVolumes } from '../src/volumes/mover.ts';
import { createBoundPvc, pvc, PVC_REF, startVolumeCluster } from '../tests/volumes/helpers.ts';
import { s3Scheme, startBenchS3 } from './support/bench-s3.ts';

const { values } = parseArgs({ options: { mib: { type: 'string', default: '512' }, rounds: { type: 'string', default: '3' }, variants: { type: 'string', default: 'gateway,mover' }, s3: { type: 'string', default: 'https' }, connections: { type: 'boolean', default: false } } });
const MIB = 1024 * 1024;
const total = Number(values.mib) * MIB;
const rounds = Number(values.rounds);
const variants = values.variants.split(',');
const PVCS = 5;
const PASSWORD = 'bench repository password';
const gatewayOptions = { namespace: 'kubeflow', image: 'docker.io/rclone/rclone:1.68.2', imageSetting: 'gateway image' };

/** this process's CPU and that of every child it reaped (the containers' processes, direct restic), in seconds */
const treeCpu = () => {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
};
const cpuOf = (pid: number) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch { return 0; }
};
/** the processes whose command line holds every one of `words` */
function pidsOf(words: string[]): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (words.every((w) => argv.some((a) => a === w || a.endsWith(`/${w}`)))) out.push(Number(name));
    } catch { /* gone */ }
  }
  return out;
}
function dnatPackets(): number {
  try {
    let mine = false;
    let sum = 0;
    for (const line of execFileSync('iptables', ['-w', '-t', 'nat', '-L', '-v', '-x', '-n'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')) {
      if (line.startsWith('Chain ')) mine = line.startsWith('Chain KFU-SVC-') && line.split(' ')[1]!.endsWith(`-${process.pid}`);
      else if (mine && line.includes('DNAT') && /to:[\d.]+:8443/.test(line)) sum += Number(line.trim().split(/\s+/)[0]);
    }
    return sum;
  } catch { return 0; }
}

const store = await startBenchS3({ buckets: ['movers'], scheme: s3Scheme(values.s3) });
const s3 = store.server;
process.env.KFU_KUBE_PROXY_MODE = 'iptables';
const vc = await startVolumeCluster({ bindingMode: 'Immediate', readOnlyViews: 'bind-mount' });
try {
  const names = Array.from({ length: PVCS }, (_, i) => `vol-${i}`);
  for (const name of names) {
    const folder = await createBoundPvc(vc, 'alice', name);
    for (let i = 1; i < 100; i++) {
      mkdirSync(join(folder, `run-${i % 5}`), { recursive: true });
      writeFileSync(join(folder, `run-${i % 5}`, `part-${i}.bin`), randomBytes(1024 + ((i * 7919) % (63 * 1024))));
    }
    const fd = openSync(join(folder, 'model.ckpt'), 'w');
    for (let left = total / PVCS - 3 * MIB; left > 0; left -= 16 * MIB) writeSync(fd, randomBytes(Math.min(16 * MIB, left)));
    closeSync(fd);
  }
  const refs = names.map((name) => ({ namespace: 'alice', name }));
  const settings = (prefix: string) => store.settings('movers', prefix);
  const snapshotsOf = async (prefix: string, gateway: boolean) => {
    const results = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: settings(prefix), pvcs: refs, engine: 'restic', restic: { password: () => PASSWORD, ...(gateway ? { gateway: gatewayOptions } : {}) } });
    return new Map(results.map((r) => [`alice/${r.pvc}`, r.restic!.snapshot]));
  };
  const snapshots = { gateway: await snapshotsOf('gateway', true), mover: await snapshotsOf('mover', false) };
  process.stdout.write(`S3 over ${store.scheme}; ${total / MIB} MiB on ${PVCS} PVCs; kube-proxy ${vc.kubelet.proxyMode()}; ${rounds} rounds; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);

  const results = new Map<string, { wall: number; ready: number; firstMover: number; moversDone: number; gatewayCpu: number; selfCpu: number; connections: number; allCpu: number }[]>(variants.map((v) => [v, []]));
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const viaGateway = variant.startsWith('gateway');
      const [, ...changes] = variant.split('+');
      const all0 = treeCpu() + cpuOf(s3.pid);
      if (variant === 'direct') {
        const env = { PATH: process.env.PATH ?? '', HOME: vc.dataDir, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: PASSWORD, RESTIC_REPOSITORY: `s3:${s3.endpoint}/movers/mover/restic/alice` };
        const t0 = performance.now();
        for (let i = 0; i < PVCS; i += 2) {
          await Promise.all(names.slice(i, i + 2).map((name) => new Promise<void>((resolve, reject) => {
            const child = spawn('restic', [...(store.caFile ? ['--cacert', store.caFile] : []), '-o', 's3.bucket-lookup=path', 'restore', snapshots.mover.get(`alice/${name}`)!, '--target', join(vc.dataDir, `direct-${round}`, name)], { env, stdio: 'ignore' });
            child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`restic restore ${name}: ${code}`))));
          })));
        }
        results.get(variant)!.push({ wall: (performance.now() - t0) / 1000, ready: 0, firstMover: 0, moversDone: 0, gatewayCpu: 0, selfCpu: 0, connections: 0, allCpu: treeCpu() + cpuOf(s3.pid) - all0 });
        continue;
      }
      process.env.KFU_KUBE_PROXY_MODE = changes.includes('userspace') ? 'userspace' : 'iptables';
      const target = await startVolumeCluster({ bindingMode: 'Immediate' });
      delete process.env.KFU_KUBE_PROXY_MODE;
      for (const ref of refs) target.cluster.api.create(PVC_REF, pvc('alice', ref.name));
      const marks = { ready: 0, firstMover: 0, moversDone: 0 };
      const t0 = performance.now();
      const at = () => (performance.now() - t0) / 1000;
      const unsubscribe = target.cluster.api.subscribe(({ ref, object }) => {
        if (ref.resource === 'endpointslices' && !marks.ready && JSON.stringify(object).includes('"ready":true')) marks.ready = at();
        if (ref.resource === 'pods' && object.metadata.namespace === 'alice') {
          const phase = (object.status as { phase?: string } | undefined)?.phase;
          if (phase === 'Running' && !marks.firstMover) marks.firstMover = at();
          if (phase === 'Succeeded') marks.moversDone = at();
        }
      });
      let gatewayCpu = 0;
      let connections = 0;
      const sampler = setInterval(() => {
        // the restore gateway (node and its bundle), or the rclone one a backup runs
        for (const pid of [...pidsOf(['restic-gateway.mjs']), ...pidsOf(['serve', 'restic'])]) gatewayCpu = Math.max(gatewayCpu, cpuOf(pid));
        // `iptables -L` of the whole nat table four times a second costs CPU (and the xtables lock) on the gateway side
        // only, so it is counted only when asked for (--connections); it was always on before 2026-12-07 22:45
        if (viaGateway && values.connections) connections = Math.max(connections, dnatPackets());
      }, 250);
      const self0 = process.cpuUsage();
      const kube = changes.every((c) => c === 'userspace') ? target.kube : {
        ...target.kube,
        create(resource: Parameters<typeof target.kube.create>[0], object: Parameters<typeof target.kube.create>[1]) {
          if (object.kind === 'Job') {
            const gateway = (object.metadata.name ?? '').startsWith('kfu-gateway-');
            const containers = (object.spec as { template: { spec: { containers: { env?: unknown[]; readinessProbe?: unknown }[] } } }).template.spec.containers;
            for (const change of changes) {
              const [where, setting] = [change.split(':')[0], change.slice(change.indexOf(':') + 1)];
              if (change === 'noprobe' && gateway) for (const c of containers) delete c.readinessProbe;
              if ((where === 'gw' && gateway) || (where === 'mover' && !gateway)) {
                for (const c of containers) c.env = [...(c.env ?? []), { name: setting.split('=')[0], value: setting.slice(setting.indexOf('=') + 1) }];
              }
            }
          }
          return target.kube.create(resource, object);
        },
      };
      await restoreVolumes(kube, { backupId: newBackupId(), s3: settings(viaGateway ? 'gateway' : 'mover'), pvcs: refs, engine: 'restic', restic: { password: () => PASSWORD, snapshots: viaGateway ? snapshots.gateway : snapshots.mover, ...(viaGateway ? { gateway: gatewayOptions } : {}) } });
      const wall = at();
      clearInterval(sampler);
      const self = process.cpuUsage(self0);
      unsubscribe();
      await target.stop();
      results.get(variant)!.push({ wall, ...marks, gatewayCpu, selfCpu: (self.user + self.system) / 1e6, connections, allCpu: treeCpu() + cpuOf(s3.pid) - all0 });
    }
    process.stdout.write(`round ${round + 1}: ${variants.map((v) => { const r = results.get(v)!.at(-1)!; return `${v} ${r.wall.toFixed(2)} s (endpoint ready ${r.ready.toFixed(2)}, first mover running ${r.firstMover.toFixed(2)}, last mover done ${r.moversDone.toFixed(2)}; gateway CPU ${r.gatewayCpu.toFixed(2)} s, this process ${r.selfCpu.toFixed(2)} s, all ${r.allCpu.toFixed(2)} s, connections ${r.connections})`; }).join('; ')}; load ${loadavg()[0]!.toFixed(2)}\n`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = results.has('direct') ? 'direct' : 'mover';
  const baseWall = median(results.get(base)?.map((r) => r.wall) ?? [Number.NaN]);
  for (const v of variants) {
    const paired = results.get(v)!.map((r, i) => (results.get(base)?.[i]?.wall ?? Number.NaN) / r.wall);
    process.stdout.write(`${v}: median ${median(results.get(v)!.map((r) => r.wall)).toFixed(2)} s, ${base} / ${v} ${(baseWall / median(results.get(v)!.map((r) => r.wall))).toFixed(2)} (per round: ${paired.map((x) => x.toFixed(2)).join(', ')}); CPU per GiB restored, all processes: ${(median(results.get(v)!.map((r) => r.allCpu)) / (total / 1024 / MIB)).toFixed(1)} s\n`);
  }
} finally {
  await vc.stop();
  await store.stop();
}
