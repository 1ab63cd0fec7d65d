// The plain-file gateway as built (src/volumes/files-gateway.ts), run with real tools: the Job's own script, files and
// environment under Debian's rclone over an S3 server (s3rver in files-gateway-access.process.test.ts, a real radosgw in
// files-gateway-access.rgw.ts), and Debian's rclone as the movers of two namespaces. What a profile's
// user could do with everything their mover holds (the gateway's address, their namespace's user and run password,
// the pinned host key) is tried: their own folder of the run works; `..`, `/` and another namespace's name stay inside
// it; another namespace's password, a wrong one, or a server with another key are refused; a restore's gateway writes
// nothing; the earlier backup's copy the gateway seeds is there before it serves, and nothing of the earlier backup can
// be reached or deleted.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { buildFilesGatewayObjects, FILES_GATEWAY_PORT, makeHostKey, type SeedCopy } from '../../src/volumes/files-gateway.ts';
import { makeGatewayUsers } from '../../src/volumes/restic/gateway-credentials.ts';

const BUCKET = 'files';
const EARLIER = 'kf-20261206-120000-aaaaaa';
const RUN = 'kf-20261207-120000-bbbbbb';
type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string }; fieldRef?: { fieldPath: string } } };

/** An S3 server holding `bucket`, path-style, with one key pair. */
export interface GatewayBackend {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

export function describeFilesGatewayAccess(name: string, start: (bucket: string) => Promise<GatewayBackend>): void {
  describe(`volumes: the plain-file gateway with real rclone, on ${name}`, function () {
    this.timeout(120_000);
    let s3: GatewayBackend;
    let dir: string;
    const running: ChildProcess[] = [];
    const users = makeGatewayUsers(['alice', 'bob']);
    const password = (ns: string) => users.find((u) => u.namespace === ns)!.password;
    const key = makeHostKey();

    /** rclone as the bucket's owner (the test's own view), never as a mover */
    const owner = (args: string[]) => execa('rclone', args, {
      extendEnv: false,
      env: {
        PATH: process.env.PATH, HOME: dir, RCLONE_CONFIG_FILE: join(dir, 'none.conf'), RCLONE_CONFIG_S_TYPE: 's3', RCLONE_CONFIG_S_PROVIDER: 'Other',
        RCLONE_CONFIG_S_ENDPOINT: s3.endpoint, RCLONE_CONFIG_S_ACCESS_KEY_ID: s3.accessKeyId, RCLONE_CONFIG_S_SECRET_ACCESS_KEY: s3.secretAccessKey,
        RCLONE_CONFIG_S_FORCE_PATH_STYLE: 'true',
      },
    });

    /** Starts the gateway's container as a kubelet would: its env from the spec, the Secret and the downward API. */
    async function startGateway(operation: 'backup' | 'restore', seeds: SeedCopy[]): Promise<string> {
      const podIp = `127.${randomInt(20, 250)}.${randomInt(1, 250)}.${randomInt(2, 250)}`;
      const request = {
        runId: RUN, operation, namespace: 'kubeflow', namespaces: ['alice', 'bob'], seeds,
        s3: { endpoint: s3.endpoint, bucket: BUCKET, path: 'kf', accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey },
        image: 'docker.io/rclone/rclone:1.68.2', activeDeadlineSeconds: 3600, startTimeoutSeconds: 60, remedies: { imageSetting: () => 'x' },
      };
      const { secret, job } = buildFilesGatewayObjects(request, users, key.privateKey);
      const data = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
      const files = join(dir, `gateway-${operation}`);
      mkdirSync(files);
      for (const name of ['users', 'host.key', 'auth-proxy', 'seeds']) writeFileSync(join(files, name), data[name]!);
      const container = (job.spec as { template: { spec: { containers: { command: string[]; env: Env[] }[] } } }).template.spec.containers[0]!;
      const mounted = (text: string) => text.replace(/\/etc\/kubeflow-upgrader\/gateway|\/tmp\//g, (path) => (path === '/tmp/' ? `${dir}/` : files));
      const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, RCLONE_CONFIG_FILE: join(dir, 'none.conf') };
      for (const e of container.env) {
        env[e.name] = mounted(e.value ?? (e.valueFrom?.secretKeyRef ? data[e.valueFrom.secretKeyRef.key]! : e.valueFrom?.fieldRef?.fieldPath === 'status.podIP' ? podIp : ''));
      }
      const gateway = spawn('sh', ['-c', mounted(container.command[2]!)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      running.push(gateway);
      let said = '';
      gateway.stderr!.on('data', (c: Buffer) => { said += c.toString(); });
      // the sign: the gateway accepts connections on the Pod's IP (after its seed copies)
      for (const deadline = Date.now() + 60_000; !(await accepts(podIp, FILES_GATEWAY_PORT));) {
        if (Date.now() > deadline || gateway.exitCode !== null) throw new Error(`the gateway did not start: ${said}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return podIp;
    }

    /** rclone as a mover of `namespace` would run it, with what its Secret and Job give it (or what it tries instead). */
    function mover(host: string, namespace: string, args: string[], options: { user?: string; pass?: string; knownHosts?: string } = {}) {
      const knownHosts = join(dir, `known_hosts-${namespace}-${options.knownHosts ? 'other' : 'pinned'}`);
      writeFileSync(knownHosts, `${options.knownHosts ?? key.knownHosts}\n`);
      return execa('sh', ['-c', 'RCLONE_CONFIG_G_PASS=$(printf %s "$PASS" | rclone obscure -) exec rclone "$@"', 'mover', ...args], {
        reject: false, extendEnv: false,
        env: {
          PATH: process.env.PATH, HOME: dir, RCLONE_CONFIG_FILE: join(dir, 'none.conf'), PASS: options.pass ?? password(namespace),
          RCLONE_CONFIG_G_TYPE: 'sftp', RCLONE_CONFIG_G_HOST: host, RCLONE_CONFIG_G_PORT: String(FILES_GATEWAY_PORT),
          RCLONE_CONFIG_G_USER: options.user ?? namespace, RCLONE_CONFIG_G_KNOWN_HOSTS_FILE: knownHosts,
          // a refused login is final: no retries that only make the test wait
          RCLONE_RETRIES: '1', RCLONE_LOW_LEVEL_RETRIES: '1',
        },
      });
    }

    before(async () => {
      s3 = await start(BUCKET);
      dir = mkdtempSync(join(tmpdir(), 'files-gateway-'));
      // an earlier backup of both namespaces' volumes, as the bucket's owner wrote it
      for (const ns of ['alice', 'bob']) {
        const src = join(dir, `earlier-${ns}`);
        mkdirSync(src);
        writeFileSync(join(src, 'notes.txt'), `${ns}'s notes\n`);
        await owner(['copy', src, `s:${BUCKET}/kf/backups/${EARLIER}/volumes/${ns}/workspace`]);
      }
    });
    after(async () => {
      for (const p of running) p.kill('SIGKILL');
      await s3?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('a backup\'s gateway: each namespace writes its own folder of the run only, seeded with its earlier copy', async () => {
      const host = await startGateway('backup', [{ namespace: 'alice', pvc: 'workspace', from: EARLIER }]);
      // seeded before it served: the earlier copy is in the run's folder, inside the bucket
      expect((await owner(['cat', `s:${BUCKET}/kf/backups/${RUN}/volumes/alice/workspace/notes.txt`])).stdout).to.equal('alice\'s notes');

      const src = join(dir, 'alice-volume');
      mkdirSync(src);
      writeFileSync(join(src, 'model.bin'), 'weights');
      const synced = await mover(host, 'alice', ['sync', '--checksum', src, 'g:workspace']);
      expect(synced.exitCode, synced.stderr).to.equal(0);
      expect((await owner(['lsf', '-R', `s:${BUCKET}/kf/backups/${RUN}/volumes/alice/workspace`])).stdout.split('\n').filter(Boolean)).to.deep.equal(['model.bin']);
      // every file compared by MD5 through the gateway: the server answers md5sum from the bucket's own hashes
      const md5 = await mover(host, 'alice', ['md5sum', 'g:workspace']);
      expect(md5.stdout).to.match(/^[0-9a-f]{32} {2}model\.bin$/m);

      // whatever path the mover names, it stays in alice's folder of this run
      for (const path of ['g:', 'g:..', 'g:/', 'g:../..', 'g:../bob']) {
        const listed = await mover(host, 'alice', ['lsf', path]);
        expect(listed.stdout.split('\n').filter(Boolean), path).to.satisfy((names: string[]) => names.every((n) => n === 'workspace/'));
      }
      // bob's folder, bob's user with alice's password, a made-up user, a wrong password: nothing opens
      const bobWrites = await mover(host, 'bob', ['copy', src, 'g:workspace']);
      expect(bobWrites.exitCode).to.equal(0);
      for (const attempt of [{ user: 'bob' }, { user: 'carol' }, { pass: password('alice').replace(/^./, (c) => (c === '0' ? '1' : '0')) }, { user: '../alice' }]) {
        const tried = await mover(host, 'alice', ['lsf', 'g:'], attempt);
        expect(tried.exitCode, JSON.stringify(attempt)).to.not.equal(0);
        expect(tried.stderr).to.match(/unable to authenticate/);
      }
      // a server showing any other key is refused before a password is sent
      const spoofed = await mover(host, 'alice', ['lsf', 'g:'], { knownHosts: makeHostKey().knownHosts });
      expect(spoofed.stderr).to.match(/knownhosts: key mismatch/);

      // the earlier backup cannot be reached, so not deleted: the mover's purge of everything it sees leaves it whole
      await mover(host, 'alice', ['purge', 'g:']);
      expect((await owner(['cat', `s:${BUCKET}/kf/backups/${EARLIER}/volumes/alice/workspace/notes.txt`])).stdout).to.equal('alice\'s notes');
      expect((await owner(['lsf', `s:${BUCKET}/kf/backups/${RUN}/volumes/bob/workspace`])).stdout).to.include('model.bin');
      // the bucket's keys are nowhere in what a mover gets
      expect(key.knownHosts).to.not.include(s3.secretAccessKey);
    });

    it('a restore\'s gateway: each namespace reads its own folder of the backup and changes nothing', async () => {
      const host = await startGateway('restore', []);
      const out = join(dir, 'restored');
      const copied = await mover(host, 'bob', ['copy', 'g:workspace', out]);
      expect(copied.exitCode, copied.stderr).to.equal(0);
      expect(readFileSync(join(out, 'model.bin'), 'utf8')).to.equal('weights');
      const written = await mover(host, 'bob', ['copyto', join(out, 'model.bin'), 'g:workspace/planted.bin']);
      expect(written.exitCode).to.not.equal(0);
      expect(written.stderr).to.match(/Read only file system/);
      const deleted = await mover(host, 'bob', ['delete', 'g:workspace']);
      expect(deleted.exitCode).to.not.equal(0);
      expect((await owner(['lsf', `s:${BUCKET}/kf/backups/${RUN}/volumes/bob/workspace`])).stdout.split('\n').filter(Boolean)).to.deep.equal(['model.bin']);
    });
  });
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}
