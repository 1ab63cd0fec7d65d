import { expect } from 'chai';
import { backupStore, startWriter } from '../support/backup-store.ts';
import { gunzipSync, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  SecretOpener, SealError, type ExpectedArchive, type Manifest, type Problem,
} from '../../src/archive/index.ts';
import { listBackups, readItems, verifyBackup } from '../../src/catalog/index.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { ChecksumIndex } from '../../src/archive/checksum-index.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { CONFIGMAPS, NOTEBOOKS, PROFILES, SECRETS, noise, notebook, profile, secret, startStore } from './fixtures.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const scope = { action: 'backup-state', namespaces: ['alice', 'bob'] };

async function expectedOf(store: ObjectStore, id: string): Promise<ExpectedArchive> {
  const read = await backupStore(store).readManifest(id);
  if (read.state !== 'present') throw new Error(`no manifest: ${read.state}`);
  return read;
}

async function manifestOf(store: ObjectStore, id: string): Promise<Manifest> {
  return (await expectedOf(store, id)).manifest;
}

/** The expectation with one entry's digest replaced, as a manifest edited in memory would say. */
function withDigest(expected: ExpectedArchive, path: string, digest: string): ExpectedArchive {
  return { manifest: expected.manifest, checksums: ChecksumIndex.fromRecord({ ...expected.checksums.toRecord(), [path]: digest }) };
}

async function smallBackup(store: ObjectStore, count = 20): Promise<string> {
  const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope });
  await w.addItem(PROFILES, profile('alice'));
  for (let i = 0; i < count; i++) await w.addItem(NOTEBOOKS, notebook('alice', `nb-${i}`));
  return (await w.commit()).id;
}

/** Rewrites the tarball through `edit`, as an attacker or a bad disk would. */
async function rewriteTarball(store: ObjectStore, id: string, edit: (bytes: Buffer) => Buffer): Promise<void> {
  const key = backupKeys(id).tarball;
  await store.put(key, edit(await store.getBytes(key)));
}

async function tarEntries(gz: Buffer): Promise<Array<{ name: string; body: Buffer }>> {
  const out: Array<{ name: string; body: Buffer }> = [];
  const extract = tar.extract();
  Readable.from([gunzipSync(gz)]).pipe(extract as never);
  for await (const e of extract) {
    const chunks: Buffer[] = [];
    for await (const c of e) chunks.push(c as Buffer);
    out.push({ name: e.header.name, body: Buffer.concat(chunks) });
  }
  return out;
}

async function packTar(entries: Array<{ name: string; body: Buffer }>): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) pack.entry({ name: e.name }, e.body);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

describe('archive: writer, reader and verification against s3rver', () => {
  let server: S3ServerHandle;
  let store: ObjectStore;
  let base: ObjectStore;
  let client: ObjectStore['client'];
  before(async () => ({ server, store: base, client } = await startStore()));
  // Each test gets its own location prefix, so one test's leftovers never show up in another's listing.
  beforeEach(function () {
    store = new ObjectStore({ client, bucket: base.bucket, prefix: `t-${this.currentTest!.title.slice(0, 20).replace(/[^a-z]/gi, '-')}` });
  });
  after(async () => server.stop());

  it('round-trips thousands of items, ~900 KiB objects and unicode names, with every Velero file', async () => {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope, description: 'before 1.10' });
    const expected = new Map<string, string>();
    await w.addItem(PROFILES, profile('alice'));
    expected.set('profiles.kubeflow.org//alice', JSON.stringify(profile('alice')));
    for (let i = 0; i < 2500; i++) {
      const nb = notebook(i % 2 ? 'alice' : 'bob', `nb-${i}`);
      nb.metadata.annotations = { 'note': `データ ${i} — ünïcödé 🚀` };
      await w.addItem(NOTEBOOKS, nb);
      expected.set(`notebooks.kubeflow.org/${nb.metadata.namespace}/nb-${i}`, JSON.stringify(nb));
    }
    for (let i = 0; i < 3; i++) {
      const big = {
        apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}`, namespace: 'alice' }, data: { blob: noise(900 * 1024, i + 1) },
      };
      await w.addItem(CONFIGMAPS, big);
      expected.set(`configmaps/alice/big-${i}`, JSON.stringify(big));
    }
    const uni = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ノート-café', namespace: 'bob' }, data: { k: 'ß' } };
    await w.addItem(CONFIGMAPS, uni);
    expected.set('configmaps/bob/ノート-café', JSON.stringify(uni));
    w.warn('skipped 1 generated object', 'alice');
    const summary = await w.commit();
    expect(summary.objects).to.equal(expected.size);

    const keys = backupKeys(summary.id);
    const listed: string[] = [];
    for await (const o of store.list('')) listed.push(o.key);
    expect(listed.sort()).to.deep.equal([keys.tarball, keys.logs, keys.resourceList, keys.results, keys.manifest, keys.marker].sort());

    const seen = new Map<string, string>();
    let preferred = 0;
    const stored = await expectedOf(store, summary.id);
    const manifest = stored.manifest;
    for await (const item of readItems(backupStore(store), summary.id, { expected: stored, copies: 'all' })) {
      expect(item.verified).to.equal(true);
      if (item.preferredVersion) {
        expect(item.preferredVersion).to.equal('v1');
        preferred++;
        continue;
      }
      seen.set(`${item.resource}${item.group ? `.${item.group}` : ''}/${item.namespace ?? ''}/${item.name}`, JSON.stringify(item.object));
    }
    expect(preferred).to.equal(expected.size);
    expect(seen).to.deep.equal(expected);
    expect(manifest.counts).to.deep.equal({ 'profiles.kubeflow.org': 1, 'notebooks.kubeflow.org': 2500, configmaps: 4 });

    const resourceList = JSON.parse(gunzipSync(await store.getBytes(keys.resourceList)).toString());
    expect(Object.keys(resourceList)).to.deep.equal(['kubeflow.org/v1/Notebook', 'kubeflow.org/v1/Profile', 'v1/ConfigMap']);
    expect(resourceList['kubeflow.org/v1/Profile']).to.deep.equal(['alice']);
    expect(resourceList['v1/ConfigMap']).to.include('bob/ノート-café');
    const results = JSON.parse(gunzipSync(await store.getBytes(keys.results)).toString());
    expect(results.warnings.namespaces.alice).to.deep.equal(['skipped 1 generated object']);
    const marker = JSON.parse((await store.getBytes(keys.marker)).toString());
    expect(marker.status).to.include({ phase: 'Completed', formatVersion: '1.1.0', version: 1 });
    // no expiration: Velero's garbage collection passes over a backup without one (velero pkg/controller/gc_controller.go)
    expect(marker.status).to.not.have.property('expiration');
    expect(marker.spec).to.not.have.property('ttl');
    expect(await verifyBackup(backupStore(store), summary.id)).to.deep.include({ status: 'ok', objectsChecked: expected.size, problems: [] });
    await store.deleteFolder(keys.folder);
  });

  it('keeps memory bounded while streaming a large archive', async () => {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope });
    const filler = noise(64 * 1024, 7);
    // Retained memory is what must stay flat; collect first so garbage awaiting GC does not count as growth.
    const used = () => { gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
    const before = used();
    let peak = before;
    const items = 800; // ~100 MiB of JSON through the pipeline (each item is written twice)
    for (let i = 0; i < items; i++) {
      const nb = notebook('alice', `mem-${i}`);
      nb.metadata.annotations = { note: filler.slice(i % 100) + i };
      await w.addItem(NOTEBOOKS, nb);
      if (i % 100 === 99) peak = Math.max(peak, used());
    }
    const summary = await w.commit();
    const dataBytes = items * 2 * 64 * 1024;
    const growth = peak - before;
    // Parts in flight (and their retry copies) plus stream buffers: well below the data that went through. The bound
    // is loose because a loaded machine lets the upload fall behind the writer up to the backpressure limit.
    const said = `retained ${Math.round(growth / 2 ** 20)} MiB for ${Math.round(dataBytes / 2 ** 20)} MiB`;
    expect(growth, said).to.be.below(dataBytes / 2);
    expect(growth, said).to.be.below(64 * 2 ** 20);
    await store.deleteFolder(backupKeys(summary.id).folder);
  });

  it('reports a flipped byte, a truncation, a dropped item, a tampered manifest and a missing tarball', async () => {
    const flipped = await smallBackup(store);
    await rewriteTarball(store, flipped, (b) => { const c = Buffer.from(b); c[Math.floor(c.length / 2)]! ^= 0x10; return c; });
    const r1 = await verifyBackup(backupStore(store), flipped);
    expect(r1.status).to.equal('corrupt');
    expect(r1.problems.map((p) => p.kind)).to.include('tarball-checksum');

    const truncated = await smallBackup(store);
    await rewriteTarball(store, truncated, (b) => b.subarray(0, Math.floor(b.length * 0.6)));
    const r2 = await verifyBackup(backupStore(store), truncated);
    expect(r2.problems.map((p) => p.kind)).to.include.members(['corrupt-tarball', 'tarball-checksum', 'missing-item']);

    const dropped = await smallBackup(store);
    const entries = await tarEntries(await store.getBytes(backupKeys(dropped).tarball));
    const gone = 'resources/notebooks.kubeflow.org/namespaces/alice/nb-3.json';
    await store.put(backupKeys(dropped).tarball, await packTar(entries.filter((e) => e.name !== gone)));
    const r3 = await verifyBackup(backupStore(store), dropped);
    expect(r3.problems).to.deep.include({ kind: 'missing-item', path: gone, message: `Entry ${gone} is in the manifest but missing from the tarball.` });

    const extra = await smallBackup(store);
    const withExtra = await tarEntries(await store.getBytes(backupKeys(extra).tarball));
    withExtra.push({ name: '../../etc/passwd', body: Buffer.from('x') }, { name: 'resources/secrets/namespaces/alice/planted.json', body: Buffer.from('{}') });
    await store.put(backupKeys(extra).tarball, await packTar(withExtra));
    const r4 = await verifyBackup(backupStore(store), extra);
    expect(r4.problems.map((p) => p.kind)).to.include.members(['unsafe-path', 'extra-item', 'tarball-checksum']);
    expect(r4.problems.find((p) => p.kind === 'unsafe-path')?.message).to.match(/escapes its folder/);

    // an entry of the manifest twice, and a name outside it twice: each second copy is a duplicate, nothing is missing
    const doubled = await smallBackup(store);
    const twice = await tarEntries(await store.getBytes(backupKeys(doubled).tarball));
    const again = twice.find((e) => e.name === 'resources/notebooks.kubeflow.org/namespaces/alice/nb-2.json')!;
    const stray = { name: 'resources/configmaps/namespaces/alice/stray.json', body: Buffer.from('{}') };
    twice.push(again, stray, stray);
    await store.put(backupKeys(doubled).tarball, await packTar(twice));
    const rDup = await verifyBackup(backupStore(store), doubled);
    expect(rDup.problems.filter((p) => p.kind === 'duplicate-item').map((p) => p.path)).to.deep.equal([again.name, stray.name]);
    expect(rDup.problems.filter((p) => p.kind === 'extra-item').map((p) => p.path)).to.deep.equal([stray.name]);
    expect(rDup.problems.map((p) => p.kind)).to.not.include('missing-item');
    await store.deleteFolder(backupKeys(doubled).folder);

    const tampered = await smallBackup(store);
    const m = JSON.parse((await store.getBytes(backupKeys(tampered).manifest)).toString());
    m.checksums.entries['resources/notebooks.kubeflow.org/namespaces/alice/nb-1.json'] = 'f'.repeat(64);
    await store.put(backupKeys(tampered).manifest, JSON.stringify(m));
    const r5 = await verifyBackup(backupStore(store), tampered);
    // The marker's record of the manifest's digest catches the edit itself, and the edited entry still points at the item.
    expect(r5.problems.map((p) => p.kind)).to.deep.equal(['bad-manifest', 'checksum-mismatch']);
    // A change to a free-text field, which no item checksum covers, is found too.
    const described = await smallBackup(store);
    const d = JSON.parse((await store.getBytes(backupKeys(described).manifest)).toString());
    d.description = 'changed afterwards';
    await store.put(backupKeys(described).manifest, JSON.stringify(d, null, 1));
    const rd = await verifyBackup(backupStore(store), described);
    expect(rd.status).to.equal('corrupt');
    expect(rd.problems.map((p) => p.kind)).to.deep.equal(['bad-manifest']);
    await store.deleteFolder(backupKeys(described).folder);
    await store.put(backupKeys(tampered).manifest, '{"formatVersion": 1');
    const r6 = await verifyBackup(backupStore(store), tampered);
    expect(r6.problems[0]).to.include({ kind: 'bad-manifest' });

    const noTarball = await smallBackup(store);
    await store.deleteFolder(`${backupKeys(noTarball).folder}`).then(() => store.put(backupKeys(noTarball).marker, '{"kind":"Backup","metadata":{"name":"x"},"status":{"phase":"Completed"}}'));
    const r7 = await verifyBackup(backupStore(store), noTarball);
    expect(r7.problems.map((p) => p.kind)).to.include('missing-tarball');
    for (const id of [flipped, truncated, dropped, extra, tampered, noTarball]) await store.deleteFolder(backupKeys(id).folder);
  });

  it('checks every entry through the read-only checksum index, which a read leaves as it was', async () => {
    const id = await smallBackup(store);
    const entries = await tarEntries(await store.getBytes(backupKeys(id).tarball));
    const gone = 'resources/notebooks.kubeflow.org/namespaces/alice/nb-3.json';
    const again = entries.find((e) => e.name === 'resources/notebooks.kubeflow.org/namespaces/alice/nb-2.json')!;
    const stray = { name: 'resources/configmaps/namespaces/alice/stray.json', body: Buffer.from('{}') };
    await store.put(backupKeys(id).tarball, await packTar([...entries.filter((e) => e.name !== gone), again, stray, stray]));
    const expected = withDigest(await expectedOf(store, id), 'resources/notebooks.kubeflow.org/namespaces/alice/nb-1.json', '0'.repeat(64));
    const before = expected.checksums.toRecord();
    const problemsOf = async () => {
      const problems: Problem[] = [];
      for await (const _ of readItems(backupStore(store), id, { expected, copies: 'all', onProblem: (p) => problems.push(p) })) void _;
      return problems;
    };
    const first = await problemsOf();
    expect(first.map((p) => p.kind).sort()).to.deep.equal(['checksum-mismatch', 'duplicate-item', 'duplicate-item', 'extra-item', 'missing-item', 'tarball-checksum']);
    expect(first.find((p) => p.kind === 'missing-item')?.path).to.equal(gone);
    // a second read of the same expectation finds the same: nothing of the index was used up or changed
    expect(await problemsOf()).to.deep.equal(first);
    expect(expected.checksums.toRecord()).to.deep.equal(before);
    expect(Object.values(before).every((digest) => /^[0-9a-f]{64}$/.test(digest))).to.equal(true);
    await store.deleteFolder(backupKeys(id).folder);
  });

  it('a restore-style read throws on the first mismatch instead of yielding it', async () => {
    const id = await smallBackup(store, 3);
    const expected = withDigest(await expectedOf(store, id), 'resources/notebooks.kubeflow.org/namespaces/alice/nb-0.json', '0'.repeat(64));
    const read = async () => { for await (const _ of readItems(backupStore(store), id, { expected })) void _; };
    let error: unknown;
    await read().catch((e) => (error = e));
    expect(String(error)).to.match(/nb-0\.json does not match its checksum/);
    await store.deleteFolder(backupKeys(id).folder);
  });

  it('abort leaves no marker and no files; listBackups shows complete backups only, newest first', async () => {
    const clock = (iso: string) => () => new Date(iso);
    const older = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope, now: clock('2025-01-01T00:00:00Z') });
    await older.addItem(PROFILES, profile('alice'));
    await older.commit();
    const newer = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope, now: clock('2025-02-01T00:00:00Z') });
    await newer.addItem(PROFILES, profile('bob'));
    await newer.commit();
    const aborted = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope });
    await aborted.addItem(PROFILES, profile('carol'));
    await aborted.abort();
    const left: string[] = [];
    for await (const o of store.list(backupStore(store).keys(aborted.id).folder)) left.push(o.key);
    expect(left).to.deep.equal([]);
    // a backup cut off before its marker: everything but velero-backup.json
    const cut = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope });
    await cut.addItem(PROFILES, profile('dave'));
    await cut.commit();
    await server_delete(store, backupStore(store).keys(cut.id).marker);
    // a foreign Velero backup: marker and tarball, no manifest
    await store.put('backups/velero-nightly/velero-backup.json', JSON.stringify({
      apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name: 'velero-nightly' },
      status: { phase: 'Completed', startTimestamp: '2024-12-01T00:00:00Z', progress: { itemsBackedUp: 1 } },
    }));
    await store.put('backups/velero-nightly/velero-nightly.tar.gz', await packTar([
      { name: 'metadata/version', body: Buffer.from('1.1.0\n') },
      { name: 'resources/profiles.kubeflow.org/cluster/erin.json', body: Buffer.from(JSON.stringify(profile('erin'))) },
    ]));
    const listing = await listBackups(backupStore(store));
    expect(listing.map((b) => [b.format, b.created])).to.deep.equal([
      ['kubeflow-upgrader', '2025-02-01T00:00:00.000Z'], ['kubeflow-upgrader', '2025-01-01T00:00:00.000Z'], ['velero', '2024-12-01T00:00:00.000Z'],
    ]);
    expect(listing[0]).to.include({ id: newer.id, objects: 1, encrypted: false });
    expect(await listBackups(backupStore(store), { limit: 1 })).to.have.length(1);
    const foreign = await verifyBackup(backupStore(store), 'velero-nightly');
    expect(foreign).to.deep.include({ status: 'not-verifiable', objectsChecked: 1 });
    const names: string[] = [];
    for await (const item of readItems(backupStore(store), 'velero-nightly', { expected: null })) names.push(item.name);
    expect(names).to.deep.equal(['erin']);
  });

  it('seals Secrets so no value is in clear anywhere in the bucket, and opens them only with the right key', async () => {
    const values = { password: 'hunter2-s3cr3t-value', token: 'tok-ABCDEF-123456' };
    const s = secret('alice', 'db', values, { apikey: 'plain-string-data-value' });
    s.metadata.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data: { password: 'hunter2-s3cr3t-value' } }) };
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope, encryptionKey: 'correct horse battery staple' });
    await w.addItem(SECRETS, s);
    await w.addItem(NOTEBOOKS, notebook('alice', 'nb'));
    const summary = await w.commit();
    expect(summary.sealedSecrets).to.equal(1);

    const clear = ['hunter2-s3cr3t-value', 'tok-ABCDEF-123456', 'plain-string-data-value'];
    const forms = clear.flatMap((v) => [v, Buffer.from(v).toString('base64')]);
    for await (const o of store.list('')) {
      let bytes = await store.getBytes(o.key);
      if (o.key.endsWith('gz')) bytes = gunzipSync(bytes);
      for (const f of forms) expect(bytes.includes(f), `${f} in ${o.key}`).to.equal(false);
    }
    const expected = await expectedOf(store, summary.id);
    const manifest = expected.manifest;
    expect(manifest.encryption).to.include({ algorithm: 'aes-256-gcm', kdf: 'scrypt', sealedSecrets: 1 });
    expect(manifest.encryption!.keyId).to.match(/^kfu-[0-9a-f]{16}$/);

    let sealed;
    for await (const item of readItems(backupStore(store), summary.id, { expected })) {
      if (item.object.kind !== 'Secret') continue;
      sealed = item.object;
      // out of Velero's resources/ folder, in one of our own that only our reader looks into
      expect(item.path).to.equal('kubeflow-upgrader-sealed/secrets/namespaces/alice/db.json');
    }
    expect([...expected.checksums.paths()].filter((p) => p.includes('/secrets/'))).to.deep.equal([
      'kubeflow-upgrader-sealed/secrets/namespaces/alice/db.json', 'kubeflow-upgrader-sealed/secrets/v1-preferredversion/namespaces/alice/db.json',
    ]);
    expect(sealed!.metadata.annotations).to.include({ 'kubeflow-upgrader.io/sealed': 'aes-256-gcm', 'kubeflow-upgrader.io/sealed-key-id': manifest.encryption!.keyId });
    const opened = SecretOpener.forBackup(summary.id, manifest.encryption!, 'correct horse battery staple').open(sealed!);
    expect(opened).to.deep.equal(s);
    expect(() => SecretOpener.forBackup(summary.id, manifest.encryption!, undefined))
      .to.throw(SealError, `Backup ${summary.id} holds Secrets sealed with key ${manifest.encryption!.keyId}; set encryption-key to that key to restore them.`);
    expect(() => SecretOpener.forBackup(summary.id, manifest.encryption!, 'wrong key'))
      .to.throw(SealError, /is not the key that sealed backup/);
    await store.deleteFolder(backupKeys(summary.id).folder);
  });
});

async function server_delete(store: ObjectStore, key: string): Promise<void> {
  const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
  await store.client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: store.fullKey(key) }));
}
