// One restic password per namespace through the volume steps the charm and the CLI share (src/volumes/steps.ts): the
// movers open each namespace's repository with its own password, and a repository written before v2 under the shared
// password is moved to its namespace's by the restic key Job in the job namespace (src/volumes/restic/rekey.ts) before
// any mover touches it. Jobs run by the simulated kubelet with Debian's restic against s3rver; the oracle is restic run
// directly with passwords derived in the test (restic-passwords.ts), and the cluster's own record of the Jobs and
// Secrets it was given.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { KubeObject } from '../../src/kube/types.ts';
import { newBackupId } from '../../src/store/layout.ts';
import type { S3Settings } from '../../src/store/settings.ts';
import { volumeBackupStep, volumeRestoreStep, type MoverConfig } from '../../src/volumes/steps.ts';
import { checkPinnedRepositories } from '../../src/volumes/restic/verify-step.ts';
import { resticRepositoriesOf } from '../../src/volumes/restic/prune-repositories.ts';
import { neutralWording } from '../../src/errors/remedy.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, hashTree, pvc, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';
import { legacyPassword, namespacePassword } from './restic-passwords.ts';

const BUCKET = 'kf-passwords';
const KEY = 'the encryption key of this location';
const JOB_NAMESPACE = 'kubeflow';
const PROFILES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];

describe('volumes: one restic password per namespace, and the move of older repositories to it', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let vc: VolumeCluster;
  let work: string;
  let settings: S3Settings;
  const config: MoverConfig = { image: 'docker.io/rclone/rclone:1.68.2', concurrency: 2, startTimeoutSeconds: 60, resources: '', engine: 'restic', jobNamespace: JOB_NAMESPACE };
  // what the cluster was asked to make: every Job and Secret, with their namespace
  const jobs: KubeObject[] = [];
  const secrets: KubeObject[] = [];

  const env = (namespace: string, password: string) => ({
    PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    RESTIC_PASSWORD: password, RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kubeflow/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
  });
  const restic = (namespace: string, password: string, args: string[], cwd?: string) =>
    execa('restic', ['-o', 's3.bucket-lookup=path', ...args], { env: env(namespace, password), extendEnv: false, reject: false, ...(cwd ? { cwd } : {}) });
  const keyCount = async (namespace: string, password: string) => (JSON.parse((await restic(namespace, password, ['key', 'list', '--json'])).stdout) as unknown[]).length;
  /** `restic cat config` with the password: 'opens', or restic's refusal */
  const tryOpen = async (namespace: string, password: string) => {
    const run = await restic(namespace, password, ['cat', 'config']);
    return run.exitCode === 0 ? 'opens' : /wrong password or no key found/.test(run.stderr) ? 'wrong password' : `failed: ${run.stderr}`;
  };
  const pvcRef = (namespace: string, name: string) => ({ namespace, name, object: pvc(namespace, name) });
  const keyJobs = () => jobs.filter((j) => j.metadata.labels?.['app.kubernetes.io/component'] === 'restic-rekey');

  /** A repository as v1 wrote it: init and one snapshot of `files` under the shared password; returns the snapshot's id. */
  const legacyRepository = async (namespace: string, files: Record<string, string>): Promise<string> => {
    const data = join(work, `old-${namespace}`);
    mkdirSync(data, { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileSync(join(data, name), content);
    expect((await restic(namespace, legacyPassword(KEY), ['init'])).exitCode).to.equal(0);
    const backup = await restic(namespace, legacyPassword(KEY), ['backup', '--json', '--host', 'kubeflow-upgrader', '.'], data);
    expect(backup.exitCode, backup.stderr).to.equal(0);
    const summary = backup.stdout.split('\n').map((l) => JSON.parse(l) as { message_type: string; snapshot_id?: string }).find((m) => m.message_type === 'summary');
    const listed = JSON.parse((await restic(namespace, legacyPassword(KEY), ['snapshots', '--json'])).stdout) as Array<{ id: string }>;
    return listed.find((s) => s.id.startsWith(summary!.snapshot_id!))!.id;
  };

  before(async () => {
    [s3, vc] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startVolumeCluster({ bindingMode: 'Immediate', namespaces: PROFILES })]);
    work = mkdtempSync(join(tmpdir(), 'restic-passwords-'));
    settings = { ...s3For(s3, BUCKET), uriStyle: 'path' };
    vc.cluster.api.subscribe((e) => {
      if (e.type !== 'ADDED') return;
      if (e.ref.resource === 'jobs') jobs.push(e.object);
      if (e.ref.resource === 'secrets') secrets.push(e.object);
    });
  });
  after(async () => {
    await Promise.all([vc?.stop(), s3?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('after one backup, each namespace\'s repository opens with its own password only: not the shared one, not another namespace\'s', async () => {
    for (const namespace of ['alice', 'bob']) writeWorkspace(await createBoundPvc(vc, namespace, 'workspace'), { files: 6, bigFileBytes: 0 });
    const entries = await volumeBackupStep(vc.client, settings, config, { encryptionKey: KEY })(newBackupId(), [pvcRef('alice', 'workspace'), pvcRef('bob', 'workspace')], () => undefined);
    expect(entries.map((e) => e.restic?.repository).sort()).to.deep.equal(['kubeflow/restic/alice', 'kubeflow/restic/bob']);
    for (const [namespace, other] of [['alice', 'bob'], ['bob', 'alice']] as const) {
      expect(await tryOpen(namespace, namespacePassword(KEY, namespace)), `${namespace} with its own password`).to.equal('opens');
      expect(await tryOpen(namespace, legacyPassword(KEY)), `${namespace} with the shared v1 password`).to.equal('wrong password');
      expect(await tryOpen(namespace, namespacePassword(KEY, other)), `${namespace} with ${other}'s password`).to.equal('wrong password');
      expect(await keyCount(namespace, namespacePassword(KEY, namespace))).to.equal(1);
    }
    // each mover Secret holds its own namespace's password and no other
    const movers = secrets.filter((s) => PROFILES.includes(s.metadata.namespace ?? ''));
    expect(movers.map((s) => s.metadata.namespace).sort()).to.deep.equal(['alice', 'bob']);
    for (const secret of movers) {
      const password = Buffer.from((secret as unknown as { data: Record<string, string> }).data.RESTIC_PASSWORD!, 'base64').toString();
      expect(password).to.equal(namespacePassword(KEY, secret.metadata.namespace!));
    }
  });

  it('moves a repository written under the shared v1 password to its own before the backup: old snapshots intact, only the new password opens it', async () => {
    const old = await legacyRepository('carol', { 'notes.txt': 'written before v2' });
    writeWorkspace(await createBoundPvc(vc, 'carol', 'workspace'), { files: 4, bigFileBytes: 0 });
    const [entry] = await volumeBackupStep(vc.client, settings, config, { encryptionKey: KEY })(newBackupId(), [pvcRef('carol', 'workspace')], () => undefined);
    expect(entry!.restic!.repository).to.equal('kubeflow/restic/carol');
    expect(await tryOpen('carol', namespacePassword(KEY, 'carol'))).to.equal('opens');
    expect(await tryOpen('carol', legacyPassword(KEY))).to.equal('wrong password');
    expect(await keyCount('carol', namespacePassword(KEY, 'carol'))).to.equal(1);
    const listed = JSON.parse((await restic('carol', namespacePassword(KEY, 'carol'), ['snapshots', '--json'])).stdout) as Array<{ id: string }>;
    expect(listed.map((s) => s.id)).to.include(old).and.include(entry!.restic!.snapshot);
    expect((await restic('carol', namespacePassword(KEY, 'carol'), ['dump', old, '/notes.txt'])).stdout).to.equal('written before v2');
    expect((await restic('carol', namespacePassword(KEY, 'carol'), ['check'])).exitCode).to.equal(0);
  });

  it('restores a backup made before v2 whose repository still has only the shared key: moved first, then filled with the namespace\'s password', async () => {
    const old = await legacyRepository('dave', { 'model.bin': 'weights of before', 'README': 'older work' });
    const target = await createBoundPvc(vc, 'dave', 'workspace');
    const archived = [{ namespace: 'dave', pvc: 'workspace', key: 'restic/dave', files: 2, bytes: 27, restic: { repository: 'kubeflow/restic/dave', snapshot: old } }];
    const done = await volumeRestoreStep(vc.client, settings, config, { encryptionKey: KEY })(newBackupId(), [{ namespace: 'dave', name: 'workspace' }], () => undefined, archived);
    expect(done.restored).to.equal(1);
    expect([...hashTree(target).keys()].sort()).to.deep.equal(['README', 'model.bin']);
    expect(await tryOpen('dave', namespacePassword(KEY, 'dave'))).to.equal('opens');
    expect(await tryOpen('dave', legacyPassword(KEY))).to.equal('wrong password');
  });

  it('verify moves a repository written under the shared v1 password before its check, which then passes with the namespace\'s password', async () => {
    const old = await legacyRepository('erin', { 'data.csv': 'a,b\n1,2\n' });
    const checks = await checkPinnedRepositories([{ namespace: 'erin', pvc: 'workspace', key: 'restic/erin', files: 1, bytes: 8, restic: { repository: 'kubeflow/restic/erin', snapshot: old } }], {
      backupId: newBackupId(), kube: async () => vc.client, s3: settings, config, encryptionKey: KEY, readData: { mode: 'none' }, jobNamespace: JOB_NAMESPACE,
      wording: neutralWording, imageSetting: 'volume-mover-image', resourcesSetting: 'volume-mover-resources', progress: () => undefined,
    });
    expect(checks.map((c) => [c.namespace, c.status])).to.deep.equal([['erin', 'ok']]);
    expect(await tryOpen('erin', legacyPassword(KEY))).to.equal('wrong password');
    expect(await tryOpen('erin', namespacePassword(KEY, 'erin'))).to.equal('opens');
  });

  it('prune moves a repository written under the shared v1 password before its first Job, all in the model namespace', async () => {
    await legacyRepository('frank', { 'a.txt': 'a' });
    const repositories = resticRepositoriesOf(vc.client, settings, KEY, { startTimeoutSeconds: 60, fallbackNamespace: JOB_NAMESPACE });
    expect(await repositories.run('frank', 'check', [])).to.deep.equal({ state: 'locks', count: 0, locks: [] });
    expect(await tryOpen('frank', legacyPassword(KEY))).to.equal('wrong password');
    expect(await keyCount('frank', namespacePassword(KEY, 'frank'))).to.equal(1);
    // the prune check itself ran in the model namespace (it holds the bucket credentials), never in frank's
    expect(jobs.filter((j) => j.metadata.namespace === 'frank').map((j) => j.metadata.name)).to.deep.equal([]);
    expect(jobs.some((j) => j.metadata.namespace === JOB_NAMESPACE && j.metadata.name?.startsWith('kfu-prune-check-'))).to.equal(true);
  });

  it('ran the restic key Job in the job namespace only, and never put the shared password in a profile namespace', () => {
    expect(keyJobs(), 'one key Job each for carol\'s backup, dave\'s restore, erin\'s verify and frank\'s prune').to.have.length(4);
    expect(keyJobs().map((j) => j.metadata.namespace)).to.deep.equal([JOB_NAMESPACE, JOB_NAMESPACE, JOB_NAMESPACE, JOB_NAMESPACE]);
    expect(jobs.filter((j) => PROFILES.includes(j.metadata.namespace ?? '')).every((j) => j.metadata.labels?.['app.kubernetes.io/component'] !== 'restic-rekey')).to.equal(true);
    const legacy = legacyPassword(KEY);
    for (const secret of secrets.filter((s) => s.metadata.namespace !== JOB_NAMESPACE)) {
      const values = Object.values((secret as unknown as { data?: Record<string, string> }).data ?? {}).map((v) => Buffer.from(v, 'base64').toString());
      expect(values.join('\n'), `Secret ${secret.metadata.namespace}/${secret.metadata.name}`).to.not.include(legacy);
    }
  });
});
