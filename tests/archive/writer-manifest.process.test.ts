import { expect } from 'chai';
import { backupStore, startWriter } from '../support/backup-store.ts';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { BackupWriter, ChecksumIndex } from '../../src/archive/index.ts';
import { verifyBackup } from '../../src/catalog/index.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { CONFIGMAPS, NOTEBOOKS, PROFILES, notebook, profile, startStore } from './fixtures.ts';

// The writer keeps one raw digest per item and writes the manifest's entries as text: what it stores must be what
// JSON.stringify(manifest, null, 1) of a full object would have been, so old and new readers see the same file.
describe('archive writer: compact bookkeeping, same manifest and resource list', () => {
  let server: S3ServerHandle;
  let store: ObjectStore;
  before(async () => ({ server, store } = await startStore('compact')));
  after(async () => server.stop());

  it('stores a manifest identical to JSON.stringify of the parsed manifest, with every tar entry and its sha256', async () => {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state', namespaces: ['alice', 'bob'] } });
    w.setExtra('note', { entries: 'an extras key named entries must not confuse the writer' });
    await w.addItems(PROFILES, [profile('alice'), profile('bob')]);
    await w.addItems(NOTEBOOKS, Array.from({ length: 300 }, (_, i) => notebook(i % 2 ? 'alice' : 'bob', `nb-${i}`)));
    const longName = `c-${'x'.repeat(200)}`; // a path too long for ustar: a pax header
    await w.addItem(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: longName, namespace: 'alice' }, data: { a: 'b' } });
    // The 2×N entries as an index are built only for a caller that asks for them, never for the upload itself.
    const prototype = BackupWriter.prototype as unknown as { checksumIndex(): ChecksumIndex };
    const checksumIndex = prototype.checksumIndex;
    let built = 0;
    prototype.checksumIndex = function (this: unknown) {
      built++;
      return checksumIndex.call(this);
    };
    let summary: Awaited<ReturnType<BackupWriter['commit']>>;
    let mine: ChecksumIndex;
    try {
      summary = await w.commit();
      expect(built, 'entries built while committing').to.equal(0);
      expect(summary.manifest.checksums).to.not.have.property('entries');
      mine = summary.checksums();
      expect(mine.size).to.equal(1 + 2 * 303);
      expect(built).to.equal(1);
    } finally {
      prototype.checksumIndex = checksumIndex;
    }

    const stored = await store.getBytes(backupKeys(summary.id).manifest);
    const read = await backupStore(store).readManifest(summary.id);
    if (read.state !== 'present') throw new Error(read.state);
    const { algorithm, tarball: tarballSha, files } = read.manifest.checksums;
    const document = { ...read.manifest, checksums: { algorithm, tarball: tarballSha, entries: read.checksums.toRecord(), files } };
    expect(stored.toString('utf8')).to.equal(JSON.stringify(document, null, 1));
    // the caller's index has the same entries, in the same order
    expect([...mine.entries()]).to.deep.equal([...read.checksums.entries()]);

    // every tar entry is in the manifest with the sha256 of its bytes, in tar order
    const tarball = gunzipSync(await store.getBytes(backupKeys(summary.id).tarball));
    const seen: Array<[string, string]> = [];
    const extract = tar.extract();
    extract.on('entry', (header, stream, next) => {
      const hash = createHash('sha256');
      stream.on('data', (c) => hash.update(c as Buffer));
      stream.on('end', () => {
        seen.push([header.name, hash.digest('hex')]);
        next();
      });
    });
    await new Promise<void>((resolve, reject) => {
      extract.on('finish', () => resolve());
      extract.on('error', reject);
      extract.end(tarball);
    });
    expect([...read.checksums.entries()]).to.deep.equal(seen);
    expect(seen.length).to.equal(1 + 2 * 303);
    expect(seen.some(([name]) => name.endsWith(`${longName}.json`))).to.equal(true);

    const resourceList = JSON.parse(gunzipSync(await store.getBytes(backupKeys(summary.id).resourceList)).toString()) as Record<string, string[]>;
    expect(Object.keys(resourceList)).to.deep.equal(['kubeflow.org/v1/Notebook', 'kubeflow.org/v1/Profile', 'v1/ConfigMap']);
    expect(resourceList['kubeflow.org/v1/Profile']).to.deep.equal(['alice', 'bob']);
    expect(resourceList['v1/ConfigMap']).to.deep.equal([`alice/${longName}`]);
    expect(resourceList['kubeflow.org/v1/Notebook']).to.have.length(300);
    expect(resourceList['kubeflow.org/v1/Notebook']).to.include('alice/nb-1').and.include('bob/nb-0');
    expect((await verifyBackup(backupStore(store), summary.id)).status).to.equal('ok');
  });

  it('refuses an object added twice, also within one batch', async () => {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state' } });
    await w.addItems(NOTEBOOKS, [notebook('alice', 'a')]);
    let error: unknown;
    try {
      await w.addItems(NOTEBOOKS, [notebook('alice', 'b'), notebook('alice', 'a')]);
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/added twice/);
    await w.abort();
  });
});
