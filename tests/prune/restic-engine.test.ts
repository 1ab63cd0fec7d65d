// The prune engine's decisions about restic repositories (src/prune/restic.ts through pruneBackups), over the product's
// in-memory backup store with hand-written manifests and a recording stand-in for the restic Jobs: what is forgotten
// where, what keeps a backup, and that every refusal comes before the first change. The Jobs themselves run against
// real restic and s3rver in tests/prune/restic.process.test.ts and tests/cli/commands/prune.process.test.ts.
import { expect } from 'chai';
import { pruneBackups } from '../../src/prune/engine.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { recordingRepositories } from './recording-repositories.ts';

const snap = (n: number) => n.toString(16).padStart(64, '0');
const NOW = new Date('2026-12-02T12:00:00Z');

type Pin = { namespace: string; pvc: string; snapshot: string };

async function backup(store: MemoryBackupStore, id: string, pins: Pin[]): Promise<void> {
  const keys = backupKeys(id);
  const manifest = {
    formatVersion: 1, veleroFormatVersion: '1.1.0', tool: { name: 'kubeflow-upgrader', version: 'test' }, backupId: id,
    created: '2026-12-01T10:00:00.000Z', completed: '2026-12-01T10:00:00.000Z', scope: { action: 'backup-state' }, counts: {}, objects: 0, bytes: 0,
    checksums: { algorithm: 'sha256', tarball: '0'.repeat(64), entries: {}, files: {} }, encryption: null,
    volumes: pins.map((p) => ({ namespace: p.namespace, pvc: p.pvc, key: `restic/${p.namespace}`, files: 1, bytes: 10, restic: { repository: `kf/restic/${p.namespace}`, snapshot: p.snapshot } })),
  };
  await store.objects.put(keys.manifest, JSON.stringify(manifest));
  await store.objects.put(keys.marker, '{}');
}

const repositories = recordingRepositories;

const movers = (jobs: KubeObject[] = []) => ({ list: async (kind: string) => (kind === 'jobs' ? jobs : []), delete: async () => undefined });

describe('prune: restic repositories (engine)', () => {
  let store: MemoryBackupStore;
  const ids = ['kf-20261201-100000-aaaaaa', 'kf-20261201-110000-bbbbbb', 'kf-20261201-120000-cccccc'];
  beforeEach(async () => {
    store = new MemoryBackupStore();
    await backup(store, ids[0]!, [{ namespace: 'alice', pvc: 'ws', snapshot: snap(1) }, { namespace: 'bob', pvc: 'ws', snapshot: snap(2) }]);
    // the middle backup names alice's snapshot 1 again: it is kept, so snapshot 1 must stay
    await backup(store, ids[1]!, [{ namespace: 'alice', pvc: 'ws', snapshot: snap(1) }, { namespace: 'bob', pvc: 'ws', snapshot: snap(3) }]);
    await backup(store, ids[2]!, [{ namespace: 'alice', pvc: 'ws', snapshot: snap(4) }, { namespace: 'bob', pvc: 'ws', snapshot: snap(5) }]);
  });
  const exists = (id: string) => store.objects.exists(backupKeys(id).marker);

  it('forgets per repository only what no kept backup names, one Job per repository', async () => {
    const { calls, restic } = repositories();
    const outcome = await pruneBackups(store, { retention: 2, dryRun: false, now: NOW, movers: movers(), restic });
    expect(calls).to.deep.equal([{ namespace: 'bob', mode: 'prune', snapshots: [snap(2)] }]);
    expect(outcome.deleted.map((d) => d.id)).to.deep.equal([ids[0]]);
    expect(outcome.restic.map((r) => [r.namespace, r.snapshotsForgotten, r.backups])).to.deep.equal([['bob', 1, [ids[0]]]]);
    expect(await exists(ids[0]!)).to.equal(false);
  });

  it('keeps, with a note, the backups pinning into a repository whose Job failed, and deletes the rest', async () => {
    const { restic } = repositories((call) => {
      if (call.namespace === 'alice') throw new Error('restic prune Job kfu-prune-x failed: wrong password or no key found');
      return { state: 'pruned', ignored: 0, totalPrune: '' };
    });
    await backup(store, 'kf-20261201-090000-dddddd', [{ namespace: 'bob', pvc: 'ws', snapshot: snap(6) }]);
    const outcome = await pruneBackups(store, { retention: 1, dryRun: false, now: NOW, movers: movers(), restic });
    expect(outcome.deleted.map((d) => d.id)).to.deep.equal(['kf-20261201-090000-dddddd']);
    expect(outcome.kept.filter((k) => k.why === 'its restic snapshots could not be forgotten yet').map((k) => k.id).sort()).to.deep.equal([ids[0], ids[1]]);
    expect(outcome.notes.join(' ')).to.include('wrong password or no key found').and.include('prune again once that is fixed');
    expect(await exists(ids[0]!)).to.equal(true);
  });

  it('refuses before the first change without a cluster; a dry run says so', async () => {
    await expectRefusal(pruneBackups(store, { retention: 1, dryRun: false, now: NOW }), /^Nothing was pruned: backups .* hold restic snapshots, which only a restic Job in the cluster can forget/);
    const dry = await pruneBackups(store, { retention: 1, dryRun: true, now: NOW });
    expect(dry.notes.join(' ')).to.match(/A run now would refuse: backups .* hold restic snapshots/);
    for (const id of ids) expect(await exists(id)).to.equal(true);
  });

  it('a running Job with the mover labels holds nothing up: it is named as ignored', async () => {
    const running: KubeObject = {
      apiVersion: 'batch/v1', kind: 'Job', status: {},
      metadata: { name: 'kfu-restore-1', namespace: 'alice', labels: { 'kubeflow-upgrader/backup-id': 'kf-20261201-130000-eeeeee' } },
    };
    const { calls, restic } = repositories();
    const outcome = await pruneBackups(store, { retention: 2, dryRun: false, now: NOW, movers: movers([running]), restic });
    expect(calls.map((c) => [c.namespace, c.mode])).to.deep.equal([['bob', 'prune']]);
    expect(outcome.deleted.map((d) => d.id)).to.deep.equal([ids[0]]);
    expect(outcome.ignored).to.have.length(1);
    expect(outcome.ignored[0]!.what).to.equal('Job alice/kfu-restore-1');
    expect(outcome.ignored[0]!.why).to.match(/no backup being written accounts for it, and labels prove nothing/);
  });

  it('a live restic lock holds only its own repository, with what, where, since when and what clears it', async () => {
    await store.objects.put('restic/bob/locks/0123', 'lock');
    const since = new Date(NOW.getTime() - 4 * 60_000);
    const { calls, restic } = repositories((call) => (call.mode === 'check'
      ? { state: 'locks', count: 1, locks: [{ id: 'b'.repeat(64), lock: { time: since.toISOString(), exclusive: false, hostname: 'kfu-backup-pod', pid: 7 } }] }
      : { state: 'pruned', ignored: 0, totalPrune: '' }));
    const outcome = await pruneBackups(store, { retention: 1, dryRun: false, now: NOW, movers: movers(), restic });
    expect(calls.map((c) => [c.namespace, c.mode])).to.deep.equal([['alice', 'prune'], ['bob', 'check']]);
    const note = outcome.notes.find((n) => n.includes('locked by a running restic'));
    expect(note).to.equal(`The restic repository s3://memory/restic/bob is locked by a running restic (a lock held by kfu-backup-pod pid 7 since ${since.toISOString()}; restic takes it to be stale at ${new Date(since.getTime() + 30 * 60_000).toISOString()} if that restic is gone), and pruning a restic repository needs restic's exclusive lock; prune again once it has finished. Backups ${ids[0]}, ${ids[1]} were kept for now.`);
    // both older backups pin into bob's repository: they stay, with their snapshots, for the next run
    expect(outcome.deleted).to.deep.equal([]);
    expect(outcome.restic.map((r) => r.namespace)).to.deep.equal(['alice']);
  });

  it('dry-run runs no Job and names what would be forgotten', async () => {
    const { calls, restic } = repositories();
    const outcome = await pruneBackups(store, { retention: 1, dryRun: true, now: NOW, movers: movers(), restic });
    expect(calls).to.deep.equal([]);
    expect(outcome.restic.map((r) => [r.namespace, r.snapshotsForgotten, r.bytesFreed])).to.deep.equal([['alice', 1, undefined], ['bob', 2, undefined]]);
    for (const id of ids) expect(await exists(id)).to.equal(true);
  });

  it('with a key, counts no backup without a valid HMAC: none is deleted unasked, and asked, none has its snapshots forgotten', async () => {
    const { calls, restic } = repositories();
    const kept = await pruneBackups(store, { retention: 1, dryRun: false, now: NOW, movers: movers(), restic, encryptionKey: 'a key' });
    expect(kept.deleted).to.deep.equal([]);
    expect(kept.untrusted.map((u) => [u.id, u.why]).sort()).to.deep.equal(ids.map((id) => [id, "its velero-backup.json cannot be read"]));
    expect(kept.notes.join(' ')).to.match(/3 complete folder\(s\) are not authenticated under the encryption key .* were left as they are; prune with unauthenticated folders deleted to delete them\./);
    for (const id of ids) expect(await exists(id)).to.equal(true);

    const deleted = await pruneBackups(store, { retention: 1, dryRun: false, now: NOW, movers: movers(), restic, encryptionKey: 'a key', deleteUnauthenticated: true });
    expect(calls).to.deep.equal([]);
    expect(deleted.deleted.map((d) => [d.id, d.reason]).sort()).to.deep.equal(ids.map((id) => [id, 'not authenticated']));
    expect(deleted.notes.filter((n) => / is not trusted \(its velero-backup.json carries no HMAC/.test(n))).to.have.length(3);
  });
});

async function expectRefusal(work: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await work;
  } catch (error) {
    expect((error as Error).message).to.match(pattern);
    expect((error as Error).message.split('\n')).to.have.length(1);
    return;
  }
  expect.fail('the prune was not refused');
}
