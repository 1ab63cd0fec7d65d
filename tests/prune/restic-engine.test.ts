// The prune engine's decisions about restic repositories (src/prune/restic.ts through pruneBackups), over the product's
// in-memory backup store with hand-written manifests and a recording stand-in for the restic Jobs: what is forgotten
// where, what keeps a backup, and that every refusal comes before the first change. The Jobs themselves run against
// real restic and s3rver in tests/prune/restic.process.test.ts and tests/cli/commands/prune.process.test.ts.
import { expect } from 'chai';
import { pruneBackups } from '../../src/prune/engine.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { KubeObject } from '../../src/kube/types.ts';

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

interface Call { namespace: string; mode: string; snapshots: readonly string[] }

function repositories(answer: (call: Call) => Promise<unknown> | unknown = () => ({ state: 'pruned', ignored: 0, totalPrune: '' })) {
  const calls: Call[] = [];
  return {
    calls,
    restic: {
      repositoryKey: (ns: string) => `kf/restic/${ns}`,
      locationKey: (ns: string) => `restic/${ns}`,
      run: async (namespace: string, mode: 'check' | 'prune', snapshots: readonly string[]) => {
        const call = { namespace, mode, snapshots: [...snapshots] };
        calls.push(call);
        return answer(call) as never;
      },
    },
  };
}

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
    expect(outcome.notes.join(' ')).to.include('wrong password or no key found').and.include('run the prune again');
    expect(await exists(ids[0]!)).to.equal(true);
  });

  it('refuses before the first change: a running mover Job, a live lock in any repository, or no cluster', async () => {
    const running: KubeObject = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'kfu-restore-1', namespace: 'alice' }, status: {} };
    const first = repositories();
    await expectRefusal(pruneBackups(store, { retention: 1, dryRun: false, now: NOW, movers: movers([running]), restic: first.restic }), /^Nothing was pruned: volume-mover Job alice\/kfu-restore-1 is running/);
    expect(first.calls).to.deep.equal([]);

    // bob's repository holds a lock object; restic (the check Job) says it is live: nothing is forgotten anywhere
    await store.objects.put('restic/bob/locks/0123', 'lock');
    const second = repositories((call) => (call.mode === 'check' ? { state: 'locked', locks: 1 } : { state: 'pruned', ignored: 0, totalPrune: '' }));
    await expectRefusal(pruneBackups(store, { retention: 1, dryRun: false, now: NOW, movers: movers(), restic: second.restic }), /^Nothing was pruned: the restic repository \S+restic\/bob holds 1 lock\(s\)/);
    expect(second.calls.map((c) => c.mode)).to.deep.equal(['check']);

    await expectRefusal(pruneBackups(store, { retention: 1, dryRun: false, now: NOW }), /^Nothing was pruned: backups .* hold restic snapshots, which only a restic Job in the cluster can forget/);
    // a dry run says the same as a note
    const dry = await pruneBackups(store, { retention: 1, dryRun: true, now: NOW });
    expect(dry.notes.join(' ')).to.match(/A run now would refuse: backups .* hold restic snapshots/);
    for (const id of ids) expect(await exists(id)).to.equal(true);
  });

  it('dry-run runs no Job and names what would be forgotten', async () => {
    const { calls, restic } = repositories();
    const outcome = await pruneBackups(store, { retention: 1, dryRun: true, now: NOW, movers: movers(), restic });
    expect(calls).to.deep.equal([]);
    expect(outcome.restic.map((r) => [r.namespace, r.snapshotsForgotten, r.bytesFreed])).to.deep.equal([['alice', 1, undefined], ['bob', 2, undefined]]);
    for (const id of ids) expect(await exists(id)).to.equal(true);
  });

  it('with a key, forgets nothing on the word of a manifest without a valid HMAC', async () => {
    const { calls, restic } = repositories();
    const outcome = await pruneBackups(store, { retention: 1, dryRun: false, now: NOW, movers: movers(), restic: { ...restic, encryptionKey: 'a key' } });
    expect(calls).to.deep.equal([]);
    expect(outcome.notes.filter((n) => / is not trusted \(its velero-backup.json carries no HMAC/.test(n))).to.have.length(2);
    expect(outcome.deleted.map((d) => d.id).sort()).to.deep.equal([ids[0], ids[1]]);
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
