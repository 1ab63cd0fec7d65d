// prune-backups on backups whose volume data is in restic repositories, through the real ./dispatch: the snapshots
// the deleted backups' authenticated manifests pin are forgotten and the repository pruned by a restic Job (run by the
// simulated kubelet with Debian's restic against s3rver), the newest backup stays restorable byte for byte, and the
// bucket shrinks by the data only the old backups held. With the encryption key only what it vouches for counts
// (issue 40's attacks): marker copies in folders named for tomorrow delete no real backup; a fresh folder without a
// run record, a lock file that does not decrypt and a Job a profile's user made with the mover labels hold nothing
// up and are named; a live restic lock holds its own repository only. The oracles are restic itself, run directly
// with the password, and the bucket's own listing.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { execa } from 'execa';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { hashTree, startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { namespacePassword } from '../volumes/restic-passwords.ts';
import { newBackupId } from '../../src/store/layout.ts';

const BUCKET = 'restic-prune';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const JOBS = { group: 'batch', resource: 'jobs' };
const KEY_SECRET = 'secret:cta0resticprunekey00000001';
const KEY = 'the prune passphrase';
const MiB = 1024 * 1024;

describe('prune-backups with restic repositories (real ./dispatch, volume-mover-engine=restic)', function () {
  this.timeout(600_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let client: S3Client;
  let namespace: string;
  let pvcs: string[];
  let volume: string;
  let work: string;
  let lastBackupId: string | undefined;

  before(async () => {
    [charmDir, s3, source] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 47 })]);
    const claims = source.cluster.api.list(PVCS).filter((p) => p.metadata.namespace !== 'kubeflow');
    namespace = claims[0]!.metadata.namespace!;
    pvcs = claims.filter((c) => c.metadata.namespace === namespace).map((c) => c.metadata.name!);
    volume = source.kubelet.volumePath(namespace, pvcs[0]!);
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    work = mkdtempSync(join(tmpdir(), 'restic-prune-'));
  });
  after(async () => {
    client?.destroy();
    await Promise.all([s3?.stop(), source?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function action(name: string, params: Record<string, unknown>, side: KubeletCluster, config: Record<string, unknown> = {}): Promise<DispatchOutcome> {
    const state = emptyState({
      relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params,
      config: { 'restore-wait-timeout': 60, 'volume-mover-engine': 'restic', 'encryption-key': KEY_SECRET, ...config },
    });
    state.secrets[KEY_SECRET] = { revisions: [{ key: KEY }] };
    return runDispatch(charmDir, state, { event: `actions/${name}`, env: { KUBECONFIG: side.cluster.kubeconfigPath } });
  }

  const prune = (params: Record<string, unknown> = {}) => action('prune-backups', params, source, { 'backup-retention': 1 });

  /** A backup after the volume's old data was replaced by `bytes` of new random data (which no compression shrinks). */
  async function backupWith(name: string, bytes: number): Promise<{ id: string; tree: Map<string, string> }> {
    for (const f of readdirSync(volume)) if (f.startsWith('unique-')) unlinkSync(join(volume, f));
    writeFileSync(join(volume, `unique-${name}.bin`), randomBytes(bytes));
    const tree = hashTree(volume);
    await clockPastSecondOf(lastBackupId);
    const done = await action('backup-state', { 'include-control-plane': false }, source);
    expect(done.state.actionFailure, done.stderr.slice(-2000)).to.equal(undefined);
    lastBackupId = done.state.actionResults['backup-id']!;
    return { id: lastBackupId, tree };
  }

  async function pinned(id: string): Promise<string[]> {
    const body = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${id}/kubeflow-upgrader.json` }))).Body!.transformToString();
    return (JSON.parse(body) as { volumes: { restic?: { snapshot: string } }[] }).volumes.flatMap((v) => (v.restic ? [v.restic.snapshot] : []));
  }

  const pinnedOf = (id: string) => pinned(id);
  const notesOf = (outcome: DispatchOutcome) => Object.entries(outcome.state.actionResults).filter(([k]) => k.startsWith('notes.')).map(([, v]) => v);

  async function keys(prefix: string): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) found.set(o.Key!, o.Size ?? 0);
      token = page.NextContinuationToken;
    } while (token);
    return found;
  }
  const repositoryBytes = async () => [...(await keys(`backups/restic/${namespace}/`)).values()].reduce((a, b) => a + b, 0);
  const backupExists = async (id: string) => (await keys(`backups/backups/${id}/velero-backup.json`)).size > 0;

  const resticEnv = () => ({
    PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    RESTIC_PASSWORD: namespacePassword(KEY, namespace), RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/backups/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
  });
  /** the snapshot ids restic itself lists in the namespace's repository */
  async function snapshotsInRepository(): Promise<string[]> {
    const out = await execa('restic', ['-o', 's3.bucket-lookup=path', '--no-lock', 'snapshots', '--json'], { env: resticEnv(), extendEnv: false });
    return (JSON.parse(out.stdout) as { id: string }[]).map((s) => s.id).sort();
  }

  async function restoreInto(id: string): Promise<Map<string, string>> {
    const target = await startKubeletCluster({ profiles: 0, seed: 47 });
    try {
      const restored = await action('restore-state', { 'backup-id': id }, target);
      expect(restored.state.actionFailure, restored.stderr.slice(-2000)).to.equal(undefined);
      return hashTree(target.kubelet.volumePath(namespace, pvcs[0]!));
    } finally {
      await target.stop();
    }
  }

  /** everything a refused prune must leave as it was */
  async function snapshotOfState(ids: string[]) {
    return { repository: await keys(`backups/restic/${namespace}/`), snapshots: await snapshotsInRepository(), backups: await Promise.all(ids.map(backupExists)) };
  }

  let a: { id: string; tree: Map<string, string> };
  let b: { id: string; tree: Map<string, string> };
  let c: { id: string; tree: Map<string, string> };

  it('dry-run names the snapshots the old backups pin and changes nothing', async () => {
    a = await backupWith('a', 3 * MiB);
    b = await backupWith('b', 3 * MiB);
    c = await backupWith('c', 3 * MiB);
    const before = await snapshotOfState([a.id, b.id, c.id]);
    const dry = await prune({ 'dry-run': true });
    expect(dry.state.actionFailure, dry.stderr.slice(-2000)).to.equal(undefined);
    const results = dry.state.actionResults;
    const toForget = (await pinned(a.id)).length + (await pinned(b.id)).length;
    expect(toForget).to.equal(2 * pvcs.length);
    expect(results['restic.0.repository']).to.equal(`s3://${BUCKET}/backups/restic/${namespace}`);
    expect(results['restic.0.snapshots-to-forget']).to.equal(String(toForget));
    expect(results['restic.0.backups']).to.equal([a.id, b.id].sort().join(','));
    expect(results['restic.0.bytes-freed']).to.equal(undefined);
    expect(await snapshotOfState([a.id, b.id, c.id])).to.deep.equal(before);
  });

  it('two marker copies in folders named for tomorrow delete no real backup: the forged folders are named and left, or deleted when asked', async () => {
    const ids = [a.id, b.id, c.id];
    const before = await snapshotOfState(ids);
    const aSnapshots = await pinned(a.id);
    // a bucket writer without the key: the newest marker copied into two folders dated tomorrow (two PUTs, no manifest)
    const marker = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${c.id}/velero-backup.json` }))).Body!.transformToByteArray();
    const tomorrow = new Date(Date.now() + 24 * 3_600_000);
    const forged = [newBackupId(tomorrow), newBackupId(new Date(tomorrow.getTime() + 60_000))].sort();
    for (const id of forged) await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${id}/velero-backup.json`, Body: marker }));

    // retention 2: without the key's word the forged folders would be the two newest, and every real backup beyond it
    const pruned = await action('prune-backups', {}, source, { 'backup-retention': 2 });
    expect(pruned.state.actionFailure, pruned.stderr.slice(-2000)).to.equal(undefined);
    const results = pruned.state.actionResults;
    expect(results.deleted).to.equal(a.id);
    expect(results.kept).to.equal([c.id, b.id].join(','));
    expect(results.untrusted).to.equal(forged.join(','));
    for (const id of forged) expect(results[`reasons.${id}`]).to.equal('not authenticated, left as it is: it has no kubeflow-upgrader manifest');
    expect(results['restic.0.backups']).to.equal(a.id);
    // b and c are within retention: their snapshots stay, and restic still lists them
    const left = await snapshotsInRepository();
    for (const id of [...(await pinnedOf(b.id)), ...(await pinnedOf(c.id))]) expect(left).to.include(id);
    for (const id of [b.id, c.id, ...forged]) expect(await backupExists(id), id).to.equal(true);

    const asked = await action('prune-backups', { 'delete-unauthenticated': true }, source, { 'backup-retention': 2 });
    expect(asked.state.actionFailure, asked.stderr.slice(-2000)).to.equal(undefined);
    expect(asked.state.actionResults.deleted).to.equal(forged.join(','));
    for (const id of forged) expect(await backupExists(id), id).to.equal(false);
    for (const id of [b.id, c.id]) expect(await backupExists(id), id).to.equal(true);
    expect(await snapshotsInRepository()).to.deep.equal(before.snapshots.filter((id) => !aSnapshots.includes(id)));
    // the next tests want three backups again: the two left, and a new newest one
    const newest = await backupWith('d', 3 * MiB);
    [a, b, c] = [b, c, newest];
  });

  it('a live restic lock holds its repository: the backups pinning into it stay, saying who holds it since when; nothing changes', async () => {
    const ids = [a.id, b.id, c.id];
    const before = await snapshotOfState(ids);
    // a restic holding its lock on the repository, alive: restic's own lock, which prune's exclusive lock must wait for
    const holder: ChildProcess = spawn('sh', ['-c', 'sleep 120 | restic -o s3.bucket-lookup=path backup --stdin --stdin-filename held'], { env: resticEnv(), stdio: 'ignore', detached: true });
    try {
      const locks = async () => [...(await keys(`backups/restic/${namespace}/locks/`)).keys()].length;
      for (const deadline = Date.now() + 60_000; (await locks()) === 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
      expect(await locks(), 'the holder took its lock').to.be.greaterThan(0);
      const held = await prune();
      expect(held.state.actionFailure, held.stderr.slice(-2000)).to.equal(undefined);
      expect(held.state.actionResults.deleted).to.equal('none');
      const note = notesOf(held).find((n) => n.includes('is locked by a running restic'));
      expect(note, notesOf(held).join(' | ')).to.match(new RegExp(`^The restic repository s3://${BUCKET}/backups/restic/${namespace} is locked by a running restic \\(a lock held by \\S+ pid \\d+ since \\S+Z; restic takes it to be stale at \\S+Z if that restic is gone\\), and pruning a restic repository needs restic's exclusive lock; run prune-backups again once it has finished\\. Backups ${[a.id, b.id].sort().join(', ')} were kept for now\\.$`));
    } finally {
      process.kill(-holder.pid!, 'SIGKILL');
    }
    const after = await snapshotOfState(ids);
    // the holder's lock (stale now its process is gone) is the one object that may differ
    for (const state of [before, after]) for (const key of [...state.repository.keys()]) if (key.includes('/locks/')) state.repository.delete(key);
    expect(after).to.deep.equal(before);
  });

  it('forgets the old backups\' snapshots by id and prunes: the bucket shrinks and the newest restores byte-identical', async () => {
    const old = [...(await pinned(a.id)), ...(await pinned(b.id))];
    const newest = await pinned(c.id);
    const bytesBefore = await repositoryBytes();
    // a snapshot tagged as if it belonged to backup a, written by whoever can write the bucket: tags are never trusted
    const planted = join(work, 'planted');
    writeFileSync(planted, randomBytes(1000));
    await execa('restic', ['-o', 's3.bucket-lookup=path', 'backup', '--tag', `kfu-backup=${a.id}`, planted], { env: resticEnv(), extendEnv: false });
    const plantedId = (await snapshotsInRepository()).find((id) => !old.includes(id) && !newest.includes(id))!;
    // what a bucket writer or a profile's user can plant, none of which may hold prune up: a folder written to a moment
    // ago without a run record, a lock file that does not decrypt, and a running Job with the mover's labels
    const fresh = newBackupId();
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${fresh}/${fresh}.tar.gz`, Body: 'partial' }));
    const garbage = randomBytes(32).toString('hex');
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `backups/restic/${namespace}/locks/${garbage}`, Body: randomBytes(200) }));
    source.cluster.api.create(JOBS, {
      apiVersion: 'batch/v1', kind: 'Job',
      metadata: { name: 'kfu-backup-elsewhere', namespace, labels: { 'app.kubernetes.io/managed-by': 'kubeflow-upgrader', 'app.kubernetes.io/component': 'volume-mover', 'kubeflow-upgrader/backup-id': newBackupId() } },
      spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'mover', image: 'docker.io/restic/restic:0.14.0', command: ['sh', '-c', 'sleep 600'] }] } } },
    });

    const pruned = await prune();
    expect(pruned.state.actionFailure, pruned.stderr.slice(-2000)).to.equal(undefined);
    const results = pruned.state.actionResults;
    expect(results.deleted).to.equal([b.id, a.id].join(','));
    expect(results['restic.0.snapshots-forgotten']).to.equal(String(old.length));
    const freed = Number(results['restic.0.bytes-freed']);
    expect(Number(results['restic.0.bytes-before']) - Number(results['restic.0.bytes-after'])).to.equal(freed);
    // the two 3 MiB files only a and b held are gone from the bucket (random data: restic's compression keeps its size)
    const bytesAfter = await repositoryBytes();
    expect(bytesBefore - bytesAfter).to.be.greaterThan(5.5 * MiB);
    expect(freed).to.be.greaterThan(5.5 * MiB);
    expect(await snapshotsInRepository()).to.deep.equal([...newest, plantedId].sort());
    expect(await backupExists(a.id)).to.equal(false);
    expect(await backupExists(b.id)).to.equal(false);
    // what was planted is named with why it was not obeyed
    const ignored = Object.entries(results).filter(([k]) => k.startsWith('ignored.')).map(([, v]) => v);
    expect(ignored.find((i) => i.startsWith(`folder s3://${BUCKET}/backups/backups/${fresh}/: written to`)), ignored.join(' | ')).to.match(/it holds no run record, so it is not taken for a backup being written$/);
    expect(ignored.find((i) => i.startsWith(`restic lock ${garbage.slice(0, 12)} in s3://${BUCKET}/backups/restic/${namespace}: `)), ignored.join(' | ')).to.include("it does not decrypt under the repository's key; restic itself passes over it");
    expect(ignored.find((i) => i.startsWith(`Job ${namespace}/kfu-backup-elsewhere: `)), ignored.join(' | ')).to.include('labels prove nothing');
    source.cluster.api.delete(JOBS, 'kfu-backup-elsewhere', namespace);
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${fresh}/${fresh}.tar.gz` }));
    // asked, prune removes the lock file restic would not have written
    const cleared = await prune({ 'remove-foreign-locks': true });
    expect(cleared.state.actionResults['removed-locks.0']).to.equal(`s3://${BUCKET}/backups/restic/${namespace}/locks/${garbage}`);
    expect((await keys(`backups/restic/${namespace}/locks/${garbage}`)).size).to.equal(0);
    // the run's Secret is gone, and neither the password nor the passphrase reached a result or a log line
    const left = source.cluster.api.list({ group: '', resource: 'secrets' }).filter((x) => x.metadata.labels?.['kubeflow-upgrader/operation'] === 'prune');
    expect(left.map((x) => x.metadata.name)).to.deep.equal([]);
    // what the action said and logged (the state's own secret and relation data, which hold the keys, aside)
    const said = JSON.stringify({ ...pruned.state, secrets: undefined, relations: undefined }) + pruned.stdout + pruned.stderr;
    for (const secret of [namespacePassword(KEY, namespace), KEY]) expect(said).to.not.include(secret);
    expect(await restoreInto(c.id)).to.deep.equal(c.tree);
  });

  it('a backup whose HMAC no longer verifies is not counted; deleted when asked, nothing is forgotten on its word', async () => {
    const d = await backupWith('d', MiB);
    // c is now beyond retention 1; its marker's HMAC is changed, as a bucket writer without the key would change it
    const markerKey = `backups/backups/${c.id}/velero-backup.json`;
    const marker = JSON.parse(await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: markerKey }))).Body!.transformToString()) as { metadata: { annotations: Record<string, string> } };
    const hmacKey = Object.keys(marker.metadata.annotations).find((k) => k.endsWith('manifest-hmac'))!;
    marker.metadata.annotations[hmacKey] = marker.metadata.annotations[hmacKey]!.replace(/mac=([0-9a-f])/, (_, x: string) => `mac=${x === '0' ? '1' : '0'}`);
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: markerKey, Body: JSON.stringify(marker) }));
    const cSnapshots = await pinned(c.id);
    const left = await prune();
    expect(left.state.actionFailure, left.stderr.slice(-2000)).to.equal(undefined);
    expect(left.state.actionResults.untrusted).to.equal(c.id);
    expect(left.state.actionResults[`reasons.${c.id}`]).to.equal('not authenticated, left as it is: its HMAC does not match its manifest under the encryption-key');
    expect(await backupExists(c.id)).to.equal(true);
    const pruned = await prune({ 'delete-unauthenticated': true });
    expect(pruned.state.actionFailure, pruned.stderr.slice(-2000)).to.equal(undefined);
    expect(pruned.state.actionResults.deleted).to.equal(c.id);
    const notes = notesOf(pruned);
    const note = notes.find((n) => n.startsWith(`Backup ${c.id} is not trusted`));
    expect(note, notes.join(' | ')).to.match(/none of the \d+ restic snapshot\(s\) its manifest names was forgotten; whatever data only they hold stays in the repositories\.$/);
    expect(pruned.state.actionResults['restic.0.repository']).to.equal(undefined);
    const remaining = await snapshotsInRepository();
    for (const id of [...cSnapshots, ...(await pinned(d.id))]) expect(remaining).to.include(id);
  });

  it('prunes the repository of a profile deleted since, from a Job in the model\'s namespace', async () => {
    const d = lastBackupId!;
    await backupWith('e', MiB);
    const old = await pinned(d);
    // the Profile goes, and with it (through the garbage collector) its namespace; the repository stays in the bucket
    source.cluster.api.delete({ group: 'kubeflow.org', resource: 'profiles' }, namespace);
    for (const deadline = Date.now() + 60_000; source.cluster.api.get({ group: '', resource: 'namespaces' }, namespace) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(source.cluster.api.get({ group: '', resource: 'namespaces' }, namespace), 'the namespace is gone').to.equal(undefined);
    const pruned = await prune();
    expect(pruned.state.actionFailure, pruned.stderr.slice(-2000)).to.equal(undefined);
    expect(pruned.state.actionResults.deleted).to.equal(d);
    expect(pruned.state.actionResults['restic.0.snapshots-forgotten']).to.equal(String(old.length));
    const left = await snapshotsInRepository();
    for (const id of old) expect(left).to.not.include(id);
  });
});
