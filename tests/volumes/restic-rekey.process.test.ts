// Adding a changed key's password to the namespaces' restic repositories (src/volumes/restic/rekey.ts): one hardened
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
// Two passwords as the product derives them would do; fixed strings keep the oracle free of the product's derivation.
const OLD = 'old-password-0123456789abcdef';
const NEW = 'new-password-fedcba9876543210';
const OTHER = 'a-password-nobody-here-holds';

describe('volumes: adding a changed key to the restic repositories', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let cluster: VolumeCluster;
  let work: string;

  const restic = (namespace: string, password: string, args: string[]) => execa('restic', ['-o', 's3.bucket-lookup=path', ...args], {
    env: {
      PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      RESTIC_PASSWORD: password, RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kubeflow/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
    },
    extendEnv: false, reject: false,
  });
  const opens = async (namespace: string, password: string) => (await restic(namespace, password, ['cat', 'config'])).exitCode === 0;

  before(async () => {
    [s3, cluster] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startVolumeCluster({ namespaces: [] })]);
    work = mkdtempSync(join(tmpdir(), 'restic-rekey-'));
    const data = join(work, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'notebook.ipynb'), '{"cells": ["older work"]}');
    for (const [namespace, password] of [['alice', OLD], ['bob', OLD], ['carol', OTHER]] as const) {
      expect((await restic(namespace, password, ['init'])).exitCode).to.equal(0);
      expect((await execa('restic', ['-o', 's3.bucket-lookup=path', 'backup', '--host', 'test', '.'], {
        cwd: data, reject: false,
        env: { PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password, RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kubeflow/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache') },
        extendEnv: false,
      })).exitCode).to.equal(0);
    }
  });
  after(async () => {
    await Promise.all([cluster?.stop(), s3?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const options = (repositories: string[], oldPassword = OLD) => ({
    namespace: 'kubeflow', repositories, s3: s3For(s3, BUCKET), oldPassword, newPassword: NEW, runId: 'unit-0 change-1', startTimeoutSeconds: 60,
  });

  it('lists every repository of the location from the bucket, not a folder without restic config', async () => {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kubeflow/restic/dave/locks/abc', Body: 'an init that never finished' }));
    client.destroy();
    const settings = { endpoint: s3.endpoint, bucket: BUCKET, path: 'kubeflow', region: 'us-east-1', accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, uriStyle: 'path' };
    expect(await listResticRepositories(openObjectStore(settings as never))).to.deep.equal(['alice', 'bob', 'carol']);
  });

  it('puts no password in the Job: both come from the run\'s Secret', () => {
    const job = JSON.stringify(buildRekeyJob(options(['alice']), 'creds'));
    expect(job).to.not.include(OLD).and.not.include(NEW);
    const secret = buildRekeySecret(options(['alice']), 'creds') as unknown as { data: Record<string, string> };
    expect(Buffer.from(secret.data.RESTIC_NEW_PASSWORD!, 'base64').toString()).to.equal(NEW);
  });

  it('adds the new password to each repository; the old one still opens it, and the older snapshot reads back under the new one', async () => {
    const outcome = await rekeyResticRepositories(cluster.kube, options(['alice', 'bob']));
    expect(outcome).to.deep.equal({ added: ['alice', 'bob'], unchanged: [], locked: [], failed: [] });
    for (const namespace of ['alice', 'bob']) {
      expect(await opens(namespace, NEW), `${namespace} with the new password`).to.equal(true);
      expect(await opens(namespace, OLD), `${namespace} with the old password`).to.equal(true);
      const dumped = await restic(namespace, NEW, ['dump', 'latest', '/notebook.ipynb']);
      expect(dumped.stdout).to.equal('{"cells": ["older work"]}');
    }
    // the run leaves neither its Job nor its Secret
    expect(await cluster.kube.list({ group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job' }, 'kubeflow')).to.have.length(0);
    expect(await cluster.kube.list({ group: '', version: 'v1', resource: 'secrets', kind: 'Secret' }, 'kubeflow')).to.have.length(0);
  });

  it('is resumable: a rerun leaves a repository that already opens with the new password as it is', async () => {
    const keysBefore = (await restic('alice', NEW, ['key', 'list', '--json'])).stdout;
    const outcome = await rekeyResticRepositories(cluster.kube, options(['alice', 'bob']));
    expect(outcome).to.deep.equal({ added: [], unchanged: ['alice', 'bob'], locked: [], failed: [] });
    expect(JSON.parse((await restic('alice', NEW, ['key', 'list', '--json'])).stdout)).to.have.length(JSON.parse(keysBefore).length);
  });

  it('names a repository neither password opens, and still does the others', async () => {
    const outcome = await rekeyResticRepositories(cluster.kube, options(['alice', 'carol']));
    expect(outcome).to.deep.equal({ added: [], unchanged: ['alice'], locked: ['carol'], failed: [] });
    expect(await opens('carol', NEW)).to.equal(false);
    expect(await opens('carol', OTHER)).to.equal(true);
  });
});
