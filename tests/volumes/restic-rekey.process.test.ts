// Converging the namespaces' restic repositories on their own passwords (src/volumes/restic/rekey.ts): one hardened
// Job run by the simulated kubelet with Debian's restic against s3rver. The oracle is restic itself, run directly with
// each password: which passwords open each repository, and that the older snapshot's files read back whole.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { rekeyResticRepositories, buildRekeyJob, buildRekeySecret } from '../../src/volumes/restic/rekey.ts';
import { listResticRepositories } from '../../src/volumes/restic/repositories.ts';
import { openObjectStore } from '../../src/store/open.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { s3For, startVolumeCluster, type VolumeCluster } from './helpers.ts';

const BUCKET = 'kf-rekey';
// Passwords as the product derives them would do; fixed strings keep the oracle free of the product's derivation.
const OLD = 'old-password-0123456789abcdef';
const NEW: Record<string, string> = { alice: 'alice-new-password-fedcba98', bob: 'bob-new-password-76543210', carol: 'carol-new-password-0f0f0f', dave: 'dave-new-password-a1a1a1a1' };
const OTHER = 'a-password-nobody-here-holds';

describe('volumes: the restic key Job gives each repository its own password and removes the others', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let cluster: VolumeCluster;
  let work: string;

  const env = (namespace: string, password: string) => ({
    PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    RESTIC_PASSWORD: password, RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kubeflow/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
  });
  const restic = (namespace: string, password: string, args: string[]) => execa('restic', ['-o', 's3.bucket-lookup=path', ...args], {
    env: env(namespace, password), extendEnv: false, reject: false,
  });
  const opens = async (namespace: string, password: string) => (await restic(namespace, password, ['cat', 'config'])).exitCode === 0;
  const keyCount = async (namespace: string, password: string) => (JSON.parse((await restic(namespace, password, ['key', 'list', '--json'])).stdout) as unknown[]).length;

  before(async () => {
    [s3, cluster] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startVolumeCluster({ namespaces: [] })]);
    work = mkdtempSync(join(tmpdir(), 'restic-rekey-'));
    const data = join(work, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'notebook.ipynb'), '{"cells": ["older work"]}');
    for (const [namespace, password] of [['alice', OLD], ['bob', OLD], ['carol', OTHER], ['dave', OLD]] as const) {
      expect((await restic(namespace, password, ['init'])).exitCode).to.equal(0);
      expect((await execa('restic', ['-o', 's3.bucket-lookup=path', 'backup', '--host', 'test', '.'], {
        cwd: data, reject: false, env: env(namespace, password), extendEnv: false,
      })).exitCode).to.equal(0);
    }
    // dave: a run that died after `key add`, before `key remove`: both keys are there
    writeFileSync(join(work, 'dave-new'), NEW.dave!);
    expect((await restic('dave', OLD, ['key', 'add', '--new-password-file', join(work, 'dave-new')])).exitCode).to.equal(0);
  });
  after(async () => {
    await Promise.all([cluster?.stop(), s3?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const options = (namespaces: string[], previous = [OLD]) => ({
    namespace: 'kubeflow', repositories: namespaces.map((namespace) => ({ namespace, password: NEW[namespace]!, previous })),
    s3: s3For(s3, BUCKET), runId: 'unit-0 change-1', startTimeoutSeconds: 60,
  });
  const jobs = { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job' } as const;
  const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' } as const;

  it('lists every repository of the location from the bucket, not a folder without restic config', async () => {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kubeflow/restic/erin/locks/abc', Body: 'an init that never finished' }));
    client.destroy();
    const settings = { endpoint: s3.endpoint, bucket: BUCKET, path: 'kubeflow', region: 'us-east-1', accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, uriStyle: 'path' };
    expect(await listResticRepositories(openObjectStore(settings as never))).to.deep.equal(['alice', 'bob', 'carol', 'dave']);
  });

  it('puts no password in the Job: every one comes from the run\'s Secret, one line per repository', () => {
    const job = JSON.stringify(buildRekeyJob(options(['alice', 'bob']), 'creds'));
    for (const password of [OLD, NEW.alice!, NEW.bob!]) expect(job).to.not.include(password);
    const secret = buildRekeySecret(options(['alice', 'bob']), 'creds') as unknown as { data: Record<string, string> };
    expect(Buffer.from(secret.data.REKEY_PASSWORDS!, 'base64').toString()).to.equal(`alice ${NEW.alice} ${OLD}\nbob ${NEW.bob} ${OLD}`);
  });

  it('refuses to run in the namespace of a repository it changes, and makes nothing there', async () => {
    const refused = await rekeyResticRepositories(cluster.kube, { ...options(['alice']), namespace: 'alice' }).then(() => undefined, (e: Error) => e.message);
    expect(refused).to.equal('The restic key Job cannot run in namespace alice, whose own repository it changes: its Secret would hand that profile\'s users the passwords of other namespaces.');
    expect(await cluster.kube.list(secrets, 'alice')).to.have.length(0);
    expect(await opens('alice', OLD)).to.equal(true);
  });

  it('gives each repository its own password and removes the old key: only the new one opens it, and the older snapshot reads back', async () => {
    const outcome = await rekeyResticRepositories(cluster.kube, options(['alice', 'bob']));
    expect(outcome).to.deep.equal({ added: ['alice', 'bob'], removed: ['alice', 'bob'], unchanged: [], locked: [], failed: [] });
    for (const namespace of ['alice', 'bob']) {
      expect(await opens(namespace, NEW[namespace]!), `${namespace} with its new password`).to.equal(true);
      expect(await opens(namespace, OLD), `${namespace} with the old password`).to.equal(false);
      expect(await keyCount(namespace, NEW[namespace]!)).to.equal(1);
      const dumped = await restic(namespace, NEW[namespace]!, ['dump', 'latest', '/notebook.ipynb']);
      expect(dumped.stdout).to.equal('{"cells": ["older work"]}');
    }
    expect(await opens('alice', NEW.bob!), 'alice with bob\'s password').to.equal(false);
    // the run leaves neither its Job nor its Secret
    expect(await cluster.kube.list(jobs, 'kubeflow')).to.have.length(0);
    expect(await cluster.kube.list(secrets, 'kubeflow')).to.have.length(0);
  });

  it('converges after a run that died between key add and key remove: the old key goes, the new one stays', async () => {
    expect(await keyCount('dave', NEW.dave!)).to.equal(2);
    const outcome = await rekeyResticRepositories(cluster.kube, options(['dave']));
    expect(outcome).to.deep.equal({ added: [], removed: ['dave'], unchanged: [], locked: [], failed: [] });
    expect(await opens('dave', OLD)).to.equal(false);
    expect(await keyCount('dave', NEW.dave!)).to.equal(1);
    expect((await restic('dave', NEW.dave!, ['dump', 'latest', '/notebook.ipynb'])).stdout).to.equal('{"cells": ["older work"]}');
  });

  it('is resumable: a rerun leaves a repository that opens with its password alone as it is', async () => {
    const outcome = await rekeyResticRepositories(cluster.kube, options(['alice', 'bob', 'dave']));
    expect(outcome).to.deep.equal({ added: [], removed: [], unchanged: ['alice', 'bob', 'dave'], locked: [], failed: [] });
    expect(await keyCount('alice', NEW.alice!)).to.equal(1);
  });

  it('names a repository no password opens, and still does the others', async () => {
    const outcome = await rekeyResticRepositories(cluster.kube, options(['alice', 'carol']));
    expect(outcome).to.deep.equal({ added: [], removed: [], unchanged: ['alice'], locked: ['carol'], failed: [] });
    expect(await opens('carol', NEW.carol!)).to.equal(false);
    expect(await opens('carol', OTHER)).to.equal(true);
  });
});
