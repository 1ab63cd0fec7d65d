// verify's check of the restic repositories (src/volumes/restic/check.ts): check Jobs run by the simulated kubelet with
// Debian's restic against s3rver, on repositories the restic mover wrote. The damage is done as a bucket writer would
// (a byte flipped in a stored pack, a pack or a snapshot deleted) and what restic itself finds is the oracle: which
// pack it is (from `restic cat index`, run directly), and that a plain check reads no data pack (restic/restic
// cmd/restic/cmd_check.go at v0.14.0: only --read-data(-subset) reads them).
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { DeleteObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { newBackupId } from '../../src/store/layout.ts';
import { backupVolumes } from '../../src/volumes/mover.ts';
import { namespacePassword } from './restic-passwords.ts';
import { checkJobName, checkResticRepositories, parseCheckProgress, type RepositoryToCheck } from '../../src/volumes/restic/check.ts';
import { RESTIC_IMAGE as DEFAULT_RESTIC_IMAGE } from '../../src/volumes/engine.ts';
import type { ReadData } from '../../src/volumes/restic/read-data.ts';
import { JOBS, PODS, SECRETS } from '../../src/volumes/kube-port.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';

const KEY = 'correct horse battery staple';
const BUCKET = 'kf-check';

describe('volumes: restic check of the repositories a backup pins', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let cluster: VolumeCluster;
  let work: string;
  let client: S3Client;
  // each namespace's password, derived in the test (restic-passwords.ts)
  const password = (namespace: string) => namespacePassword(KEY, namespace);
  const backupId = newBackupId();
  let repositories: RepositoryToCheck[];

  const restic = (namespace: string, args: string[]) => execa('restic', ['-o', 's3.bucket-lookup=path', ...args], {
    env: {
      PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password(namespace),
      RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kubeflow/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
    },
    extendEnv: false,
  });
  const check = (readData: ReadData, progress: string[] = []) => checkResticRepositories(cluster.kube, {
    backupId, jobNamespace: 'kubeflow', repositories, s3: s3For(s3, BUCKET), password, keyed: true, image: DEFAULT_RESTIC_IMAGE, readData,
    progressIntervalMs: 300, onProgress: (line) => progress.push(line),
  });
  const repositoryFolder = (namespace: string) => join(s3.directory, BUCKET, 'kubeflow', 'restic', namespace);

  /** The pack holding the largest data blob of alice's repository (restic's own index says which), and its stored file. */
  async function largestDataPack(): Promise<{ id: string; file: string }> {
    let chosen = { id: '', length: 0 };
    for (const index of (await restic('alice', ['list', 'index'])).stdout.trim().split('\n')) {
      const parsed = JSON.parse((await restic('alice', ['cat', 'index', index])).stdout) as { packs: { id: string; blobs: { type: string; length: number }[] }[] };
      for (const pack of parsed.packs) for (const blob of pack.blobs) if (blob.type === 'data' && blob.length > chosen.length) chosen = { id: pack.id, length: blob.length };
    }
    const folder = join(repositoryFolder('alice'), 'data', chosen.id.slice(0, 2));
    return { id: chosen.id, file: join(folder, readdirSync(folder).find((f) => f.startsWith(chosen.id) && f.endsWith('object'))!) };
  }

  before(async function () {
    [s3, cluster] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startVolumeCluster({ namespaces: ['alice', 'bob'] })]);
    work = mkdtempSync(join(tmpdir(), 'restic-check-'));
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    writeWorkspace(await createBoundPvc(cluster, 'alice', 'workspace'), { files: 30, bigFileBytes: 4 * 1024 * 1024 });
    writeWorkspace(await createBoundPvc(cluster, 'alice', 'datasets'), { files: 10, bigFileBytes: 0 });
    writeWorkspace(await createBoundPvc(cluster, 'bob', 'workspace'), { files: 10, bigFileBytes: 0 });
    const results = await backupVolumes(cluster.kube, {
      backupId, s3: s3For(s3, BUCKET), engine: 'restic', restic: { password },
      pvcs: [{ namespace: 'alice', name: 'workspace' }, { namespace: 'alice', name: 'datasets' }, { namespace: 'bob', name: 'workspace' }],
    });
    repositories = ['alice', 'bob'].map((namespace) => ({
      namespace, pinned: results.filter((r) => r.namespace === namespace).map((r) => ({ pvc: r.pvc, snapshot: r.restic!.snapshot })),
    }));
  });
  after(async function () {
    client?.destroy();
    await cluster?.stop();
    await s3?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('passes a good backup: each repository ok with its pinned snapshots, structure and all data read, nothing left behind', async function () {
    const progress: string[] = [];
    const checks = await check({ mode: 'full' }, progress);
    // every pack the repository holds is read: restic's own listing counts them
    const [alicePacks, bobPacks] = await Promise.all(['alice', 'bob'].map(async (ns) => (await restic(ns, ['list', 'packs'])).stdout.trim().split('\n').length));
    expect(checks.map((c) => [c.namespace, c.status, c.snapshots, c.checked, c.packsRead])).to.deep.equal([
      ['alice', 'ok', 2, `structure and all data, ${alicePacks} pack(s) read`, alicePacks],
      ['bob', 'ok', 1, `structure and all data, ${bobPacks} pack(s) read`, bobPacks],
    ]);
    expect(checks[0]!.repository).to.equal(`s3://${BUCKET}/kubeflow/restic/alice`);
    // the lines the Job's log carries while it reads, as restic prints them off a terminal with RESTIC_PROGRESS_FPS set
    const direct = await execa('restic', ['-o', 's3.bucket-lookup=path', 'check', '--read-data'], {
      env: { PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password('alice'), RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kubeflow/restic/alice`, RESTIC_CACHE_DIR: join(work, 'cache'), RESTIC_PROGRESS_FPS: '10' },
      extendEnv: false,
    });
    expect(parseCheckProgress(direct.stdout)).to.deep.equal({ done: alicePacks, total: alicePacks, unit: 'packs' });
    expect(progress).to.include('restic repository of alice: ok');
    expect(progress.join('\n')).to.not.include(password('alice'));
    // the Secret is gone; a successful check's Job too
    expect(await cluster.kube.list(SECRETS, 'kubeflow')).to.deep.equal([]);
    expect(await cluster.kube.list(JOBS, 'kubeflow')).to.deep.equal([]);
  });

  it('a byte flipped in a data pack: a plain check reads no data pack and passes; read-data finds the pack, and so does the subset that holds it', async function () {
    const pack = await largestDataPack();
    const original = readFileSync(pack.file);
    const flipped = Buffer.from(original);
    flipped[100] = flipped[100]! ^ 0xff;
    writeFileSync(pack.file, flipped);
    try {
      const plain = await check({ mode: 'none' });
      expect(plain.map((c) => c.status), 'restic check without --read-data reads the index and trees only').to.deep.equal(['ok', 'ok']);
      expect(plain[0]!.checked).to.match(/^structure only .*no data pack read/);

      const full = await check({ mode: 'full' });
      expect(full[0]).to.include({ namespace: 'alice', status: 'damaged', problem: `pack ${pack.id.slice(0, 8)} does not match its hash (its bytes were changed or damaged in the bucket)` });
      expect(full[1]!.status, "bob's repository is another one").to.equal('ok');
      // the failed Job stays for `kubectl logs`: neither it, its Pod (env, termination message) nor its log holds a secret
      const pods = await cluster.kube.list(PODS, 'kubeflow', `job-name=${checkJobName(backupId, 'alice')}`);
      expect(pods).to.have.length(1);
      const left = JSON.stringify([...(await cluster.kube.list(JOBS, 'kubeflow')), ...pods])
        + await cluster.kube.podLog('kubeflow', pods[0]!.metadata.name!, 'mover', 1000);
      for (const secret of [password('alice'), password('bob'), s3.secretAccessKey, KEY]) expect(left).to.not.include(secret);
      expect(await cluster.kube.list(SECRETS, 'kubeflow'), 'the run\'s Secret is deleted').to.deep.equal([]);

      // restic's groups n/t: the packs whose first id byte modulo t is n-1
      const holding = (parseInt(pack.id.slice(0, 2), 16) % 2) + 1;
      const [inGroup, otherGroup] = [await check({ mode: 'subset', subset: `${holding}/2` }), await check({ mode: 'subset', subset: `${3 - holding}/2` })];
      expect(inGroup[0]!.status).to.equal('damaged');
      expect(inGroup[0]!.checked).to.equal(`structure and data (${holding}/2)`);
      expect(otherGroup[0]!.status, 'the other group does not read that pack').to.equal('ok');
      const packs = (await restic('alice', ['list', 'packs'])).stdout.trim().split('\n');
      const inOther = packs.filter((id) => parseInt(id.slice(0, 2), 16) % 2 === (3 - holding) - 1).length;
      expect(otherGroup[0]!.packsRead, 'the packs of the other group, and only they').to.equal(inOther);
    } finally {
      writeFileSync(pack.file, original);
    }
    expect((await check({ mode: 'full' }))[0]!.status, 'the pack put back').to.equal('ok');
  });

  it('a deleted pack is found by a plain check', async function () {
    const pack = await largestDataPack();
    const saved = join(work, 'saved-pack');
    writeFileSync(saved, readFileSync(pack.file));
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `kubeflow/restic/alice/data/${pack.id.slice(0, 2)}/${pack.id}` }));
    const checks = await check({ mode: 'none' });
    expect(checks[0]).to.include({ status: 'damaged', problem: `pack ${pack.id.slice(0, 8)} is missing` });
    expect(checks[1]!.status).to.equal('ok');
    // put back through the S3 API, for the next case
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `kubeflow/restic/alice/data/${pack.id.slice(0, 2)}/${pack.id}`, Body: readFileSync(saved) }));
  });

  it('a pinned snapshot deleted from the repository is named with its PVC, though restic check itself passes', async function () {
    const datasets = repositories[0]!.pinned.find((p) => p.pvc === 'datasets')!;
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `kubeflow/restic/alice/snapshots/${datasets.snapshot}` }));
    const { exitCode } = await restic('alice', ['check', '--no-cache']).catch((e: { exitCode: number }) => e);
    expect(exitCode, 'restic check alone finds nothing wrong: no tree is missing').to.equal(0);
    const checks = await check({ mode: 'none' });
    expect(checks[0]).to.include({ status: 'damaged', problem: `the snapshot pinned for PVC datasets (${datasets.snapshot.slice(0, 8)}) is not in the repository` });
    expect(checks[1]!.status).to.equal('ok');
  });

  it('a repository that does not open with the password, and one that is not there: nothing is created', async function () {
    const wrong = await checkResticRepositories(cluster.kube, {
      backupId, jobNamespace: 'kubeflow', repositories: [repositories[1]!], s3: s3For(s3, BUCKET), password: (namespace) => namespacePassword('another key', namespace), keyed: true,
      image: DEFAULT_RESTIC_IMAGE, readData: { mode: 'none' },
    });
    expect(wrong[0]).to.include({ status: 'not-checked', problem: 'the repository does not open with the password of this encryption key: its data was written under another key' });
    const absent = await checkResticRepositories(cluster.kube, {
      backupId, jobNamespace: 'kubeflow', repositories: [{ namespace: 'carol', pinned: [{ pvc: 'workspace', snapshot: 'a'.repeat(64) }] }], s3: s3For(s3, BUCKET), password, keyed: true,
      image: DEFAULT_RESTIC_IMAGE, readData: { mode: 'none' },
    });
    expect(absent[0]).to.include({ namespace: 'carol', status: 'damaged', problem: 'there is no restic repository there any more (its config is gone from the bucket)' });
    expect(() => readdirSync(repositoryFolder('carol')), 'the check created no repository').to.throw(/ENOENT/);
  });

  it('a repository locked by a live restic is not checked, and says to verify again', async function () {
    // A restic backup stopped (SIGSTOP) while it holds its lock: alive on this host, so its lock is not stale (restic
    // internal/restic/lock.go Stale) and check's exclusive lock is refused.
    const big = join(work, 'big');
    mkdirSync(big, { recursive: true });
    for (let i = 0; i < 8; i++) writeFileSync(join(big, `f${i}`), Buffer.alloc(4 * 1024 * 1024, i));
    const locks = join(repositoryFolder('bob'), 'locks');
    let holder: ChildProcess | undefined;
    try {
      holder = spawn('restic', ['-o', 's3.bucket-lookup=path', 'backup', big], {
        env: { PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password('bob'), RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/kubeflow/restic/bob`, RESTIC_CACHE_DIR: join(work, 'cache3') },
        stdio: 'ignore',
      });
      const holdsLock = () => { try { return readdirSync(locks).some((f) => f.endsWith('object')); } catch { return false; } };
      for (let waited = 0; waited < 60_000 && !holdsLock(); waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(holdsLock(), 'the backup took its lock').to.equal(true);
      holder.kill('SIGSTOP');
      const checks = await check({ mode: 'none' });
      expect(checks[1]).to.include({ namespace: 'bob', status: 'not-checked' });
      expect(checks[1]!.problem).to.equal('the repository is locked by another restic (a backup or a prune of this location is running): verify again once it has ended');
    } finally {
      holder?.kill('SIGKILL');
    }
  });
});
