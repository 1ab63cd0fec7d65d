// The run record a backup keeps while it is written (src/archive/run-record.ts), and its keeping by the store
// (src/store/backup-store.ts beginBackup): with a key only a record signed under it, naming its own folder, is trusted;
// the store writes it before the first byte of the backup, renews it while the backup runs, and removes it at commit.
import { expect } from 'chai';
import { decodeRunRecord, encodeRunRecord, RUN_RECORD_FILE, type RunRecord } from '../../src/archive/run-record.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { startWriter } from '../support/backup-store.ts';

const KEY = 'a run record key';
const ID = 'kf-20261207-120000-abcdef';
const record: RunRecord = { id: ID, started: new Date('2026-12-07T12:00:00.000Z'), renewed: new Date('2026-12-07T12:05:00.000Z'), expires: new Date('2026-12-07T12:20:00.000Z') };

describe('archive: the run record of a backup being written', function () {
  this.timeout(30_000);

  it('round-trips signed under the key, and unsigned without one', () => {
    expect(decodeRunRecord(encodeRunRecord(record, KEY), ID, KEY)).to.deep.equal({ state: 'trusted', record, authenticated: true });
    expect(decodeRunRecord(encodeRunRecord(record, undefined), ID, undefined)).to.deep.equal({ state: 'trusted', record, authenticated: false });
  });

  it('with a key, refuses a record unsigned, signed under another key, changed, or moved to another folder', () => {
    expect(decodeRunRecord(encodeRunRecord(record, undefined), ID, KEY)).to.deep.equal({ state: 'untrusted', reason: 'its run record carries no HMAC' });
    expect(decodeRunRecord(encodeRunRecord(record, 'another key'), ID, KEY)).to.deep.equal({ state: 'untrusted', reason: "its run record's HMAC does not match under the encryption-key" });
    const extended = JSON.parse(encodeRunRecord(record, KEY).toString()) as Record<string, string>;
    extended.expires = '2099-01-01T00:00:00.000Z';
    expect(decodeRunRecord(Buffer.from(JSON.stringify(extended)), ID, KEY).state).to.equal('untrusted');
    expect(decodeRunRecord(encodeRunRecord(record, KEY), 'kf-20261207-130000-fedcba', KEY)).to.deep.equal({ state: 'untrusted', reason: `its run record names backup ${ID}` });
  });

  it('carries its holder under the HMAC: a holder changed or added by someone without the key is refused', () => {
    const held: RunRecord = { ...record, holder: 'kubeflow-upgrader/0 action' };
    expect(decodeRunRecord(encodeRunRecord(held, KEY), ID, KEY)).to.deep.equal({ state: 'trusted', record: held, authenticated: true });
    const changed = JSON.parse(encodeRunRecord(held, KEY).toString()) as Record<string, string>;
    changed.holder = 'kubeflow-upgrader/0 service';
    expect(decodeRunRecord(Buffer.from(JSON.stringify(changed)), ID, KEY)).to.deep.equal({ state: 'untrusted', reason: "its run record's HMAC does not match under the encryption-key" });
    const added = JSON.parse(encodeRunRecord(record, KEY).toString()) as Record<string, string>;
    added.holder = 'kubeflow-upgrader/0 action';
    expect(decodeRunRecord(Buffer.from(JSON.stringify(added)), ID, KEY).state).to.equal('untrusted');
    // a record from before holders still reads as it did
    expect(decodeRunRecord(encodeRunRecord(record, KEY), ID, KEY)).to.deep.equal({ state: 'trusted', record, authenticated: true });
  });

  it('says what is wrong with bytes that are not a record', () => {
    expect(decodeRunRecord(undefined, ID, KEY)).to.deep.equal({ state: 'absent' });
    expect(decodeRunRecord(Buffer.from('garbage'), ID, KEY)).to.deep.equal({ state: 'untrusted', reason: 'its run record is not JSON' });
    expect(decodeRunRecord(Buffer.from('[1]'), ID, KEY)).to.deep.equal({ state: 'untrusted', reason: 'its run record is not a JSON object' });
    expect(decodeRunRecord(Buffer.from('{"kind":"kubeflow-upgrader-run","id":"x","started":"yesterday"}'), ID, KEY)).to.deep.equal({ state: 'untrusted', reason: 'its run record is not one kubeflow-upgrader writes' });
  });

  it('the store writes it when the backup opens, renews it while it runs, and removes it at commit', async () => {
    const store = new MemoryBackupStore();
    const key = `${backupKeys(ID).folder}${RUN_RECORD_FILE}`;
    const writer = await startWriter(store, { id: ID, toolVersion: 'test', encryptionKey: KEY, scope: { action: 'backup-state', namespaces: [] } });
    const first = decodeRunRecord(store.objects.bytesOf(key), ID, KEY);
    if (first.state !== 'trusted') throw new Error(`no trusted record: ${JSON.stringify(first)}`);
    expect(first.record.expires.getTime() - first.record.renewed.getTime()).to.equal(15 * 60_000);
    await writer.commit();
    expect(store.objects.bytesOf(key)).to.equal(undefined);
    expect(store.objects.bytesOf(backupKeys(ID).marker)).to.not.equal(undefined);
  });

  it('renews on its lease\'s third, and an abort leaves no record behind', async () => {
    const store = new MemoryBackupStore();
    const key = `${backupKeys(ID).folder}${RUN_RECORD_FILE}`;
    const pending = await store.beginBackup(ID, { encryptionKey: KEY, leaseMs: 900 });
    const renewedAt = () => {
      const read = decodeRunRecord(store.objects.bytesOf(key), ID, KEY);
      return read.state === 'trusted' ? read.record.renewed.getTime() : undefined;
    };
    const first = renewedAt();
    // the sign: the record's own renewal time moves on
    for (const deadline = Date.now() + 20_000; renewedAt() === first && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 50));
    expect(renewedAt()).to.be.greaterThan(first!);
    await pending.abort();
    expect(store.objects.keys().filter((k) => k.startsWith(backupKeys(ID).folder))).to.deep.equal([]);
  });
});
