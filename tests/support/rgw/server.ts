// A real Ceph RADOS Gateway (radosgw, Debian's Ceph 16.2.15) as a test S3 server: a one-node RADOS cluster (one
// monitor, one memstore OSD) and radosgw in a temp folder, on free loopback ports, with one user and its buckets.
// Nothing is simulated; what follows is how Ceph is started by hand, as measured in /work/shared/reference/rgw.md.
//
// upstream: github.com/ceph/ceph at v16.2.15:
// - the cluster's bootstrap: `src/tools/monmaptool.cc` (the monmap with a v2 and a v1 address), `src/ceph_mon.cc`
//   (`--mkfs`, then the monitor in the foreground with `-f`), `src/mon/OSDMonitor.cc` (`osd new <uuid>`),
//   `src/ceph_osd.cc` (`--mkfs --osd-uuid`), `src/os/memstore/MemStore.cc` (the OSD's objects in RAM);
// - the settings: `src/common/options.cc` (auth `none`, pool size 1 and `mon_allow_pool_size_one`, pg numbers,
//   `paxos_propose_interval` and `paxos_min_wait`, `ms_bind_port_min/max`, `ms_mon_client_mode`);
// - the gateway: `src/rgw/rgw_main.cc` (`radosgw -n client.rgw`), `src/rgw/rgw_asio_frontend.cc` (the `beast`
//   frontend and its `endpoint=`), `src/rgw/rgw_admin.cc` (`radosgw-admin user create` with given keys).
//
// The traps the reference note measured, each handled here: with auth `none`, radosgw loops forever on the monitor
// handshake (`get_initial_auth_request returned -13`) unless clients use `ms mon client mode = crc`; the default
// paxos propose interval (1 s) makes radosgw's first start (about 8 pools) take 9-10 s, 0.1 s brings it to about 1 s;
// a wait that does not check the answer can call radosgw up while it still loops on auth, so the wait polls the HTTP
// port, fails hard on timeout and fails at once when a daemon exits; stopped together, radosgw or the OSD can hang
// in shutdown, and the folder is thrown away, so stop is SIGKILL of radosgw, then the OSD, then the monitor.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { stopOnExit } from '../cleanup.ts';
import { executable } from '../../../scripts/system-tools.ts';

export interface RgwHandle {
  /** http://127.0.0.1:<port>, path style */
  endpoint: string;
  port: number;
  /** the zonegroup's name, which SigV4 accepts as the region (any region is accepted by a one-zone gateway) */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** the temp folder holding config, data, logs and admin sockets */
  directory: string;
  /** the monitor's, the OSD's and radosgw's process ids */
  pids: number[];
  /** runs `radosgw-admin` against this cluster; resolves with its stdout */
  admin(args: string[]): Promise<string>;
  /** a new bucket, created by the handle's user (Object Lock enabled when asked) */
  createBucket(name: string, options?: { objectLock?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export interface RgwOptions {
  buckets?: string[];
  /** buckets created with Object Lock enabled (S3's x-amz-bucket-object-lock-enabled) */
  objectLockBuckets?: string[];
}

const DAEMONS = ['/usr/bin/ceph-mon', '/usr/bin/ceph-osd', '/usr/bin/radosgw', '/usr/bin/radosgw-admin', '/usr/bin/monmaptool', '/usr/bin/ceph'];
const START_TIMEOUT_MS = 60_000;


/** Is `port` free on 127.0.0.1 now? */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * `count` consecutive free ports. Each copy of the cluster gets its own narrow `ms bind port` range, so that copies in
 * parallel test processes never meet (the note: several copies run side by side on different ports). The range is
 * drawn below Linux's ephemeral ports (32768 and up), which every outgoing connection and every `listen(0)` (s3rver,
 * MariaDB) takes from.
 */
async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * (32_768 - 10_000 - count));
    let all = true;
    for (let port = base; port < base + count && all; port++) all = await portFree(port);
    if (all) return base;
  }
  throw new Error(`found no ${count} consecutive free ports on 127.0.0.1 for a radosgw test cluster`);
}

/** The ceph.conf of a one-node cluster whose every file is under `dir` (the settings the reference note lists). */
function cephConf(dir: string, fsid: string, ports: { monV2: number; monV1: number; msMin: number; msMax: number; http: number }): string {
  return `[global]
fsid = ${fsid}
mon host = [v2:127.0.0.1:${ports.monV2},v1:127.0.0.1:${ports.monV1}]
public addr = 127.0.0.1
ms bind port min = ${ports.msMin}
ms bind port max = ${ports.msMax}
auth cluster required = none
auth service required = none
auth client required = none
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
log file = ${dir}/log/$name.log
keyring = ${dir}/keyring
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
[mon]
mon data = ${dir}/mon/$cluster-$id
paxos propose interval = 0.1
paxos min wait = 0.01
[osd]
osd data = ${dir}/osd/$cluster-$id
osd objectstore = memstore
memstore device bytes = 2147483648
[client]
ms mon client mode = crc
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${ports.http}
rgw data = ${dir}/rgw
`;
}

/** Resolves once radosgw answers HTTP on `port` (any status: it answers only once it reached the cluster). */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = request({ host: '127.0.0.1', port, path: '/', method: 'GET', timeout: 2_000 }, (response) => {
      response.resume();
      resolve(true);
    });
    probe.on('timeout', () => probe.destroy());
    probe.on('error', () => resolve(false));
    probe.end();
  });
}

/**
 * A one-node radosgw with its user and buckets. Between the ports found free and the daemons binding them another
 * process may take one: a start that fails on an address in use is made again, in a new folder on new ports.
 */
export async function startRgw(options: RgwOptions = {}): Promise<RgwHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/Address already in use|EADDRINUSE/.test(error instanceof Error ? error.message : String(error))) throw error;
    }
  }
}

async function startOnce(options: RgwOptions): Promise<RgwHandle> {
  const missing = DAEMONS.filter((path) => !executable(path));
  if (missing.length > 0) {
    throw new Error(`The radosgw tests need ${missing.join(', ')}: run \`apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd ceph-common uuid-runtime\` (.ci/run does).`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'rgw-'));
  for (const sub of ['run', 'log', 'mon', 'osd', 'rgw']) mkdirSync(join(dir, sub));
  const conf = join(dir, 'ceph.conf');
  const children: { name: string; child: ChildProcess }[] = [];
  let stopped = false;

  // radosgw first, then the OSD, then the monitor; SIGKILL, since the folder is thrown away (the note: 1.5 s in all).
  const killAll = () => {
    for (const { child } of [...children].reverse()) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  };
  // A test process that ends without its after-all hooks (an uncaught error, process.exit, mocha's --exit, Ctrl-C)
  // still leaves nothing: the daemons run in the foreground as its children, killed here synchronously.
  const onExit = () => {
    killAll();
    rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    onExit();
    // the signal's own ending, once nobody else handles it
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stop = stopOnExit('radosgw', async () => {
    stopped = true;
    for (const { child } of [...children].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    process.removeListener('exit', onExit);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    rmSync(dir, { recursive: true, force: true });
  });

  // Asynchronous, so that what a test starts beside radosgw (an embedded cluster) is not held up while the tools run.
  const run = (command: string, args: string[]): Promise<string> => new Promise((resolve, reject) => {
    execFile(command, ['-c', conf, ...args], { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed (${error.code ?? error.signal}): ${(stderr || stdout).trim().split('\n').slice(-5).join(' / ')}`));
      else resolve(stdout);
    });
  });
  const daemon = (name: string, command: string, args: string[]) => {
    const child = spawn(command, ['-f', '-c', conf, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-2_000); });
    children.push({ name, child });
    return { child, stderr: () => stderr };
  };
  /** the log's last lines, and its bind failure if it had one (radosgw says it there, not on stderr) */
  const logTail = (name: string) => {
    try {
      const lines = readFileSync(join(dir, 'log', `${name}.log`), 'utf8').trim().split('\n');
      const bind = lines.find((line) => line.includes('Address already in use'));
      return [...(bind ? [bind] : []), ...lines.slice(-5)].join(' / ');
    } catch {
      return '(no log)';
    }
  };

  try {
    const msMin = await freePortRange(24);
    const ports = { monV2: msMin, monV1: msMin + 1, msMin: msMin + 2, msMax: msMin + 22, http: msMin + 23 };
    const fsid = randomUUID();
    writeFileSync(conf, cephConf(dir, fsid, ports));
    await run('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${ports.monV2},v1:127.0.0.1:${ports.monV1}]`, join(dir, 'monmap')]);
    await run('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap')]);
    const mon = daemon('mon.a', 'ceph-mon', ['-i', 'a']);
    const osdUuid = randomUUID();
    // `ceph osd new` waits for the monitor to form its quorum: the monitor's sign of life.
    const osdId = (await run('ceph', ['--connect-timeout', '30', 'osd', 'new', osdUuid])).trim();
    mkdirSync(join(dir, 'osd', `ceph-${osdId}`));
    await run('ceph-osd', ['-i', osdId, '--mkfs', '--osd-uuid', osdUuid]);
    const osd = daemon(`osd.${osdId}`, 'ceph-osd', ['-i', osdId]);
    const gateway = daemon('client.rgw', 'radosgw', ['-n', 'client.rgw']);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      for (const [name, d] of [['mon.a', mon], [`osd.${osdId}`, osd], ['client.rgw', gateway]] as const) {
        if (d.child.exitCode !== null || d.child.signalCode !== null) {
          throw new Error(`${name} exited (${d.child.exitCode ?? d.child.signalCode}) before radosgw answered: ${[d.stderr().trim(), logTail(name)].filter(Boolean).join(' / ')}`);
        }
      }
      if (await answers(ports.http)) break;
      if (Date.now() > deadline) throw new Error(`radosgw did not answer on 127.0.0.1:${ports.http} within ${START_TIMEOUT_MS / 1000} s: ${logTail('client.rgw')}`);
      // the next poll waits for the gateway's own answer or refusal, never a fixed pause alone
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const accessKeyId = `RGW${randomBytes(8).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(20).toString('base64url');
    const admin = (args: string[]) => run('radosgw-admin', ['-n', 'client.admin', ...args]);
    await admin(['user', 'create', '--uid', 'tests', '--display-name', 'tests', '--access-key', accessKeyId, '--secret-key', secretAccessKey]);
    const endpoint = `http://127.0.0.1:${ports.http}`;
    const region = 'default';
    const createBucket = async (name: string, bucketOptions: { objectLock?: boolean } = {}) => {
      const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
      try {
        await client.send(new CreateBucketCommand({ Bucket: name, ...(bucketOptions.objectLock ? { ObjectLockEnabledForBucket: true } : {}) }));
      } finally {
        client.destroy();
      }
    };
    for (const name of options.buckets ?? []) await createBucket(name);
    for (const name of options.objectLockBuckets ?? []) await createBucket(name, { objectLock: true });
    if (stopped) throw new Error('radosgw was stopped while it started');
    return { endpoint, port: ports.http, region, accessKeyId, secretAccessKey, directory: dir, pids: children.map(({ child }) => child.pid!), admin, createBucket, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
