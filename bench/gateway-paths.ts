// Where a restore through the repository gateway spends its time: the same restic restores, side by side in one run
// and alternated round after round, over each path a mover's bytes can take (docs/performance.md, "The restic mover
// through the repository gateway"):
//   direct        restic → s3rver (restic's S3 backend, as `npm run bench -- --only volumes`' direct side)
//   gw            restic → rclone serve restic (HTTPS) → s3rver, restic reaching the gateway's own address
//   gw-relay      the same through a userspace relay in this process (the embedded kube-proxy's former path)
//   gw-dnat       the same through an iptables DNAT rule in nat OUTPUT (the embedded kube-proxy's kernel path)
//   gw-http       the gateway without TLS
//   gw-c<N>       restic with -o rest.connections=<N>
//   gw-buf<S>     rclone with --buffer-size <S>
//   gw-h1         restic speaking HTTP/1.1 to the gateway (GODEBUG=http2client=0), one TCP connection per request in flight
//                 instead of one HTTP/2 connection multiplexing them all
//   gw-srvh1      the gateway serving HTTP/1.1 only (GODEBUG=http2server=0 in rclone's environment)
//   gw-nohead     the gateway's S3 remote with no_head_object (rclone reads an object with one GET, no HEAD first)
//   gw-both       gw-srvh1 and gw-nohead together
//   redirect      the restore gateway (src/volumes/restic/restore-gateway.ts, its bundle under this Node): HTTPS to
//                 restic, each file's GET answered with a 307 to a presigned s3rver URL that restic reads itself
// Each round restores two snapshots at once (the movers run 2 at a time) into fresh folders; per side it prints the
// wall time, and the CPU seconds of restic (both), of the gateway, of s3rver and of this process (the relay).
// node --import tsx bench/gateway-paths.ts [--mib 256] [--rounds 3] [--sides direct,gw,gw-relay,gw-dnat]
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { htpasswdOf, makeGatewayCertificate } from '../src/volumes/restic/gateway-credentials.ts';
import { restoreGatewayBundle } from '../src/volumes/restic/restore-gateway-bundle.ts';
import { startS3Server } from '../tests/support/s3/server.ts';

const { values } = parseArgs({ options: { mib: { type: 'string', default: '256' }, rounds: { type: 'string', default: '3' }, sides: { type: 'string', default: 'direct,gw,gw-relay,gw-dnat,gw-http,gw-c10,gw-buf0' } } });
const MIB = 1024 * 1024;
const total = Number(values.mib) * MIB;
const rounds = Number(values.rounds);
const sides = values.sides.split(',');
const PASSWORD = 'bench repository password';
const work = mkdtempSync(join(tmpdir(), 'gateway-paths-'));
// 127.254/16 lies outside every embedded cluster's pair of ranges (127.<2k>/16 and 127.<2k+1>/16, 2k ≤ 252)
const GW_IP = '127.254.1.5';
const RELAY_IP = '127.254.0.7';
const DNAT_IP = '127.254.0.8';
const PORT = 8443;
const CHAIN = `KFU-BENCH-${process.pid}`;

const ticks = (pid: number) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch { return 0; }
};

function run(command: string, args: string[], env: Record<string, string>): Promise<{ cpu: number }> {
  const timeFile = join(work, `time-${Math.random()}`);
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, command, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-2000); });
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${command} ${args.join(' ')}: ${err}`));
      const [u, s] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
      resolve({ cpu: u! + s! });
    });
  });
}

const s3 = await startS3Server({ buckets: ['movers'] });
const children: ChildProcess[] = [];
let relay: Server | undefined;
const cleanup = () => {
  for (const c of children) c.kill('SIGTERM');
  try { execFileSync('iptables', ['-w', '-t', 'nat', '-D', 'OUTPUT', '-d', `${DNAT_IP}/32`, '-j', CHAIN], { stdio: 'ignore' }); } catch { /* not there */ }
  try { execFileSync('iptables', ['-w', '-t', 'nat', '-F', CHAIN], { stdio: 'ignore' }); execFileSync('iptables', ['-w', '-t', 'nat', '-X', CHAIN], { stdio: 'ignore' }); } catch { /* not there */ }
};
process.on('exit', cleanup);
try {
  // two trees, one per "PVC": a large file and 99 small ones, incompressible
  const repo = `s3:${s3.endpoint}/movers/restic/alice`;
  const s3Env = { HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: PASSWORD, RESTIC_REPOSITORY: repo };
  await run('restic', ['-o', 's3.bucket-lookup=path', 'init'], s3Env);
  const snapshots: string[] = [];
  for (const name of ['vol-0', 'vol-1']) {
    const dir = join(work, 'data', name);
    mkdirSync(dir, { recursive: true });
    let small = 0;
    for (let i = 1; i < 100; i++) {
      const size = 1024 + ((i * 7919) % (63 * 1024));
      small += size;
      writeFileSync(join(dir, `part-${i}.bin`), randomBytes(size));
    }
    writeFileSync(join(dir, 'model.ckpt'), randomBytes(total / 2 - small));
    const out = execFileSync('restic', ['-o', 's3.bucket-lookup=path', 'backup', '--json', '--host', name, '.'], { cwd: dir, env: { PATH: process.env.PATH, ...s3Env } }).toString();
    snapshots.push((JSON.parse(out.split('\n').filter((l) => l.includes('"summary"')).at(-1)!) as { snapshot_id: string }).snapshot_id);
  }
  rmSync(join(work, 'data'), { recursive: true, force: true });

  // the gateways: HTTPS on GW_IP:PORT, plain HTTP on PORT+1, and per --buffer-size variant one more port
  const cert = await makeGatewayCertificate(['gateway.kubeflow.svc'], 2, new Date(), [GW_IP, RELAY_IP, DNAT_IP]);
  writeFileSync(join(work, 'tls.crt'), cert.certificate);
  writeFileSync(join(work, 'tls.key'), cert.privateKey);
  const userPassword = randomBytes(16).toString('hex');
  writeFileSync(join(work, 'htpasswd'), htpasswdOf([{ namespace: 'alice', password: userPassword }]));
  const remoteEnv = {
    RCLONE_CONFIG_KFUSTORE_TYPE: 's3', RCLONE_CONFIG_KFUSTORE_PROVIDER: 'Other', RCLONE_CONFIG_KFUSTORE_ENV_AUTH: 'false',
    RCLONE_CONFIG_KFUSTORE_ENDPOINT: s3.endpoint, RCLONE_CONFIG_KFUSTORE_FORCE_PATH_STYLE: 'true', RCLONE_CONFIG_KFUSTORE_NO_CHECK_BUCKET: 'true',
    RCLONE_CONFIG_KFUSTORE_ACCESS_KEY_ID: s3.accessKeyId, RCLONE_CONFIG_KFUSTORE_SECRET_ACCESS_KEY: s3.secretAccessKey, HOME: work,
  };
  const gateways = new Map<string, { port: number; tls: boolean; pid: number }>();
  const startGateway = async (key: string, port: number, tls: boolean, extra: string[], env: Record<string, string> = {}) => {
    const args = ['serve', 'restic', 'kfustore:movers/restic', '--addr', `${GW_IP}:${port}`, '--htpasswd', join(work, 'htpasswd'), '--private-repos', '--append-only', '--cache-dir', join(work, 'rclone-cache'),
      ...(tls ? ['--cert', join(work, 'tls.crt'), '--key', join(work, 'tls.key')] : []), ...extra];
    const child = spawn('rclone', args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...remoteEnv, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(child);
    // ready once it accepts connections, as the gateway's readiness probe judges
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const c = connect(port, GW_IP, () => { c.destroy(); resolve(true); });
        c.on('error', () => resolve(false));
      });
      if (ok) break;
      if (child.exitCode !== null) throw new Error(`rclone ${args.join(' ')} exited`);
      await new Promise((r) => setTimeout(r, 50));
    }
    gateways.set(key, { port, tls, pid: child.pid! });
  };
  await startGateway('tls', PORT, true, []);
  if (sides.includes('gw-http')) await startGateway('http', PORT + 1, false, []);
  let nextPort = PORT + 2;
  for (const side of sides.filter((s) => s.startsWith('gw-buf'))) await startGateway(side, nextPort++, true, ['--buffer-size', side.slice('gw-buf'.length)]);
  const h1 = { GODEBUG: 'http2server=0' };
  const noHead = { RCLONE_CONFIG_KFUSTORE_NO_HEAD_OBJECT: 'true' };
  const envs: Record<string, Record<string, string>> = { 'gw-srvh1': h1, 'gw-nohead': noHead, 'gw-both': { ...h1, ...noHead } };
  for (const side of sides.filter((s) => envs[s])) await startGateway(side, nextPort++, true, [], envs[side]);

  if (sides.includes('redirect')) {
    // the restore gateway as its Job runs it (src/volumes/restic/restore-gateway.ts restoreServing)
    writeFileSync(join(work, 'restic-gateway.mjs'), await restoreGatewayBundle());
    const port = nextPort++;
    const child = spawn(process.execPath, [join(work, 'restic-gateway.mjs')], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin', GATEWAY_DIR: work, GATEWAY_PORT: String(port), POD_IP: GW_IP, GATEWAY_ROOT: 'restic',
        GATEWAY_S3_ENDPOINT: s3.endpoint, GATEWAY_S3_BUCKET: 'movers', GATEWAY_S3_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const c = connect(port, GW_IP, () => { c.destroy(); resolve(true); });
        c.on('error', () => resolve(false));
      });
      if (ok) break;
      if (child.exitCode !== null) throw new Error('the restore gateway exited');
      await new Promise((r) => setTimeout(r, 50));
    }
    gateways.set('redirect', { port, tls: true, pid: child.pid! });
  }
  if (sides.includes('gw-relay')) {
    // the relay of tests/support/net/kube-proxy.ts before its kernel path: accept, connect, pipe both ways
    relay = createServer((client) => {
      client.pause();
      const upstream = connect({ host: GW_IP, port: PORT });
      upstream.on('connect', () => { upstream.pipe(client); client.pipe(upstream); client.resume(); });
      upstream.on('error', () => client.resetAndDestroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => relay!.listen(PORT, RELAY_IP, resolve));
  }
  if (sides.includes('gw-dnat')) {
    execFileSync('iptables', ['-w', '-t', 'nat', '-N', CHAIN]);
    execFileSync('iptables', ['-w', '-t', 'nat', '-A', CHAIN, '-p', 'tcp', '--dport', String(PORT), '-j', 'DNAT', '--to-destination', `${GW_IP}:${PORT}`]);
    execFileSync('iptables', ['-w', '-t', 'nat', '-I', 'OUTPUT', '-d', `${DNAT_IP}/32`, '-j', CHAIN]);
  }

  const sideOf = (side: string) => {
    const gw = side === 'direct' ? undefined : gateways.get(side === 'gw-http' ? 'http' : gateways.has(side) ? side : 'tls')!;
    const host = side === 'gw-relay' ? RELAY_IP : side === 'gw-dnat' ? DNAT_IP : GW_IP;
    const connections = side.startsWith('gw-c') ? ['-o', `rest.connections=${side.slice('gw-c'.length)}`] : [];
    const godebug: Record<string, string> = side === 'gw-h1' ? { GODEBUG: 'http2client=0' } : {};
    const env = gw
      ? { HOME: work, RESTIC_PASSWORD: PASSWORD, RESTIC_REPOSITORY: `rest:${gw.tls ? 'https' : 'http'}://alice:${userPassword}@${host}:${gw.port}/alice/`, ...godebug }
      : s3Env;
    const args = gw ? [...(gw.tls ? ['--cacert', join(work, 'tls.crt')] : []), ...connections] : ['-o', 's3.bucket-lookup=path'];
    return { gw, env, args };
  };

  const results = new Map<string, { wall: number; restic: number; gateway: number; s3: number; self: number }[]>(sides.map((s) => [s, []]));
  process.stdout.write(`${total / MIB} MiB in 2 snapshots, restored 2 at a time; ${rounds} rounds, alternated; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const { gw, env, args } = sideOf(side);
      const target = join(work, 'restore');
      rmSync(target, { recursive: true, force: true });
      const before = { gw: gw ? ticks(gw.pid) : 0, s3: ticks(s3.pid), self: process.cpuUsage() };
      const t0 = performance.now();
      const done = await Promise.all(snapshots.map((id, i) => run('restic', [...args, '--no-cache', 'restore', id, '--target', join(target, String(i))], env)));
      const wall = (performance.now() - t0) / 1000;
      const self = process.cpuUsage(before.self);
      results.get(side)!.push({ wall, restic: done.reduce((s, d) => s + d.cpu, 0), gateway: gw ? ticks(gw.pid) - before.gw : 0, s3: ticks(s3.pid) - before.s3, self: (self.user + self.system) / 1e6 });
    }
    process.stdout.write(`round ${round + 1}: ${order.map((s) => `${s} ${results.get(s)!.at(-1)!.wall.toFixed(2)} s`).join(', ')}; load ${loadavg()[0]!.toFixed(2)}\n`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const directWall = median(results.get('direct')?.map((r) => r.wall) ?? [Number.NaN]);
  process.stdout.write('\n| side | wall (median) | direct / side | restic CPU | gateway CPU | s3rver CPU | relay (this process) CPU | CPU s per GiB, all |\n|---|---|---|---|---|---|---|---|\n');
  for (const side of sides) {
    const rs = results.get(side)!;
    const m = (f: (r: (typeof rs)[number]) => number) => median(rs.map(f));
    const all = m((r) => r.restic + r.gateway + r.s3 + r.self);
    process.stdout.write(`| ${side} | ${m((r) => r.wall).toFixed(2)} s (${rs.map((r) => r.wall.toFixed(2)).join(', ')}) | ${(directWall / m((r) => r.wall)).toFixed(2)} | ${m((r) => r.restic).toFixed(2)} s | ${m((r) => r.gateway).toFixed(2)} s | ${m((r) => r.s3).toFixed(2)} s | ${m((r) => r.self).toFixed(2)} s | ${(all / (total / 1024 / MIB)).toFixed(1)} |\n`);
  }
} finally {
  relay?.close();
  cleanup();
  children.length = 0;
  await s3.stop();
  rmSync(work, { recursive: true, force: true });
}
