// Our velero-backup.json read by Velero's rules (tests/support/velero/backup-decoder.ts names the Velero and
// apimachinery files they come from), and what Velero's garbage collection and sync would do with it.
import { expect } from 'chai';
import { judgePhase } from '../../src/archive/index.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { decodeVeleroBackup, garbageCollectionDeletes, parseGoDuration, parseGoTime, syncSkips, VeleroDecodeError } from '../support/velero/backup-decoder.ts';
import { veleroMarker } from '../support/velero/archive.ts';
import { NOTEBOOKS, PROFILES, notebook, profile, startStore } from './fixtures.ts';
import { backupStore, startWriter } from '../support/backup-store.ts';

const YEAR_MS = 365 * 24 * 3600_000;

describe('archive: velero-backup.json decoded by Velero rules', () => {
  let server: S3ServerHandle;
  let store: ObjectStore;
  before(async () => ({ server, store } = await startStore('velero-marker')));
  after(async () => server.stop());

  async function committed(errors = 0): Promise<{ id: string; text: string }> {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state', namespaces: ['alice'] } });
    await w.addItem(PROFILES, profile('alice'));
    await w.addItem(NOTEBOOKS, notebook('alice', 'nb'));
    for (let i = 0; i < errors; i++) w.error(`could not list kind ${i}`, 'alice');
    const { id } = await w.commit();
    return { id, text: (await store.getBytes(backupKeys(id).marker)).toString('utf8') };
  }

  it('decodes with every field one Velero knows, and no expiration for its garbage collection to act on', async () => {
    const { id, text } = await committed();
    const decoded = decodeVeleroBackup(text);
    expect(decoded).to.deep.include({ name: id, phase: 'Completed', formatVersion: '1.1.0', version: 1, ttlMs: 0, expiration: undefined });
    // our own annotations sit in metadata.annotations, which Velero keeps; nothing we write is dropped
    expect(decoded.dropped).to.deep.equal([]);
    const read = await backupStore(store).readManifest(id);
    if (read.state !== 'present') throw new Error('no manifest');
    // the marker's times are the manifest's, to the second (apimachinery writes whole seconds)
    expect(decoded.startTimestamp!.getTime()).to.equal(Math.floor(Date.parse(read.manifest.created) / 1000) * 1000);
    expect(decoded.completionTimestamp!.getTime()).to.equal(Math.floor(Date.parse(read.manifest.completed!) / 1000) * 1000);
    for (const years of [0, 1, 100]) expect(garbageCollectionDeletes(decoded, new Date(Date.now() + years * YEAR_MS))).to.equal(false);
    expect(syncSkips(decoded, new Date())).to.equal(false);
  });

  it('keeps the HMAC of an encrypted backup where Velero keeps it: an annotation, not a top-level field it would drop', async () => {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state', namespaces: ['alice'] }, encryptionKey: 'k3y' });
    await w.addItem(PROFILES, profile('alice'));
    const { id } = await w.commit();
    const text = (await store.getBytes(backupKeys(id).marker)).toString('utf8');
    const decoded = decodeVeleroBackup(text);
    expect(decoded.dropped).to.deep.equal([]);
    expect(decoded.annotations['kubeflow-upgrader.io/manifest-hmac']).to.match(/^hmac-sha256;salt=[A-Za-z0-9+/]{22}==;mac=[0-9a-f]{64}$/);
    // the same value as a field of its own would be lost on Velero's side (and on the Backup its sync creates)
    const asField = { ...JSON.parse(text), manifestHmac: decoded.annotations['kubeflow-upgrader.io/manifest-hmac'] };
    expect(decodeVeleroBackup(JSON.stringify(asField)).dropped).to.deep.equal(['.manifestHmac']);
  });

  it('says PartiallyFailed when errors were logged, as Velero does', async () => {
    const { text } = await committed(1);
    expect(decodeVeleroBackup(text).phase).to.equal('PartiallyFailed');
  });

  it('is an instrument that tells: a Velero marker expires and is collected, broken markers are refused', () => {
    const started = new Date('2026-01-01T00:00:00Z');
    const velero = decodeVeleroBackup(JSON.stringify(veleroMarker({ name: 'nightly', items: [], started })));
    expect(velero.ttlMs).to.equal(720 * 3600_000);
    expect(garbageCollectionDeletes(velero, new Date('2026-01-30T23:59:59Z'))).to.equal(false);
    expect(garbageCollectionDeletes(velero, new Date('2026-01-31T00:00:00Z'))).to.equal(true);
    const finalizing = decodeVeleroBackup(JSON.stringify(veleroMarker({ name: 'running', items: [], started, phase: 'Finalizing' })));
    expect(syncSkips(finalizing, new Date('2026-01-02T00:00:00Z'))).to.equal(true);

    const broken = (edit: (m: Record<string, any>) => void) => {
      const marker = veleroMarker({ name: 'b', items: [], started }) as Record<string, any>;
      edit(marker);
      return () => decodeVeleroBackup(JSON.stringify(marker));
    };
    expect(broken((m) => delete m.kind)).to.throw(VeleroDecodeError, "Object 'Kind' is missing");
    expect(broken((m) => { m.apiVersion = 'velero.io/v2'; })).to.throw(VeleroDecodeError, /no kind "Backup" is registered/);
    expect(broken((m) => delete m.metadata.name)).to.throw(VeleroDecodeError, /metadata.name: Required value/);
    expect(broken((m) => { m.status.startTimestamp = '2026-01-01 00:00:00'; })).to.throw(VeleroDecodeError, /RFC 3339/);
    expect(broken((m) => { m.spec.ttl = '30d'; })).to.throw(VeleroDecodeError, /unknown unit "d"/);
    expect(broken((m) => { m.spec.ttl = 720; })).to.throw(VeleroDecodeError, /metav1.Duration/);
    expect(broken((m) => { m.status.errors = '0'; })).to.throw(VeleroDecodeError, /type int/);
    expect(broken((m) => { m.status.progress.itemsBackedUp = 1.5; })).to.throw(VeleroDecodeError, /type int/);
    expect(broken((m) => { m.spec.snapshotVolumes = 'false'; })).to.throw(VeleroDecodeError, /type bool/);
    expect(broken((m) => { m.status.phase = 'Done'; })).to.throw(VeleroDecodeError, /status.phase: Unsupported value: "Done"/);
    // a misspelt field is not an error for Velero, only lost: the decoder reports it as dropped
    const misspelt = veleroMarker({ name: 'c', items: [], started }) as Record<string, any>;
    misspelt.status.Expiration = misspelt.status.expiration;
    delete misspelt.status.expiration;
    const lost = decodeVeleroBackup(JSON.stringify(misspelt));
    expect(lost.dropped).to.deep.equal(['.status.Expiration']);
    expect(lost.expiration).to.equal(undefined);
  });

  it('reads Go durations and RFC 3339 times as Go does', () => {
    expect(parseGoDuration('720h0m0s')).to.equal(720 * 3600_000);
    expect(parseGoDuration('1.5h')).to.equal(90 * 60_000);
    expect(parseGoDuration('-1m30s')).to.equal(-90_000);
    expect(parseGoDuration('0')).to.equal(0);
    expect(parseGoDuration('300ms')).to.equal(300);
    for (const bad of ['', '1', '.h', 'h', '1d', '1 h']) expect(() => parseGoDuration(bad), bad).to.throw(VeleroDecodeError);
    expect(parseGoTime('2026-12-01T11:18:39Z').toISOString()).to.equal('2026-12-01T11:18:39.000Z');
    expect(parseGoTime('2026-12-01T12:18:39.250+01:00').toISOString()).to.equal('2026-12-01T11:18:39.250Z');
    for (const bad of ['2026-12-01T11:18:39', '2026-13-01T11:18:39Z', '2026-02-30T00:00:00Z', '2026-12-01t11:18:39Z', '2026-12-01T24:00:00Z']) {
      expect(() => parseGoTime(bad), bad).to.throw(VeleroDecodeError);
    }
  });
});

describe('archive: judging a backup by the phase of its marker', () => {
  it('takes Completed, takes PartiallyFailed with a warning, and refuses every other phase naming it', () => {
    expect(judgePhase('b', 'Completed')).to.deep.equal({ whole: true, warning: undefined });
    const partial = judgePhase('b', 'PartiallyFailed');
    expect(partial.whole).to.equal(true);
    expect(partial.whole && partial.warning).to.match(/^Backup b is PartiallyFailed: .*b-results\.gz/);
    for (const phase of ['New', 'InProgress', 'WaitingForPluginOperations', 'WaitingForPluginOperationsPartiallyFailed', 'Finalizing', 'FinalizingPartiallyFailed', 'Failed', 'FailedValidation', 'Deleting']) {
      expect(judgePhase('b', phase)).to.deep.equal({ whole: false, reason: `its velero-backup.json says phase ${phase}, and only a Completed or PartiallyFailed backup is whole` });
    }
    expect(judgePhase('b', undefined)).to.deep.equal({ whole: false, reason: 'its velero-backup.json says no phase, and only a Completed or PartiallyFailed backup is whole' });
  });
});
