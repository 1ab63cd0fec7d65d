// The restic mover (src/volumes/restic/): PVCs backed up by restic mover Jobs into their namespace's repository in the
// backup bucket and restored by restic mover Jobs into a fresh cluster, run by the simulated kubelet with Debian's
// restic against s3rver (which decodes restic's aws-chunked uploads as S3 does). The oracle is restic itself, run
// directly with the password: what the snapshots hold and how they are tagged.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { newBackupId } from '../../src/store/layout.ts';
import { backupVolumes, restoreVolumes } from '../../src/volumes/mover.ts';
import { namespacePassword } from './restic-passwords.ts';
import { FaultProxy, type SeenRequest } from '../support/s3/fault-proxy.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, hashTree, pvc, PVC_REF, s3For, startVolumeCluster, volumeFailure, writeWorkspace, type VolumeCluster } from './helpers.ts';

const KEY = 'correct horse battery staple';

describe('volumes: the restic mover', function () {
  let s3: S3ServerHandle;
  let source: VolumeCluster;
  let target: VolumeCluster;
  let work: string;
  // each namespace's repository password, derived in the test (restic-passwords.ts), never by the product's function
  const password = (namespace: string) => namespacePassword(KEY, namespace);

  /** restic run directly on the namespace's repository, as an operator would */
  const restic = (namespace: string, args: string[], extra: Record<string, string> = {}) => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      RESTIC_PASSWORD: password(namespace), RESTIC_REPOSITORY: `s3:${s3.endpoint}/kf-backups/kubeflow/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'), ...extra,
    };
    return execa('restic', ['-o', 's3.bucket-lookup=path', ...args], { env, extendEnv: false });
  };

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    source = await startVolumeCluster({ bindingMode: 'Immediate' });
    target = await startVolumeCluster({ bindingMode: 'WaitForFirstConsumer' });
    work = mkdtempSync(join(tmpdir(), 'restic-mover-'));
  });
  after(async function () {
    await source?.stop();
    await target?.stop();
    await s3?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  let firstBackup: string;
  let firstSnapshots: Map<string, string>;
  let firstSizes: Map<string, { files: number; bytes: number }>;
  let original: Map<string, string>;

  it('backs up two PVCs of one namespace at once into one repository, each snapshot tagged and pinned by its full id', async function () {
    this.timeout(300_000);
    const workspace = await createBoundPvc(source, 'alice', 'workspace');
    writeWorkspace(workspace, { files: 120, bigFileBytes: 8 * 1024 * 1024 });
    const datasets = await createBoundPvc(source, 'alice', 'datasets', ['ReadWriteMany']);
    writeWorkspace(datasets, { files: 20, bigFileBytes: 0 });
    original = hashTree(workspace);
    firstBackup = newBackupId();
    const progress: string[] = [];
    const results = await backupVolumes(source.kube, {
      backupId: firstBackup, s3: s3For(s3, 'kf-backups'), concurrency: 2, engine: 'restic', restic: { password },
      pvcs: [{ namespace: 'alice', name: 'workspace' }, { namespace: 'alice', name: 'datasets' }],
      onProgress: (p) => progress.push(`${p.done}/${p.total}`),
    });
    expect(results).to.have.length(2);
    for (const r of results) {
      expect(r.restic?.snapshot).to.match(/^[0-9a-f]{64}$/);
      expect(r.restic?.repository).to.equal('kubeflow/restic/alice');
    }
    const ws = results.find((r) => r.pvc === 'workspace')!;
    // restic counts regular files (total_files_processed); the tree's one symlink is not among them
    const regularFiles = [...original.values()].filter((h) => !h.startsWith('link:')).length;
    expect(ws.files).to.equal(regularFiles);
    expect(hashTree(workspace), 'the read-only source is untouched').to.deep.equal(original);
    firstSnapshots = new Map(results.map((r) => [`alice/${r.pvc}`, r.restic!.snapshot]));
    firstSizes = new Map(results.map((r) => [`alice/${r.pvc}`, { files: r.files, bytes: r.bytes }]));

    const listed = JSON.parse((await restic('alice', ['snapshots', '--json'])).stdout) as { id: string; tags: string[]; paths: string[] }[];
    expect(listed.map((s) => s.id)).to.have.members([...firstSnapshots.values()]);
    const tagsOf = listed.find((s) => s.id === ws.restic!.snapshot)!.tags;
    expect(tagsOf).to.have.members([`kfu-backup=${firstBackup}`, 'kfu-namespace=alice', 'kfu-pvc=workspace']);
    // restic 0.14 writes repository format 2, the one with compressed packs
    expect(JSON.parse((await restic('alice', ['cat', 'config'])).stdout).version).to.equal(2);
  });

  it('restores the pinned snapshots byte-identical into WaitForFirstConsumer PVCs of a fresh cluster, reporting the size the backup counted', async function () {
    this.timeout(300_000);
    target.cluster.api.create(PVC_REF, pvc('alice', 'workspace'));
    target.cluster.api.create(PVC_REF, pvc('alice', 'datasets', ['ReadWriteMany']));
    const restored = await restoreVolumes(target.kube, {
      backupId: firstBackup, s3: s3For(s3, 'kf-backups'), concurrency: 2, engine: 'restic', restic: { password, snapshots: firstSnapshots, sizes: firstSizes },
      pvcs: [{ namespace: 'alice', name: 'workspace' }, { namespace: 'alice', name: 'datasets' }],
    });
    expect(restored.map((r) => [r.pvc, r.restic?.snapshot])).to.have.deep.members([...firstSnapshots].map(([k, v]) => [k.split('/')[1], v]));
    // the backup's count, as the manifest keeps it (no `restic stats` in the restore Job)
    expect(restored.map((r) => [r.pvc, r.files, r.bytes])).to.have.deep.members([...firstSizes].map(([k, v]) => [k.split('/')[1], v.files, v.bytes]));
    expect(hashTree(target.kubelet.volumePath('alice', 'workspace'))).to.deep.equal(original);
    expect(hashTree(target.kubelet.volumePath('alice', 'datasets'))).to.deep.equal(hashTree(source.kubelet.volumePath('alice', 'datasets')));
  });

  it('backs up again from the parent snapshot: unchanged files are not read again, and a lock left by a killed restic does not stop it', async function () {
    // several restic processes and a mover Job: minutes on a loaded machine (no time is asserted)
    this.timeout(300_000);
    // A restic killed while it held its lock on this machine (a mover Pod killed mid-backup): its lock is stale once
    // its process is gone (restic internal/restic/lock.go Stale), so it never blocks the next mover.
    const big = join(work, 'big');
    mkdirSync(big, { recursive: true });
    for (let i = 0; i < 20; i++) writeFileSync(join(big, `f${i}`), Buffer.alloc(4 * 1024 * 1024, i));
    const killed = spawn('restic', ['-o', 's3.bucket-lookup=path', 'backup', big], {
      env: { PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password('alice'), RESTIC_REPOSITORY: `s3:${s3.endpoint}/kf-backups/kubeflow/restic/alice`, RESTIC_CACHE_DIR: join(work, 'cache2') },
      stdio: 'ignore',
    });
    // its lock file appears in the bucket (s3rver keeps each object as a file) once it has opened the repository
    const locks = join(s3.directory, 'kf-backups', 'kubeflow', 'restic', 'alice', 'locks');
    const holdsLock = () => { try { return readdirSync(locks).some((f) => f.endsWith('object')); } catch { return false; } };
    for (let waited = 0; waited < 30_000 && !holdsLock(); waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(holdsLock(), 'the restic to be killed took its lock').to.equal(true);
    killed.kill('SIGKILL');
    await new Promise((r) => killed.once('exit', r));
    expect((await restic('alice', ['list', 'locks', '--no-lock'])).stdout.trim(), 'the killed restic left its lock').to.not.equal('');

    const second = await backupVolumes(source.kube, {
      backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), engine: 'restic',
      restic: { password, parents: new Map([['alice/workspace', firstSnapshots.get('alice/workspace')!]]) },
      pvcs: [{ namespace: 'alice', name: 'workspace' }],
    });
    expect(second[0]!.restic!.filesUnmodified).to.equal([...original.values()].filter((h) => !h.startsWith('link:')).length);
    expect(second[0]!.restic!.dataAdded).to.be.lessThan(64 * 1024);
    // A backup's lock is non-exclusive and waits for no other non-exclusive one (restic internal/restic/lock.go
    // checkForOtherLocks): the mover ran its backup alone and left the stale lock to the next prune's `unlock`.
    expect((await restic('alice', ['list', 'locks', '--no-lock'])).stdout.trim(), 'the stale lock stays until a prune').to.not.equal('');
    await restic('alice', ['unlock']);
  });

  it('a stale exclusive lock (a prune killed while it held the repository) costs the backup an unlock and a retry', async function () {
    this.timeout(300_000);
    // A restic prune killed right after it took its exclusive lock: it creates the lock file, waits 200 ms and lists the
    // locks again (restic internal/restic/lock.go newLock); that second listing is held and the process killed there.
    const proxy = await FaultProxy.start({ target: s3.endpoint });
    const isLockPut = (r: SeenRequest) => r.method === 'PUT' && (r.url.split('?')[0] ?? '').includes('/locks/');
    const isLockList = (r: SeenRequest) => r.method === 'GET' && /[?&]prefix=[^&]*locks/.test(r.url);
    const prune = spawn('restic', ['-o', 's3.bucket-lookup=path', 'prune'], {
      env: { PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password('alice'), RESTIC_REPOSITORY: `s3:${proxy.endpoint}/kf-backups/kubeflow/restic/alice`, RESTIC_CACHE_DIR: join(work, 'cache4') },
      stdio: 'ignore',
    });
    try {
      await proxy.when(isLockPut).then(() => proxy.when(isLockList, { hold: true }));
      prune.kill('SIGKILL');
      await new Promise((r) => prune.once('exit', r));
    } finally {
      prune.kill('SIGKILL');
      await proxy.stop();
    }
    // Stale at once here (taken on this host by a process that is gone, lock.go Stale); in a cluster, after 30 minutes.
    const held = (await restic('alice', ['list', 'locks', '--no-lock'])).stdout.trim().split('\n').filter(Boolean);
    expect(held, 'the killed prune left one lock').to.have.length(1);
    expect(JSON.parse((await restic('alice', ['cat', 'lock', held[0]!, '--no-lock'])).stdout).exclusive).to.equal(true);

    const [result] = await backupVolumes(source.kube, {
      backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), engine: 'restic', restic: { password },
      pvcs: [{ namespace: 'alice', name: 'datasets' }],
    });
    expect(result!.restic!.snapshot).to.match(/^[0-9a-f]{64}$/);
    const listed = JSON.parse((await restic('alice', ['snapshots', '--json'])).stdout) as { id: string }[];
    expect(listed.map((s) => s.id), 'the full id of a snapshot in the repository').to.include(result!.restic!.snapshot);
    expect((await restic('alice', ['list', 'locks', '--no-lock'])).stdout.trim(), 'the stale exclusive lock is gone').to.equal('');
  });

  it('a wrong password fails the backup with restic\'s sentence and creates nothing', async function () {
    this.timeout(300_000);
    const keysBefore = (await restic('alice', ['list', 'keys', '--no-lock'])).stdout;
    const failure = await volumeFailure(backupVolumes(source.kube, {
      backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), engine: 'restic', restic: { password: (namespace) => namespacePassword('another key', namespace) },
      pvcs: [{ namespace: 'alice', name: 'datasets' }],
    }));
    expect(failure.message.split('\n')).to.have.length(1);
    expect(failure.message).to.include('wrong password or no key found');
    expect((await restic('alice', ['list', 'keys', '--no-lock'])).stdout, 'no key or repository created').to.equal(keysBefore);
  });

  it('a lock file removed while a mover\'s restic checks the locks it listed costs a retry, not restic 0.14\'s 44 s of them', async function () {
    this.timeout(300_000);
    // Another restic holds a live lock on the repository: stopped right after it took it, as a mover between two steps.
    const big = join(work, 'big');
    const other = spawn('restic', ['-o', 's3.bucket-lookup=path', 'backup', big], {
      env: { PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password('alice'), RESTIC_REPOSITORY: `s3:${s3.endpoint}/kf-backups/kubeflow/restic/alice`, RESTIC_CACHE_DIR: join(work, 'cache3') },
      stdio: 'ignore',
    });
    const locks = join(s3.directory, 'kf-backups', 'kubeflow', 'restic', 'alice', 'locks');
    const lockIds = () => { try { return readdirSync(locks).filter((f) => f.endsWith('._S3rver_object')).map((f) => f.split('.')[0]!); } catch { return []; } };
    for (let waited = 0; waited < 30_000 && lockIds().length === 0; waited += 50) await new Promise((r) => setTimeout(r, 50));
    other.kill('SIGSTOP');
    const [lockId] = lockIds();
    expect(lockId, 'the other restic took its lock').to.be.a('string');
    // The mover's first read of that lock finds it gone (404 NoSuchKey, as S3 answers once its holder removed it), and
    // from then on it is gone from the bucket too. restic 0.14 alone would load it 11 times over ~44 s (its retry backend).
    const loadsLock = (r: SeenRequest) => r.method === 'GET' && (r.url.split('?')[0] ?? '').endsWith(`/locks/${lockId}`);
    const proxy = await FaultProxy.start({ target: s3.endpoint, only: loadsLock });
    proxy.setRate(1, 1, ['gone-404']);
    const removed = proxy.when(loadsLock).then(() => {
      other.kill('SIGKILL');
      for (const f of readdirSync(locks).filter((name) => name.startsWith(`${lockId}.`))) rmSync(join(locks, f));
    });
    try {
      const scratch = await createBoundPvc(source, 'alice', 'scratch');
      writeWorkspace(scratch, { files: 5, bigFileBytes: 0 });
      const results = await backupVolumes(source.kube, {
        backupId: newBackupId(), s3: { ...s3For(s3, 'kf-backups'), endpoint: proxy.endpoint }, engine: 'restic', restic: { password },
        pvcs: [{ namespace: 'alice', name: 'scratch' }],
      });
      await removed;
      expect(results[0]!.restic!.snapshot).to.match(/^[0-9a-f]{64}$/);
      // the mover interrupts restic at its first "retrying" warning; a loaded machine may let one or two retries through
      expect(proxy.seen.filter(loadsLock).length, 'loads of the vanished lock').to.be.within(1, 3);
    } finally {
      other.kill('SIGKILL');
      await proxy.stop();
    }
  });

  it('an empty volume is backed up (restic 0.14 refuses an empty snapshot) and restored empty', async function () {
    this.timeout(300_000);
    await createBoundPvc(source, 'alice', 'empty');
    const [backedUp] = await backupVolumes(source.kube, {
      backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), engine: 'restic', restic: { password }, pvcs: [{ namespace: 'alice', name: 'empty' }],
    });
    expect(backedUp!.restic!.snapshot).to.match(/^[0-9a-f]{64}$/);
    expect([backedUp!.files, backedUp!.bytes]).to.deep.equal([0, 0]);
    target.cluster.api.create(PVC_REF, pvc('alice', 'empty'));
    const [restored] = await restoreVolumes(target.kube, {
      backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), engine: 'restic', pvcs: [{ namespace: 'alice', name: 'empty' }],
      restic: { password, snapshots: new Map([['alice/empty', backedUp!.restic!.snapshot]]) },
    });
    expect([restored!.files, restored!.bytes]).to.deep.equal([0, 0]);
    expect(readdirSync(target.kubelet.volumePath('alice', 'empty')), 'nothing written into the volume').to.deep.equal([]);
  });

  it('with a key, the bucket holds no volume byte and no file name in clear', async function () {
    const names = new Set([...original.keys()].flatMap((p) => p.split('/')));
    const contents = [...original].filter(([, hash]) => !hash.startsWith('link:')).map(([p]) => p).slice(0, 40)
      .map((p) => readFileSync(join(source.kubelet.volumePath('alice', 'workspace'), p)))
      .filter((b) => b.length >= 16).map((b) => b.subarray(0, 16));
    const walk = (dir: string): string[] => readdirSync(dir).flatMap((e) => (statSync(join(dir, e)).isDirectory() ? walk(join(dir, e)) : [join(dir, e)]));
    const objects = walk(s3.directory).filter((f) => f.includes('restic'));
    expect(objects.length).to.be.greaterThan(5);
    for (const file of objects) {
      const bytes = readFileSync(file);
      for (const name of names) if (name.length >= 6) expect(bytes.includes(Buffer.from(name)), `${name} in ${file}`).to.equal(false);
      for (const piece of contents) expect(bytes.includes(piece), `volume bytes in ${file}`).to.equal(false);
    }
  });

  it('a flipped byte in a pack file is found by restic inside the Job, and the fill fails in one sentence', async function () {
    this.timeout(300_000);
    // The pack that holds the largest data blob: a piece of the workspace's 8 MiB model file (restic's index says which).
    const indexes = (await restic('alice', ['list', 'index'])).stdout.trim().split('\n');
    let chosen = { pack: '', length: 0 };
    for (const index of indexes) {
      const parsed = JSON.parse((await restic('alice', ['cat', 'index', index])).stdout) as { packs: { id: string; blobs: { type: string; length: number }[] }[] };
      for (const pack of parsed.packs) for (const blob of pack.blobs) if (blob.type === 'data' && blob.length > chosen.length) chosen = { pack: pack.id, length: blob.length };
    }
    const folder = join(s3.directory, 'kf-backups', 'kubeflow', 'restic', 'alice', 'data', chosen.pack.slice(0, 2));
    const largest = join(folder, readdirSync(folder).find((f) => f.startsWith(chosen.pack) && f.endsWith('object'))!);
    const bytes = readFileSync(largest);
    bytes[100] = bytes[100]! ^ 0xff;
    writeFileSync(largest, bytes);
    target.cluster.api.create(PVC_REF, pvc('alice', 'again'));
    const failure = await volumeFailure(restoreVolumes(target.kube, {
      backupId: firstBackup, s3: s3For(s3, 'kf-backups'), engine: 'restic',
      restic: { password, snapshots: new Map([['alice/again', firstSnapshots.get('alice/workspace')!]]) },
      pvcs: [{ namespace: 'alice', name: 'again' }],
    }));
    expect(failure.failures).to.have.length(1);
    expect(failure.message.split('\n')).to.have.length(1);
    expect(failure.message).to.match(/^The volume restore failed for PVC alice\/again \(mover Job kfu-restore-[0-9a-f]+ failed: .+\)\.$/);
    expect(failure.message).to.not.include(password('alice'));
    expect(failure.message).to.include('fails its authentication');
  });
});
