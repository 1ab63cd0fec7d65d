// The repository gateway as built (src/volumes/restic/gateway.ts, gateway-credentials.ts), run with real tools: the
// Job's own script and environment under Debian's rclone, over s3rver, and Debian's restic as the movers of two
// namespaces. What a profile's user could do with everything their mover holds (the repository URL with its run
// password, the restic password, the certificate) is tried: their own repository works; another namespace's answers
// 403, a wrong password 401, deleting through it fails (append-only); the bucket credentials are nowhere in what the
// mover gets. The Pod network that brings a mover to the gateway in a cluster is tested in tests/support.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate, createHash, randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { buildGatewayObjects, gatewayHostnames, gatewayName, gatewayScript, GATEWAY_PORT } from '../../src/volumes/restic/gateway.ts';
import { makeGatewayCertificate, makeGatewayUsers } from '../../src/volumes/restic/gateway-credentials.ts';

const BUCKET = 'gateway';
type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string }; fieldRef?: { fieldPath: string } } };

describe('volumes: the restic repository gateway with real rclone and restic', function () {
  this.timeout(120_000);
  let s3: S3ServerHandle;
  let dir: string;
  let gateway: ChildProcess | undefined;
  const podIp = `127.${randomInt(20, 250)}.${randomInt(1, 250)}.${randomInt(2, 250)}`;
  const users = makeGatewayUsers(['alice', 'bob']);
  const password = (ns: string) => users.find((u) => u.namespace === ns)!.password;
  let secretData: Record<string, string>;
  let cert: string;

  before(async () => {
    s3 = await startS3Server({ buckets: [BUCKET] });
    dir = mkdtempSync(join(tmpdir(), 'gateway-'));
    const request = {
      runId: 'kf-20261207-120000-abcdef', operation: 'backup' as const, namespace: 'kubeflow', namespaces: ['alice', 'bob'],
      s3: { endpoint: s3.endpoint, bucket: BUCKET, path: 'kf', accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey },
      image: 'docker.io/rclone/rclone:1.68.2', activeDeadlineSeconds: 3600, startTimeoutSeconds: 60, remedies: { imageSetting: () => 'x' },
    };
    // the product's certificate, for the Pod's IP besides the Service's names: the test reaches the gateway without DNS
    const made = await makeGatewayCertificate(gatewayHostnames('gw', 'kubeflow'), 1, new Date(), [podIp]);
    cert = made.certificate;
    const { secret, job } = buildGatewayObjects(request, users, made);
    secretData = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    const files = join(dir, 'gateway');
    mkdirSync(files);
    for (const key of ['htpasswd', 'tls.crt', 'tls.key']) writeFileSync(join(files, key), secretData[key]!);
    // the container as a kubelet runs it: its env from the spec, the Secret and the downward API; its script with the
    // Secret's folder where the Pod mounts it
    const container = (job.spec as { template: { spec: { containers: { command: string[]; env: Env[] }[] } } }).template.spec.containers[0]!;
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const e of container.env) {
      env[e.name] = e.value ?? (e.valueFrom?.secretKeyRef ? secretData[e.valueFrom.secretKeyRef.key]! : e.valueFrom?.fieldRef?.fieldPath === 'status.podIP' ? podIp : '');
    }
    env.HOME = dir;
    const script = container.command[2]!.replace(/\/etc\/kubeflow-upgrader\/gateway/g, files).replace('/tmp/rclone-cache', join(dir, 'cache'));
    expect(container.command[2]).to.equal(gatewayScript('gateway/kf/restic', true));
    gateway = spawn('sh', ['-c', script], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
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
    writeFileSync(join(dir, 'ca.pem'), cert);
    const url = `rest:https://${options.user ?? namespace}:${options.pass ?? password(namespace)}@${podIp}:${GATEWAY_PORT}/${options.repo ?? namespace}/`;
    return execa('restic', ['--cacert', join(dir, 'ca.pem'), '-r', url, ...args], {
      reject: false, extendEnv: false, env: { PATH: process.env.PATH, HOME: dir, RESTIC_PASSWORD: `restic-${namespace}`, RESTIC_CACHE_DIR: join(dir, 'rc') },
    });
  }

  it('the Secret holds hashes of the run passwords, never the passwords; its certificate names the Service', () => {
    for (const u of users) {
      expect(secretData.htpasswd).to.include(`${u.namespace}:{SHA}${createHash('sha1').update(u.password).digest('base64')}\n`);
      expect(JSON.stringify(secretData)).to.not.include(u.password);
    }
    const x = new X509Certificate(cert);
    for (const host of gatewayHostnames('gw', 'kubeflow')) expect(x.checkHost(host)).to.equal(host);
    expect(x.checkHost('gw.other.svc')).to.equal(undefined);
    expect(gatewayName('kf-20261207-120000-abcdef', 'backup')).to.match(/^kfu-gateway-[0-9a-f]{12}$/);
  });

  it('serves HTTP/1.1 only: a client offering HTTP/2 and HTTP/1.1 gets HTTP/1.1, one connection per request in flight', async () => {
    const protocol = await new Promise<string | false | null>((resolve, reject) => {
      const socket = connectTls({ host: podIp, port: GATEWAY_PORT, ca: cert, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
        resolve(socket.alpnProtocol ?? null);
        socket.destroy();
      });
      socket.on('error', reject);
    });
    expect(protocol).to.equal('http/1.1');
  });

  it('a namespace reaches its own repository: init, backup, restore byte-identical, stored where the movers always stored it', async () => {
    const data = join(dir, 'data');
    mkdirSync(data);
    const bytes = randomBytes(100_000);
    writeFileSync(join(data, 'notebook.bin'), bytes);
    expect((await restic('alice', ['init'])).exitCode).to.equal(0);
    const backup = await restic('alice', ['backup', data]);
    expect(backup.exitCode, backup.stderr).to.equal(0);
    const out = join(dir, 'out');
    expect((await restic('alice', ['restore', 'latest', '--target', out])).exitCode).to.equal(0);
    expect(readFileSync(join(out, data, 'notebook.bin')).equals(bytes)).to.equal(true);
    const listed = await execa('restic', ['-o', 's3.bucket-lookup=path', 'snapshots', '--json'], {
      reject: false, extendEnv: false,
      env: { PATH: process.env.PATH, HOME: dir, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: 'restic-alice', RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kf/restic/alice` },
    });
    expect(listed.exitCode, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout)).to.have.length(1);
  });

  it('another namespace\'s repository answers 403, a wrong password 401, and nothing stored can be deleted through it', async () => {
    expect((await restic('bob', ['init'])).exitCode).to.equal(0);
    const across = await restic('alice', ['snapshots'], { repo: 'bob' });
    expect(across.exitCode).to.not.equal(0);
    expect(across.stderr).to.include('403 Forbidden');
    const asBob = await restic('alice', ['snapshots'], { user: 'bob', pass: password('alice') });
    expect(asBob.stderr).to.include('401 Unauthorized');
    const forget = await restic('alice', ['forget', '--keep-last', '0', '--prune']);
    const left = await restic('alice', ['snapshots', '--json']);
    expect(JSON.parse(left.stdout), forget.stderr).to.have.length(1);
    // adding a key writes a new file, which append-only allows (the password opens the repository anyway); removing one
    // deletes, which it refuses (the key removed is not the one in use, which restic itself would refuse to remove)
    writeFileSync(join(dir, 'other-password'), 'another');
    expect((await restic('alice', ['key', 'add', '--new-password-file', join(dir, 'other-password')])).exitCode).to.equal(0);
    const keys = JSON.parse((await restic('alice', ['key', 'list', '--json'])).stdout) as { id: string; current: boolean }[];
    expect(keys).to.have.length(2);
    const removed = await restic('alice', ['key', 'remove', keys.find((k) => !k.current)!.id]);
    expect(removed.exitCode).to.not.equal(0);
    expect(removed.stderr).to.match(/403|Forbidden|not allowed|append/i);
    expect((JSON.parse((await restic('alice', ['key', 'list', '--json'])).stdout) as unknown[]).length).to.equal(2);
  });
});

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => { socket.destroy(); resolve(true); });
    socket.on('error', () => resolve(false));
  });
}
