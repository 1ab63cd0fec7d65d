// The restore gateway as built (src/volumes/restic/restore-gateway.ts and its bundle), run as its Job runs it: the
// ConfigMap's bundle under this machine's Node 24 with the container's environment, the Secret's files and the store
// CA, over an S3 server (s3rver behind HTTPS with a CA of its own: restic-restore-gateway.process.test.ts; Ceph's
// radosgw: restic-restore-gateway.rgw.ts), and restic 0.14 as the movers of two namespaces. The repositories
// are written directly (s3:), as the backup gateway leaves them. What is tried: a restore through the redirects is
// byte-identical and reads every byte from S3 itself (the gateway answers 307 and never a file's body); another
// namespace's files and listings answer 403, a wrong password 401, every write but a lock file is refused, and the
// restore's lock is written and removed.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { gatewayHostnames, GATEWAY_PORT } from '../../src/volumes/restic/gateway.ts';
import { makeGatewayCertificate, makeGatewayUsers } from '../../src/volumes/restic/gateway-credentials.ts';
import { buildRestoreGatewayObjects } from '../../src/volumes/restic/restore-gateway.ts';
import { restoreGatewayBundle } from '../../src/volumes/restic/restore-gateway-bundle.ts';

const BUCKET = 'restores';

/** An S3 server holding BUCKET, as the suite needs it: its endpoint, a key pair, and its CA when over HTTPS. */
export interface RestoreGatewayStore {
  endpoint: string;
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  caPem?: string;
  stop(): Promise<void>;
}
type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string }; fieldRef?: { fieldPath: string } } };
type Container = { command: string[]; env: Env[]; image: string };

export function describeRestoreGateway(label: string, startStore: () => Promise<RestoreGatewayStore>): void {
describe(`volumes: the restic restore gateway (redirects to S3) with real restic and ${label}`, function () {
  this.timeout(180_000);
  let s3: RestoreGatewayStore;
  let dir: string;
  let gateway: ChildProcess | undefined;
  let said = '';
  const podIp = `127.${randomInt(20, 250)}.${randomInt(1, 250)}.${randomInt(2, 250)}`;
  const users = makeGatewayUsers(['alice', 'bob']);
  const password = (ns: string) => users.find((u) => u.namespace === ns)!.password;
  let trust: string;
  let container: Container;
  let secretData: Record<string, string>;
  const bytes = randomBytes(3 * 1024 * 1024 + 12345);
  const small = randomBytes(777);
  let caFile: string | undefined;
  const caArgs = () => (caFile ? ['--cacert', caFile] : []);

  const direct = (ns: string, args: string[]) => execa('restic', [...caArgs(), '-o', 's3.bucket-lookup=path', ...args], {
    reject: false, extendEnv: false,
    env: { PATH: process.env.PATH, HOME: dir, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: `restic-${ns}`, RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kf/restic/${ns}`, RESTIC_CACHE_DIR: join(dir, 'direct-cache'), ...(s3.region ? { AWS_DEFAULT_REGION: s3.region } : {}) },
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'restore-gateway-'));
    s3 = await startStore();
    if (s3.caPem) {
      caFile = join(dir, 's3-ca.pem');
      writeFileSync(caFile, s3.caPem);
    }
    // two repositories as the backups leave them, each with its data
    for (const ns of ['alice', 'bob']) {
      const data = join(dir, `data-${ns}`);
      mkdirSync(join(data, 'sub'), { recursive: true });
      writeFileSync(join(data, 'model.ckpt'), ns === 'alice' ? bytes : randomBytes(1000));
      writeFileSync(join(data, 'sub', 'notes.txt'), small);
      expect((await direct(ns, ['init'])).exitCode).to.equal(0);
      const inFolder = await execa('restic', [...caArgs(), '-o', 's3.bucket-lookup=path', 'backup', '.'], {
        cwd: data, reject: false, extendEnv: false,
        env: { PATH: process.env.PATH, HOME: dir, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: `restic-${ns}`, RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kf/restic/${ns}`, RESTIC_CACHE_DIR: join(dir, 'direct-cache'), ...(s3.region ? { AWS_DEFAULT_REGION: s3.region } : {}) },
      });
      expect(inFolder.exitCode, inFolder.stderr).to.equal(0);
    }
    const request = {
      runId: 'kf-20261207-120000-abcdef', operation: 'restore' as const, namespace: 'kubeflow', namespaces: ['alice', 'bob'],
      s3: { endpoint: s3.endpoint, bucket: BUCKET, path: 'kf', accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, ...(s3.region ? { region: s3.region } : {}), ...(s3.caPem ? { tlsCaChain: s3.caPem } : {}) },
      image: 'docker.io/rclone/rclone:1.68.2', activeDeadlineSeconds: 3600, startTimeoutSeconds: 60, remedies: { imageSetting: () => 'x' },
    };
    const made = await makeGatewayCertificate(gatewayHostnames('gw', 'kubeflow'), 1, new Date(), [podIp]);
    const { secret, job, configMap } = buildRestoreGatewayObjects(request, users, made, await restoreGatewayBundle());
    trust = s3.caPem ? `${made.certificate.trimEnd()}\n${s3.caPem}` : made.certificate;
    secretData = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    // the Pod's mounts: the Secret's files, the ConfigMap's bundle, the store CA
    const files = join(dir, 'gateway');
    const code = join(dir, 'gateway-code');
    const storeCa = join(dir, 'store-ca');
    for (const d of [files, code, storeCa]) mkdirSync(d);
    for (const key of ['htpasswd', 'tls.crt', 'tls.key']) writeFileSync(join(files, key), secretData[key]!);
    for (const [key, value] of Object.entries((configMap!.data ?? {}) as Record<string, string>)) writeFileSync(join(code, key), value);
    if (secretData['store-ca.crt']) writeFileSync(join(storeCa, 'store-ca.crt'), secretData['store-ca.crt']);
    container = (job.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;
    const mounts: [string, string][] = [['/etc/kubeflow-upgrader/gateway-code', code], ['/etc/kubeflow-upgrader/gateway', files], ['/etc/kubeflow-upgrader/store-ca', storeCa]];
    const local = (text: string) => mounts.reduce((t, [from, to]) => t.split(from).join(to), text);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const e of container.env) {
      env[e.name] = local(e.value ?? (e.valueFrom?.secretKeyRef ? secretData[e.valueFrom.secretKeyRef.key]! : e.valueFrom?.fieldRef?.fieldPath === 'status.podIP' ? podIp : ''));
    }
    expect(container.command[0]).to.equal('node');
    gateway = spawn(process.execPath, container.command.slice(1).map(local), { env, stdio: ['ignore', 'ignore', 'pipe'] });
    gateway.stderr!.on('data', (c: Buffer) => { said += c.toString(); });
    // the sign: the gateway accepts connections on the Pod's IP
    for (const deadline = Date.now() + 30_000; !(await accepts(podIp, GATEWAY_PORT));) {
      if (Date.now() > deadline || gateway.exitCode !== null) throw new Error(`the gateway did not start: ${said}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(async () => {
    gateway?.kill('SIGKILL');
    await s3?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function restic(namespace: string, args: string[], options: { user?: string; pass?: string; repo?: string } = {}) {
    writeFileSync(join(dir, 'trust.pem'), trust);
    const url = `rest:https://${options.user ?? namespace}:${options.pass ?? password(namespace)}@${podIp}:${GATEWAY_PORT}/${options.repo ?? namespace}/`;
    return execa('restic', ['--cacert', join(dir, 'trust.pem'), '-r', url, ...args], {
      reject: false, extendEnv: false, env: { PATH: process.env.PATH, HOME: dir, RESTIC_PASSWORD: `restic-${namespace}`, RESTIC_CACHE_DIR: join(dir, `cache-${namespace}`) },
    });
  }

  /** one request to the gateway as `user`, the answer's status, headers and body */
  function ask(method: string, path: string, user: string, pass: string, body?: Buffer) {
    return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpsRequest({ host: podIp, port: GATEWAY_PORT, method, path, ca: trust, servername: 'gw.kubeflow.svc', headers: { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`, accept: 'application/vnd.x.restic.rest.v2' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('runs the official node image with the bundle from its ConfigMap; the bucket keys only from its Secret', () => {
    expect(container.image).to.match(/^docker\.io\/library\/node:24\./);
    const keyEnv = container.env.filter((e) => e.name === 'AWS_ACCESS_KEY_ID' || e.name === 'AWS_SECRET_ACCESS_KEY');
    expect(keyEnv.map((e) => e.valueFrom?.secretKeyRef?.key)).to.deep.equal(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']);
    expect(JSON.stringify(container)).to.not.include(s3.secretAccessKey);
    for (const u of users) expect(JSON.stringify(secretData)).to.not.include(u.password);
  });

  it('a namespace restores its snapshot byte-identical through the redirects, and leaves no lock behind', async () => {
    const out = join(dir, 'out-alice');
    const restored = await restic('alice', ['restore', 'latest', '--target', out]);
    expect(restored.exitCode, `${restored.stderr}\n${said}`).to.equal(0);
    expect(readFileSync(join(out, 'model.ckpt')).equals(bytes)).to.equal(true);
    expect(readFileSync(join(out, 'sub', 'notes.txt')).equals(small)).to.equal(true);
    const locks = await direct('alice', ['list', 'locks', '--no-lock']);
    expect(locks.exitCode, locks.stderr).to.equal(0);
    expect(locks.stdout.trim()).to.equal('');
  });

  it('a file is a 307 to a presigned URL of exactly that object, which needs no other credential and keeps a Range', async () => {
    const listed = await ask('GET', '/alice/data/', 'alice', password('alice'));
    expect(listed.status).to.equal(200);
    expect(listed.headers['content-type']).to.equal('application/vnd.x.restic.rest.v2');
    const packs = JSON.parse(listed.body) as { name: string; size: number }[];
    expect(packs.length).to.be.greaterThan(0);
    const pack = packs[0]!;
    const head = await ask('HEAD', `/alice/data/${pack.name}`, 'alice', password('alice'));
    expect(head.status).to.equal(200);
    expect(Number(head.headers['content-length'])).to.equal(pack.size);
    const got = await ask('GET', `/alice/data/${pack.name}`, 'alice', password('alice'));
    expect(got.status).to.equal(307);
    expect(got.body).to.equal('');
    const location = new URL(String(got.headers.location));
    expect(`${location.protocol}//${location.host}`).to.equal(s3.endpoint);
    expect(location.pathname).to.equal(`/${BUCKET}/kf/restic/alice/data/${pack.name.slice(0, 2)}/${pack.name}`);
    expect(location.searchParams.get('X-Amz-SignedHeaders')).to.equal('host');
    expect(location.search).to.not.include(s3.secretAccessKey);
    const range = await fetchRange(location, caFile, 10, 19);
    expect(range.status).to.equal(206);
    expect(range.body.length).to.equal(10);
  });

  it("another namespace's files and listings answer 403, a wrong password 401", async () => {
    const across = await restic('alice', ['snapshots'], { repo: 'bob' });
    expect(across.exitCode).to.not.equal(0);
    expect(across.stderr).to.include('403');
    for (const path of ['/bob/config', '/bob/data/', '/bob/keys/', `/bob/snapshots/${'a'.repeat(64)}`]) {
      expect((await ask('GET', path, 'alice', password('alice'))).status, path).to.equal(403);
    }
    expect((await ask('HEAD', '/bob/config', 'alice', password('alice'))).status).to.equal(403);
    const wrong = await restic('alice', ['snapshots'], { pass: password('bob') });
    expect(wrong.stderr).to.include('401');
    expect((await ask('GET', '/alice/config', 'alice', 'not-the-password')).status).to.equal(401);
    expect((await ask('GET', '/alice/config', 'mallory', password('alice'))).status).to.equal(401);
  });

  it('refuses every write but a lock file: no repository, key, snapshot, index or pack written or removed', async () => {
    const name = randomBytes(32).toString('hex');
    const auth = ['alice', password('alice')] as const;
    expect((await ask('POST', '/alice/?create=true', ...auth)).status).to.equal(403);
    for (const type of ['data', 'keys', 'snapshots', 'index']) {
      expect((await ask('POST', `/alice/${type}/${name}`, ...auth, Buffer.from('x'))).status, type).to.equal(403);
      expect((await ask('DELETE', `/alice/${type}/${name}`, ...auth)).status, type).to.equal(403);
    }
    expect((await ask('POST', '/alice/config', ...auth, Buffer.from('x'))).status).to.equal(403);
    expect((await ask('DELETE', '/alice/config', ...auth)).status).to.equal(403);
    expect((await ask('PUT', `/alice/locks/${name}`, ...auth, Buffer.from('x'))).status).to.equal(405);
    // (restic itself retries a refused write for ~45 s (internal/backend/backend_retry.go): the requests above are what it sends)
    const snapshots = await direct('alice', ['snapshots', '--json', '--no-lock']);
    expect(JSON.parse(snapshots.stdout)).to.have.length(1);
    // a lock file is written and removed, as the restore's own lock is
    expect((await ask('POST', `/alice/locks/${name}`, ...auth, Buffer.from('{}'))).status).to.equal(200);
    expect((await ask('GET', '/alice/locks/', ...auth)).body).to.include(name);
    expect((await ask('DELETE', `/alice/locks/${name}`, ...auth)).status).to.equal(200);
    expect((await ask('GET', '/alice/locks/', ...auth)).body).to.not.include(name);
  });
});
}

function fetchRange(url: URL, caFile: string | undefined, from: number, to: number) {
  return new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { ...(caFile ? { ca: readFileSync(caFile) } : {}), headers: { range: `bytes=${from}-${to}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => { socket.destroy(); resolve(true); });
    socket.on('error', () => resolve(false));
  });
}
