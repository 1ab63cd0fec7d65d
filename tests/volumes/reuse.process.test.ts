// Which earlier backup each PVC's mover copies unchanged files from, read from a real S3 server (s3rver): the newest
// complete backup whose manifest records data for that PVC, never an incomplete folder, an unbound claim or the backup
// being made; and how reused bytes are told from uploaded ones when rclone's stats do not say.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { CopyObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { BUCKET, startStore } from '../archive/fixtures.ts';
import { DATA_FILES_INDEX, indexDataFiles } from '../../src/catalog/data-files.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import { MAX_BACKUPS_READ, reusableBackups, reusableMinioCopies, reusedByListing } from '../../src/volumes/reuse.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { MemoryObjects } from '../../src/store/memory-objects.ts';
import { backupStore } from '../support/backup-store.ts';

type Volume = { namespace: string; pvc: string; files: number; unbound?: true };

function manifest(id: string, volumes: Volume[], completed = '2026-12-01T10:00:00.000Z', files: Record<string, string> = {}): string {
  return JSON.stringify({
    formatVersion: 1, veleroFormatVersion: '1.1.0', tool: { name: 'kubeflow-upgrader', version: 'test' }, backupId: id,
    created: completed, completed, scope: { action: 'backup-state' }, counts: {}, objects: 0, bytes: 0,
    checksums: { algorithm: 'sha256', tarball: '0'.repeat(64), entries: {}, files }, encryption: null,
    volumes: volumes.map((v) => ({ ...v, key: backupKeys(id).volume(v.namespace, v.pvc), bytes: v.files * 10 })),
  });
}

describe('volumes: reuse of an earlier backup', function () {
  let server: S3ServerHandle;
  let store: ObjectStore;
  let client: S3Client;
  const prefix = 'cluster-a/kubeflow';

  before(async function () {
    ({ server, store, client } = await startStore(prefix));
  });
  after(async function () {
    client?.destroy();
    await server?.stop();
  });

  async function backup(id: string, volumes: Volume[], complete = true, completed?: string): Promise<void> {
    const keys = backupKeys(id);
    // the index of what the volume folders hold, bound to the manifest by its sha256 (as src/backup/engine.ts does)
    const index = await indexDataFiles(backupStore(store), id);
    if (index) await store.put(keys.dataFilesIndex, index, 'application/gzip');
    const files: Record<string, string> = index ? { [DATA_FILES_INDEX]: createHash('sha256').update(index).digest('hex') } : {};
    await store.put(keys.manifest, manifest(id, volumes, completed, files), 'application/json');
    if (complete) await store.put(keys.marker, '{}', 'application/json');
  }

  it('picks, per PVC, the newest complete backup that holds data for it', async function () {
    await backup('kf-20261101-100000-aaaaaa', [{ namespace: 'alice', pvc: 'workspace', files: 3 }, { namespace: 'bob', pvc: 'data', files: 1 }]);
    await backup('kf-20261102-100000-bbbbbb', [{ namespace: 'alice', pvc: 'workspace', files: 4 }, { namespace: 'bob', pvc: 'data', unbound: true, files: 0 }]);
    // newer, but not complete: it may be a backup still running or one that crashed
    await backup('kf-20261103-100000-cccccc', [{ namespace: 'alice', pvc: 'workspace', files: 5 }], false);
    // newer and complete, without alice's workspace
    await backup('kf-20261104-100000-dddddd', [{ namespace: 'carol', pvc: 'notes', files: 2 }]);
    const current = 'kf-20261105-100000-eeeeee';
    await backup(current, [{ namespace: 'alice', pvc: 'workspace', files: 9 }]);

    const found = await reusableBackups(backupStore(store), current, [
      { namespace: 'alice', name: 'workspace' }, { namespace: 'bob', name: 'data' }, { namespace: 'carol', name: 'notes' }, { namespace: 'dave', name: 'new' },
    ]);
    expect(Object.fromEntries(found)).to.deep.equal({
      'alice/workspace': 'kf-20261102-100000-bbbbbb',
      'bob/data': 'kf-20261101-100000-aaaaaa',
      'carol/notes': 'kf-20261104-100000-dddddd',
    });
  });

  it('orders backups started in the same second by when they completed, not by the random part of their ids', async function () {
    await backup('kf-20261106-100000-ffffff', [{ namespace: 'erin', pvc: 'home', files: 1 }], true, '2026-11-06T10:00:00.400Z');
    await backup('kf-20261106-100000-000001', [{ namespace: 'erin', pvc: 'home', files: 1 }], true, '2026-11-06T10:00:00.900Z');
    const found = await reusableBackups(backupStore(store), 'kf-20261107-100000-000000', [{ namespace: 'erin', name: 'home' }]);
    expect(found.get('erin/home')).to.equal('kf-20261106-100000-000001');
  });

  it('passes over a backup whose volume files were rewritten in the bucket after it was made', async function () {
    const older = 'kf-20261108-100000-000000';
    const newer = 'kf-20261109-100000-000000';
    for (const id of [older, newer]) {
      await store.put(`${backupKeys(id).volume('frank', 'home')}model.bin`, Buffer.alloc(2000, 5));
      await backup(id, [{ namespace: 'frank', pvc: 'home', files: 1 }]);
    }
    const current = 'kf-20261110-100000-000000';
    expect((await reusableBackups(backupStore(store), current, [{ namespace: 'frank', name: 'home' }])).get('frank/home')).to.equal(newer);
    // a bucket writer plants other bytes under the newer backup: its index no longer matches, so it is not copied from
    await store.put(`${backupKeys(newer).volume('frank', 'home')}model.bin`, Buffer.alloc(2000, 6));
    expect((await reusableBackups(backupStore(store), current, [{ namespace: 'frank', name: 'home' }])).get('frank/home')).to.equal(older);
  });

  it('counts as reused only the files of the new folder equal in size and ETag to the old one', async function () {
    const oldFolder = backupKeys('kf-20261101-100000-aaaaaa').volume('alice', 'workspace');
    const newFolder = backupKeys('kf-20261105-100000-eeeeee').volume('alice', 'workspace');
    await store.put(`${oldFolder}same.bin`, Buffer.alloc(1000, 1));
    await store.put(`${oldFolder}changed.bin`, Buffer.alloc(1000, 2));
    await client.send(new CopyObjectCommand({ Bucket: BUCKET, CopySource: `${BUCKET}/${prefix}/${oldFolder}same.bin`, Key: `${prefix}/${newFolder}same.bin` }));
    await store.put(`${newFolder}changed.bin`, Buffer.alloc(1000, 3));
    await store.put(`${newFolder}new.bin`, Buffer.alloc(10, 4));
    expect(await reusedByListing(backupStore(store), newFolder, oldFolder)).to.deep.equal({ files: 1, bytes: 1000 });
  });

  it(`reads no further back than the ${MAX_BACKUPS_READ} newest complete backups`, async function () {
    await backup('kf-20261120-100000-000000', [{ namespace: 'gina', pvc: 'old', files: 1 }]);
    for (let i = 0; i < MAX_BACKUPS_READ; i++) await backup(`kf-20261121-1000${String(i).padStart(2, '0')}-000000`, [{ namespace: 'hank', pvc: 'home', files: 1 }]);
    const found = await reusableBackups(backupStore(store), 'kf-20261122-100000-000000', [{ namespace: 'gina', name: 'old' }, { namespace: 'hank', name: 'home' }]);
    expect(Object.fromEntries(found)).to.deep.equal({ 'hank/home': `kf-20261121-1000${String(MAX_BACKUPS_READ - 1).padStart(2, '0')}-000000` });
  });
});

describe('volumes: reuse of an earlier MinIO mirror (in-memory backup store)', () => {
  const minio = (bucket: string, keyPrefix: string) => ({ part: 'minio', bucket, keyPrefix, objects: 1, bytes: 1, listingSha256: '0'.repeat(64), tool: 'rclone' });
  const kfpDb = { part: 'kfp-db', database: 'mlpipeline', key: 'x', bytes: 1, sha256: '0'.repeat(64), tool: 'mysqldump', rclone: 'rclone' };

  async function committed(objects: MemoryObjects, id: string, controlPlane: unknown): Promise<void> {
    const keys = backupKeys(id);
    const document = JSON.parse(manifest(id, [])) as Record<string, unknown>;
    await objects.put(keys.manifest, JSON.stringify({ ...document, extras: { controlPlane } }));
    await objects.put(keys.marker, '{}');
  }

  it('offers each bucket the key prefix of its copy in the newest complete backup that mirrored it, from the typed control-plane section', async () => {
    const objects = new MemoryObjects();
    await committed(objects, 'kf-20261101-100000-aaaaaa', { entries: [minio('mlpipeline', 'p/old/mlpipeline/'), minio('katib', 'p/old/katib/'), kfpDb] });
    await committed(objects, 'kf-20261102-100000-bbbbbb', { entries: [minio('mlpipeline', 'p/new/mlpipeline/'), kfpDb] });
    // a section another writer got wrong reads as absent: that backup offers nothing, the older one still does
    await committed(objects, 'kf-20261103-100000-cccccc', { entries: [{ part: 'minio', bucket: 'katib' }] });
    const found = await reusableMinioCopies(new MemoryBackupStore(objects), 'kf-20261104-100000-dddddd', ['mlpipeline', 'katib', 'absent']);
    expect(Object.fromEntries(found)).to.deep.equal({ mlpipeline: 'p/new/mlpipeline/', katib: 'p/old/katib/' });
  });
});
