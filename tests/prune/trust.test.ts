// Retention that trusts only what the key vouches for (src/prune/plan.ts, folders.ts, restic.ts through pruneBackups),
// over the product's in-memory store with backups the product's own writer signed: what a bucket writer without the
// key can write (marker copies in folders named for tomorrow, a fresh folder, an unsigned or moved run record, a lock
// that does not decrypt) never deletes, keeps or blocks a real backup. The attacks are the ones issue 40 measured; the
// same run through the real CLI and the charm's action with real restic is in tests/prune/restic.process.test.ts and
// tests/cli/commands/prune.process.test.ts.
import { expect } from 'chai';
import { pruneBackups } from '../../src/prune/engine.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { startWriter } from '../support/backup-store.ts';

const KEY = 'the retention passphrase';
const PROFILES = { group: 'kubeflow.org', version: 'v1', resource: 'profiles', kind: 'Profile', namespaced: false };
const day = 24 * 3_600_000;

/** A committed backup made by the product's writer, signed under `key`, started at `at`. */
async function realBackup(store: MemoryBackupStore, at: Date, key: string | undefined = KEY): Promise<string> {
  const writer = await startWriter(store, { toolVersion: 'test', started: at, now: () => at, scope: { action: 'backup-state', namespaces: ['alice'] }, ...(key ? { encryptionKey: key } : {}) });
  await writer.addItem(PROFILES as never, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'alice' }, spec: { owner: { kind: 'User', name: 'alice@example.com' } } });
  return (await writer.commit()).id;
}

/** The forger's id for a folder: our id's shape, at a time of their choosing. */
const idAt = (at: Date, tail: string) => `kf-${at.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}-${tail}`;

describe('prune: retention trusts only what the key vouches for', function () {
  this.timeout(60_000);
  let store: MemoryBackupStore;
  let real: string[];
  const now = new Date('2026-12-07T12:00:00.000Z');
  const exists = (id: string) => store.objects.exists(backupKeys(id).marker);

  beforeEach(async () => {
    store = new MemoryBackupStore();
    real = [];
    for (let i = 4; i >= 1; i--) real.push(await realBackup(store, new Date(now.getTime() - i * day)));
  });

  it('two marker copies in folders named for tomorrow delete no real backup, and are named', async () => {
    const newest = real.at(-1)!;
    const marker = store.objects.bytesOf(backupKeys(newest).marker)!;
    const forged = [idAt(new Date(now.getTime() + day), 'f00001'), idAt(new Date(now.getTime() + day + 60_000), 'f00002')];
    for (const id of forged) await store.objects.put(backupKeys(id).marker, marker);

    const outcome = await pruneBackups(store, { retention: 2, dryRun: false, now, encryptionKey: KEY });
    // the two oldest real ones go, by their manifests' times; the two newest stay, the forged folders are left and named
    expect(outcome.deleted.map((d) => d.id)).to.deep.equal([real[1], real[0]]);
    expect(outcome.kept.map((k) => [k.id, k.why])).to.deep.equal([[real[3], 'newest complete backup'], [real[2], 'within backup-retention']]);
    expect(outcome.untrusted.map((u) => u.id).sort()).to.deep.equal(forged);
    for (const u of outcome.untrusted) expect(u.why).to.equal('it has no kubeflow-upgrader manifest');
    for (const id of [...forged, real[2]!, real[3]!]) expect(await exists(id)).to.equal(true);

    // asked for, the forged folders go too, and still no real one within retention
    const asked = await pruneBackups(store, { retention: 2, dryRun: false, now, encryptionKey: KEY, deleteUnauthenticated: true });
    expect(asked.deleted.map((d) => [d.id, d.reason]).sort()).to.deep.equal(forged.map((id) => [id, 'not authenticated']));
    for (const id of forged) expect(await exists(id)).to.equal(false);
    for (const id of [real[2]!, real[3]!]) expect(await exists(id)).to.equal(true);
  });

  it('a whole backup copied under a newer name is not counted: its manifest names another backup', async () => {
    const source = backupKeys(real.at(-1)!);
    const copy = idAt(new Date(now.getTime() + day), 'c0ffee');
    const target = backupKeys(copy);
    for (const key of store.objects.keys()) if (key.startsWith(source.folder)) await store.objects.put(target.folder + key.slice(source.folder.length), store.objects.bytesOf(key)!);
    const outcome = await pruneBackups(store, { retention: 1, dryRun: true, now, encryptionKey: KEY });
    expect(outcome.kept.map((k) => k.id)).to.deep.equal([real.at(-1)]);
    expect(outcome.untrusted.map((u) => u.id)).to.deep.equal([copy]);
  });

  it('without a key it says that retention trusts the bucket', async () => {
    const outcome = await pruneBackups(store, { retention: 0, dryRun: true, now });
    expect(outcome.notes).to.include('No encryption key is set, so retention trusts the bucket: whoever can write it can add folders that count as backups and make real ones beyond retention; set the encryption key to count only authenticated backups.');
  });

  describe('a backup being written', () => {
    const pins = { namespace: 'alice', snapshot: 'a'.repeat(64) };
    const restic = { repositoryKey: (ns: string) => `x/restic/${ns}`, locationKey: (ns: string) => `restic/${ns}`, repositoriesFolder: 'restic/', run: async () => ({ state: 'pruned', ignored: 0, totalPrune: '' }) as never };
    const movers = { list: async () => [], delete: async () => undefined };

    /** an old real backup that pins a restic snapshot, so that pruning it needs restic's lock */
    async function pinnedOldBackup(): Promise<string> {
      const at = new Date(now.getTime() - 10 * day);
      const writer = await startWriter(store, { toolVersion: 'test', started: at, now: () => at, encryptionKey: KEY, scope: { action: 'backup-state', namespaces: ['alice'] } });
      await writer.addItem(PROFILES as never, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'alice' }, spec: {} });
      writer.setVolumes([{ namespace: pins.namespace, pvc: 'ws', key: 'restic/alice', files: 1, bytes: 1, restic: { repository: 'x/restic/alice', snapshot: pins.snapshot } }] as never);
      return (await writer.commit()).id;
    }

    it('refuses while its authenticated run record holds, with the id, since when and what clears it; proceeds once it ran out', async () => {
      const old = await pinnedOldBackup();
      const startedAt = new Date();
      const pending = await store.beginBackup(idAt(startedAt, 'abcdef'), { encryptionKey: KEY, started: startedAt, leaseMs: 10 * 60_000 });
      try {
        let refusal = '';
        await pruneBackups(store, { retention: 4, dryRun: false, encryptionKey: KEY, restic, movers }).catch((error: Error) => { refusal = error.message; });
        expect(refusal).to.match(new RegExp(`^Nothing was pruned: backup ${pending.id} is being written \\(started ${startedAt.toISOString()}; its run record holds until (\\S+)\\), and pruning a restic repository needs restic's exclusive lock; prune again once that backup has finished, or after \\1 if it was stopped\\.$`));
        expect(await exists(old)).to.equal(true);
        // the record's lease, 10 minutes, has run out: the writer is gone, and prune goes on
        const later = await pruneBackups(store, { retention: 4, dryRun: false, now: new Date(Date.now() + 11 * 60_000), encryptionKey: KEY, restic, movers });
        expect(later.deleted.map((d) => d.id)).to.deep.equal([old]);
      } finally {
        await pending.abort();
      }
    });

    it('a fresh folder, an unsigned record or one moved from another backup holds nothing up, and is named', async () => {
      const old = await pinnedOldBackup();
      const fresh = idAt(new Date(now.getTime() - 60_000), '111111');
      await store.objects.put(`${backupKeys(fresh).folder}${fresh}.tar.gz`, 'partial');
      const unsigned = idAt(new Date(now.getTime() - 60_000), '222222');
      const bare = (await store.beginBackup(unsigned, { started: now })); // no key: the record carries no HMAC
      const moved = idAt(new Date(now.getTime() - 60_000), '333333');
      const genuine = await store.beginBackup(idAt(new Date(now.getTime() - 120_000), '444444'), { encryptionKey: KEY, started: now });
      await store.objects.put(`${backupKeys(moved).folder}kubeflow-upgrader-running.json`, store.objects.bytesOf(`${backupKeys(genuine.id).folder}kubeflow-upgrader-running.json`)!);
      await genuine.abort();
      try {
        const outcome = await pruneBackups(store, { retention: 4, dryRun: false, encryptionKey: KEY, restic, movers });
        expect(outcome.deleted.map((d) => d.id)).to.deep.equal([old]);
        const why = Object.fromEntries(outcome.ignored.map((i) => [i.what.replace(/^folder s3:\/\/memory\/backups\/(.*)\/$/, '$1'), i.why]));
        expect(why[fresh]).to.match(/^written to \d+ minute\(s\) ago without a marker, but it holds no run record, so it is not taken for a backup being written$/);
        expect(why[unsigned]).to.match(/but its run record carries no HMAC, so/);
        expect(why[moved]).to.match(new RegExp(`but its run record names backup ${genuine.id}, so`));
      } finally {
        await bare.abort();
      }
    });
  });

  describe('restic locks', () => {
    async function withPin(): Promise<string> {
      const at = new Date(now.getTime() - 10 * day);
      const writer = await startWriter(store, { toolVersion: 'test', started: at, now: () => at, encryptionKey: KEY, scope: { action: 'backup-state', namespaces: ['bob'] } });
      await writer.addItem(PROFILES as never, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'bob' }, spec: {} });
      writer.setVolumes([
        { namespace: 'bob', pvc: 'ws', key: 'restic/bob', files: 1, bytes: 1, restic: { repository: 'x/restic/bob', snapshot: 'b'.repeat(64) } },
        { namespace: 'carol', pvc: 'ws', key: 'restic/carol', files: 1, bytes: 1, restic: { repository: 'x/restic/carol', snapshot: 'c'.repeat(64) } },
      ] as never);
      return (await writer.commit()).id;
    }
    const garbage = 'd'.repeat(64);
    const ahead = 'e'.repeat(64);

    function repositories(locks: Record<string, unknown[]>) {
      const calls: string[] = [];
      return {
        calls,
        restic: {
          repositoryKey: (ns: string) => `x/restic/${ns}`, locationKey: (ns: string) => `restic/${ns}`, repositoriesFolder: 'restic/',
          run: async (namespace: string, mode: string) => {
            calls.push(`${mode} ${namespace}`);
            const held = (locks[namespace] ?? []).filter((l) => store.objects.bytesOf(`restic/${namespace}/locks/${(l as { id: string }).id}`) !== undefined);
            if (mode === 'check') return { state: 'locks', count: held.length, locks: held } as never;
            return { state: 'pruned', ignored: 0, totalPrune: '' } as never;
          },
        },
      };
    }

    it('a lock that does not decrypt is named and passed over; one dated ahead holds only its repository; both go when asked', async () => {
      const pinned = await withPin();
      await store.objects.put(`restic/bob/locks/${garbage}`, 'garbage');
      await store.objects.put(`restic/carol/locks/${ahead}`, 'sealed');
      const locks = { bob: [{ id: garbage, lock: null }], carol: [{ id: ahead, lock: { time: '2099-01-01T00:00:00Z', hostname: 'x', pid: 1 } }] };
      const first = repositories(locks);
      const outcome = await pruneBackups(store, { retention: 4, dryRun: false, now, encryptionKey: KEY, restic: first.restic, movers: { list: async () => [], delete: async () => undefined } });
      expect(first.calls).to.deep.equal(['check bob', 'prune bob', 'check carol']);
      expect(outcome.ignored.map((i) => i.what)).to.deep.equal([`restic lock ${garbage.slice(0, 12)} in s3://memory/restic/bob`, `restic lock ${ahead.slice(0, 12)} in s3://memory/restic/carol`]);
      expect(outcome.ignored[0]!.why).to.equal("it does not decrypt under the repository's key; restic itself passes over it, and so does prune (prune with foreign locks removed to remove it)");
      expect(outcome.notes.join(' ')).to.include("The restic repository s3://memory/restic/carol holds a lock restic obeys but no restic on this cluster's clock wrote");
      // the backup pinning into carol's repository stays for the next run; bob's repository was pruned all the same
      expect(outcome.deleted).to.deep.equal([]);
      expect(outcome.kept.find((k) => k.id === pinned)!.why).to.equal('its restic snapshots could not be forgotten yet');
      expect(outcome.restic.map((r) => r.namespace)).to.deep.equal(['bob']);

      const second = repositories(locks);
      const cleared = await pruneBackups(store, { retention: 4, dryRun: false, now, encryptionKey: KEY, restic: second.restic, movers: { list: async () => [], delete: async () => undefined }, removeForeignLocks: true });
      expect(cleared.removedLocks).to.deep.equal([`s3://memory/restic/bob/locks/${garbage}`, `s3://memory/restic/carol/locks/${ahead}`]);
      expect(store.objects.bytesOf(`restic/bob/locks/${garbage}`)).to.equal(undefined);
      expect(cleared.deleted.map((d) => d.id)).to.deep.equal([pinned]);
      expect(second.calls).to.deep.equal(['check bob', 'prune bob', 'check carol', 'prune carol']);
    });

    it('asked, removes the foreign locks of a repository this run prunes nothing in, and leaves a live one', async () => {
      await store.objects.put(`restic/dave/locks/${garbage}`, 'garbage');
      await store.objects.put(`restic/dave/locks/${'f'.repeat(64)}`, 'sealed');
      const live = { id: 'f'.repeat(64), lock: { time: new Date(now.getTime() - 60_000).toISOString(), hostname: 'kfu-restore-pod', pid: 9 } };
      const { calls, restic } = repositories({ dave: [{ id: garbage, lock: null }, live] });
      const outcome = await pruneBackups(store, { retention: 0, dryRun: false, now, encryptionKey: KEY, restic, movers: { list: async () => [], delete: async () => undefined }, removeForeignLocks: true });
      expect(calls).to.deep.equal(['check dave']);
      expect(outcome.removedLocks).to.deep.equal([`s3://memory/restic/dave/locks/${garbage}`]);
      expect(store.objects.bytesOf(`restic/dave/locks/${'f'.repeat(64)}`)).to.not.equal(undefined);
      expect(outcome.notes.join(' ')).to.include('The restic repository s3://memory/restic/dave is locked by a running restic (a lock held by kfu-restore-pod pid 9');
    });
  });
});
