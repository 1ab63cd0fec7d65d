// One trusted read for verify and for the restore: every damage to a backup's marker or manifest that verify calls a
// problem refuses the restore's preflight too, before it reads an item, and an untouched backup passes both.
import { expect } from 'chai';
import { startWriter } from '../support/backup-store.ts';
import { verifyBackup } from '../../src/catalog/index.ts';
import { readTrustedBackup } from '../../src/catalog/trusted-read.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { MemoryObjects } from '../../src/store/memory-objects.ts';
import { runPreflight } from '../../src/restore/preflight.ts';
import type { RestoreKube } from '../../src/restore/kube-port.ts';
import { RestoreInputError, RestoreRefusedError } from '../../src/restore/errors.ts';
import { NOTEBOOKS, PROFILES, notebook, profile } from '../archive/sample-objects.ts';

const ID = 'kf-20250601-120000-abcdef';
const keys = backupKeys(ID);

async function writeBackup(): Promise<MemoryObjects> {
  const objects = new MemoryObjects({ prefix: 'trusted' });
  const writer = await startWriter(new MemoryBackupStore(objects), { id: ID, toolVersion: 'test', scope: { action: 'backup-state', namespaces: ['alice'], profiles: ['alice'], includeVolumes: false, includeControlPlane: false } });
  await writer.addItem(PROFILES, profile('alice'));
  await writer.addItem(NOTEBOOKS, notebook('alice', 'nb', 0));
  await writer.commit();
  return objects;
}

/** a target the preflight never reaches in these cases: the backup is refused first */
const unreachable = {
  concurrency: 1,
  discover: async () => { throw new Error('not asked'); },
  findByResource: async () => undefined,
  listAll: async () => { throw new Error('not asked'); },
} as unknown as RestoreKube;

function json(objects: MemoryObjects, key: string): Record<string, any> {
  return JSON.parse(objects.bytesOf(key)!.toString()) as Record<string, any>;
}

const damages: Array<{ what: string; damage: (objects: MemoryObjects) => Promise<void> }> = [
  { what: 'a marker whose start was moved (it disagrees with the manifest)', damage: async (o) => {
    const marker = json(o, keys.marker);
    marker.status.startTimestamp = '2030-01-01T00:00:00Z';
    await o.put(keys.marker, Buffer.from(JSON.stringify(marker)));
  } },
  { what: 'a marker that names another backup', damage: async (o) => {
    const marker = json(o, keys.marker);
    marker.metadata.name = 'kf-20250601-120000-fedcba';
    await o.put(keys.marker, Buffer.from(JSON.stringify(marker)));
  } },
  { what: 'a manifest changed after the commit', damage: async (o) => {
    const manifest = json(o, keys.manifest);
    manifest.description = 'rewritten';
    await o.put(keys.manifest, Buffer.from(JSON.stringify(manifest)));
  } },
  { what: 'a marker that is not JSON', damage: async (o) => { await o.put(keys.marker, Buffer.from('{')); } },
  { what: 'no marker', damage: async (o) => { await o.delete(keys.marker); } },
];

describe('catalog: one trusted read for verify and restore', () => {
  let pristine: MemoryObjects;
  before(async () => { pristine = await writeBackup(); });

  it('an untouched backup: no problem for either', async () => {
    const store = new MemoryBackupStore(pristine.clone());
    expect((await readTrustedBackup(store, ID, {}, 'verified')).problems).to.deep.equal([]);
    expect((await verifyBackup(store, ID)).status).to.equal('ok');
  });

  for (const { what, damage } of damages) {
    it(`${what}: verify calls it corrupt and the restore refuses it, nothing read past the manifest`, async () => {
      const objects = pristine.clone();
      await damage(objects);
      const store = new MemoryBackupStore(objects);
      const read = await readTrustedBackup(store, ID, {}, 'verified');
      expect(read.problems, 'the trusted read').to.have.length.greaterThan(0);
      expect((await verifyBackup(store, ID)).status).to.equal('corrupt');
      const opened: string[] = [];
      const openTarball = store.openTarball.bind(store);
      store.openTarball = async (id) => { opened.push(id); return openTarball(id); };
      let refused: unknown;
      try {
        await runPreflight(unreachable, store, { backupId: ID });
      } catch (error) {
        refused = error;
      }
      expect(RestoreRefusedError.isInstance(refused) || RestoreInputError.isInstance(refused), String(refused)).to.equal(true);
      expect(opened, 'the tarball').to.deep.equal([]);
    });
  }
});
