// The BackupStore contract: what every backend (S3 on s3rver, S3 on a real radosgw, the in-memory store) must do the same,
// so engine tests that use the memory store rely on nothing S3 would not do. Run by backup-store.process.test.ts (s3rver
// and memory) and backup-store.rgw.ts (radosgw, `npm run test:rgw`). Simulates nothing: the product's own stores.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { startWriter } from '../support/backup-store.ts';
import type { BackupObjects, BackupStore } from '../../src/store/backup-store.ts';
import { StoreError } from '../../src/store/objects.ts';
import { NOTEBOOKS, PROFILES, notebook, profile } from '../archive/sample-objects.ts';

const scope = { action: 'backup-state', namespaces: ['alice'] };
const ID = 'kf-20250301-120000-abcdef';

export interface Backend {
  name: string;
  /** fresh objects for one case, under a location of their own */
  objects(location: string): BackupObjects;
  store(objects: BackupObjects): BackupStore;
  before?(): Promise<void>;
  after?(): Promise<void>;
}

/** Records the writes and deletes a store makes, and can fail one, to observe the order of a commit. */
function recording(objects: BackupObjects, failOn?: (call: string) => boolean): { objects: BackupObjects; calls: string[] } {
  const calls: string[] = [];
  const failing = (call: string) => {
    calls.push(call);
    if (failOn?.(call)) throw new StoreError('unreachable', `Could not reach ${call}.`);
  };
  const wrapped: BackupObjects = {
    url: (key) => objects.url(key),
    startUpload: (key, body, type) => {
      failing(`upload ${key}`);
      return objects.startUpload(key, body, type);
    },
    put: async (key, body, type) => {
      failing(`put ${key}`);
      await objects.put(key, body, type);
      calls.push(`stored ${key}`);
    },
    getStream: (key) => objects.getStream(key),
    getSized: (key) => objects.getSized(key),
    getBytes: (key) => objects.getBytes(key),
    head: (key) => objects.head(key),
    exists: (key) => objects.exists(key),
    list: (prefix, options) => objects.list(prefix, options),
    listFolders: (folder) => objects.listFolders(folder),
    delete: async (key) => {
      failing(`delete ${key}`);
      await objects.delete(key);
    },
    deleteFolder: async (folder) => {
      failing(`delete-folder ${folder}`);
      return objects.deleteFolder(folder);
    },
    abortUploadsUnder: (folder, before, dryRun) => objects.abortUploadsUnder(folder, before, dryRun),
  };
  return { objects: wrapped, calls };
}

async function keysUnder(objects: BackupObjects, folder: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of objects.list(folder)) keys.push(o.key);
  return keys;
}

async function writeBackup(store: BackupStore, id = ID, now = '2025-03-01T12:00:00Z'): Promise<void> {
  const writer = await startWriter(store, { id, toolVersion: '0.1.0', scope, now: () => new Date(now) });
  await writer.addItem(PROFILES, profile('alice'));
  await writer.addItem(NOTEBOOKS, notebook('alice', 'nb'));
  writer.addFile('kubeflow-upgrader-data-files.json.gz', Buffer.from('index'), 'application/gzip');
  await writer.commit();
}

export function describeBackupStoreContract(backend: Backend): void {
  describe(`store/backup-store: the BackupStore contract (${backend.name})`, () => {
    let location: string;
    before(async () => backend.before?.());
    after(async () => backend.after?.());
    beforeEach(function () {
      location = `contract/${this.currentTest!.title.slice(0, 24).replace(/[^a-z]/gi, '-')}`;
    });

    it('commits the side files, our files and the manifest side by side, and the marker only after all of them are stored', async () => {
      const { objects, calls } = recording(backend.objects(location));
      const store = backend.store(objects);
      await writeBackup(store);
      const keys = store.keys(ID);
      // the run record goes first (prune can then tell the backup runs) and is removed once the marker is stored
      const record = `${keys.folder}kubeflow-upgrader-running.json`;
      const markerPut = calls.indexOf(`put ${keys.marker}`);
      expect(calls.slice(markerPut)).to.deep.equal([`put ${keys.marker}`, `stored ${keys.marker}`, `delete ${record}`]);
      for (const key of [keys.resourceList, keys.logs, keys.results, keys.manifest, keys.dataFilesIndex]) {
        expect(calls.indexOf(`stored ${key}`), key).to.be.within(0, markerPut - 1);
      }
      expect(calls.slice(0, 3)).to.deep.equal([`put ${record}`, `stored ${record}`, `upload ${keys.tarball}`]);
      expect((await keysUnder(objects, keys.folder)).sort()).to.deep.equal(
        [keys.tarball, keys.resourceList, keys.logs, keys.results, keys.manifest, keys.dataFilesIndex, keys.marker].sort(),
      );
    });

    it('leaves nothing of a backup whose commit failed, and never its marker', async () => {
      const base = backend.objects(location);
      const { objects, calls } = recording(base, (call) => call.endsWith('kubeflow-upgrader.json'));
      const store = backend.store(objects);
      let failure: unknown;
      await writeBackup(store).catch((error: unknown) => { failure = error; });
      expect(failure).to.be.instanceOf(StoreError);
      expect(calls.some((c) => c.startsWith(`put ${store.keys(ID).marker}`))).to.equal(false);
      expect(await keysUnder(base, 'backups/')).to.deep.equal([]);
      expect(await store.listBackupFolders()).to.deep.equal([]);
    });

    it('deletes the folder on abort, tarball upload included', async () => {
      const objects = backend.objects(location);
      const store = backend.store(objects);
      const pending = await store.beginBackup(ID);
      const upload = pending.uploadTarball(Readable.from([Buffer.from('partial')]));
      await upload.done().catch(() => undefined);
      await objects.put(`${store.keys(ID).folder}early-file`, 'x');
      await pending.abort();
      expect(await keysUnder(objects, 'backups/')).to.deep.equal([]);
      await pending.abort();
    });

    it('refuses to open a backup whose folder holds anything, naming where', async () => {
      const objects = backend.objects(location);
      const store = backend.store(objects);
      await objects.put(`${store.keys(ID).folder}volumes/alice/data/file`, 'x');
      let message = '';
      await store.beginBackup(ID).catch((error: Error) => { message = error.message; });
      expect(message).to.equal(`Backup ${ID} already exists at ${objects.url(`backups/${ID}/volumes/alice/data/file`)}; choose another id.`);
    });

    it('lists every folder, committed or not, ours or foreign, with its marker and last write', async () => {
      const objects = backend.objects(location);
      const store = backend.store(objects);
      await writeBackup(store);
      const unfinished = 'kf-20250302-080000-000001';
      await objects.put(`backups/${unfinished}/${unfinished}.tar.gz`, 'half');
      await objects.put('backups/velero-nightly/velero-backup.json', '{}');
      await objects.put('backups/Not..Safe/file', 'x');
      await objects.put('restores/r1/file', 'x');
      expect((await store.listBackupIds()).sort()).to.deep.equal([ID, unfinished, 'velero-nightly'].sort());
      const folders = new Map((await store.listBackupFolders()).map((f) => [f.id, f]));
      expect(folders.get(ID)).to.include({ complete: true, ours: true });
      expect(folders.get(ID)!.created!.toISOString()).to.equal('2025-03-01T12:00:00.000Z');
      expect(folders.get(unfinished)).to.include({ complete: false, ours: true });
      expect(folders.get('velero-nightly')).to.include({ complete: true, ours: false });
      expect(folders.get('velero-nightly')!.created).to.be.instanceOf(Date);
      expect(folders.get('velero-nightly')!.created!.getTime()).to.equal(folders.get('velero-nightly')!.lastWrite!.getTime());
    });

    it('reads the marker and the typed manifest, and tells absent, invalid and changed apart', async () => {
      const objects = backend.objects(location);
      const store = backend.store(objects);
      expect(await store.readMarker(ID)).to.deep.equal({ state: 'absent' });
      expect(await store.readManifest(ID)).to.deep.equal({ state: 'absent' });
      await writeBackup(store);
      const marker = await store.readMarker(ID);
      expect(marker.state).to.equal('present');
      const read = await store.readManifest(ID, { marker });
      expect(read.state === 'present' && read.manifest.backupId).to.equal(ID);
      expect(read.state === 'present' && read.changed).to.equal(undefined);
      const keys = store.keys(ID);
      const text = (await objects.getBytes(keys.manifest)).toString('utf8');
      await objects.put(keys.manifest, `${text}\n`);
      const changed = await store.readManifest(ID);
      expect(changed.state === 'present' && changed.changed).to.equal('its sha256 differs from the one velero-backup.json recorded when the backup was committed');
      await objects.put(keys.manifest, '{ not json');
      expect(await store.readManifest(ID)).to.deep.equal({ state: 'invalid', reason: 'it is not valid JSON' });
      await objects.put(keys.marker, '[]');
      expect(await store.readMarker(ID)).to.deep.equal({ state: 'invalid', reason: 'it is not a Velero Backup object' });
    });

    it('opens the tarball and files by name, and answers undefined for what is not there', async () => {
      const objects = backend.objects(location);
      const store = backend.store(objects);
      expect(await store.openTarball(ID)).to.equal(undefined);
      expect(await store.tarballSize(ID)).to.equal(undefined);
      expect(await store.readFile(ID, 'kubeflow-upgrader-data-files.json.gz')).to.equal(undefined);
      expect(await store.holdsBackup(ID)).to.equal(false);
      await writeBackup(store);
      const chunks: Buffer[] = [];
      for await (const chunk of (await store.openTarball(ID))!) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).length).to.equal(await store.tarballSize(ID));
      expect((await store.readFile(ID, 'kubeflow-upgrader-data-files.json.gz'))!.toString()).to.equal('index');
      expect(await store.openFile(ID, 'no-such-file')).to.equal(undefined);
      expect(await store.holdsBackup(ID)).to.equal(true);
    });

    it('lists the data folders of a backup with size and the server ETag', async () => {
      const objects = backend.objects(location);
      const store = backend.store(objects);
      const folder = store.keys(ID).volume('alice', 'data');
      await objects.put(`${folder}a.txt`, 'hello');
      await objects.put(`${folder}b/c.txt`, 'world!');
      const listed = [];
      for await (const o of store.listObjects(store.keys(ID).volumesFolder)) listed.push(o);
      expect(listed.map((o) => [o.key, o.size])).to.deep.equal([[`${folder}a.txt`, 5], [`${folder}b/c.txt`, 6]]);
      // a single-part upload's ETag is the quoted MD5 of its bytes
      expect(listed[0]!.etag).to.equal('"5d41402abc4b2a76b9719d911017c592"');
    });

    it('deletes a backup marker first, then the rest of its folder', async () => {
      const base = backend.objects(location);
      await writeBackup(backend.store(base));
      const { objects, calls } = recording(base);
      const store = backend.store(objects);
      const keys = store.keys(ID);
      await store.deleteBackup(ID);
      expect(calls).to.deep.equal([`delete ${keys.marker}`, `delete-folder ${keys.folder}`]);
      expect(await keysUnder(base, 'backups/')).to.deep.equal([]);
    });

    it('leaves an incomplete folder, never a backup missing files, when a delete is cut off after the marker', async () => {
      const base = backend.objects(location);
      await writeBackup(backend.store(base));
      const { objects } = recording(base, (call) => call.startsWith('delete-folder'));
      const store = backend.store(objects);
      await store.deleteBackup(ID).catch(() => undefined);
      const left = (await store.listBackupFolders()).find((f) => f.id === ID);
      expect(left).to.include({ complete: false, ours: true });
      expect((await store.readMarker(ID)).state).to.equal('absent');
    });
  });
}
