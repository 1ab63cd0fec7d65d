// `latest`, the one answer every command, action and the service ask (catalog/latest.ts): the newest whole backup, an
// id passed through unread, and one sentence when there is none.
import { expect } from 'chai';
import { startWriter } from '../support/backup-store.ts';
import { latestWholeBackup, resolveBackupId } from '../../src/catalog/index.ts';
import { NoWholeBackupError } from '../../src/catalog/latest.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { MemoryObjects } from '../../src/store/memory-objects.ts';
import { PROFILES, profile } from '../archive/sample-objects.ts';

const OLDER = 'kf-20250601-120000-aaaaaa';
const NEWER = 'kf-20250601-130000-bbbbbb';

async function write(store: MemoryBackupStore, id: string, started: string): Promise<void> {
  const writer = await startWriter(store, { id, started: new Date(started), toolVersion: 'test', scope: { action: 'backup-state', namespaces: ['alice'], profiles: ['alice'], includeVolumes: false, includeControlPlane: false } });
  await writer.addItem(PROFILES, profile('alice'));
  await writer.commit();
}

describe('catalog: latest', () => {
  it('is the newest whole backup, from the markers alone when asked not to describe it', async () => {
    const store = new MemoryBackupStore(new MemoryObjects({ prefix: 'latest' }));
    await write(store, OLDER, '2025-06-01T12:00:00Z');
    await write(store, NEWER, '2025-06-01T13:00:00Z');
    expect((await resolveBackupId(store, 'latest', { doing: 'restore' })).id).to.equal(NEWER);
    expect((await latestWholeBackup(store))?.listing.id).to.equal(NEWER);
    expect((await latestWholeBackup(store, { describe: false }))?.listing).to.equal(undefined);
  });

  it('passes an id through as it is, for whoever reads it to judge', async () => {
    const store = new MemoryBackupStore(new MemoryObjects({ prefix: 'latest' }));
    expect(await resolveBackupId(store, OLDER, { doing: 'verify' })).to.deep.equal({ id: OLDER, notes: [] });
  });

  it('with no backup, says in one sentence what the command could not find', async () => {
    const store = new MemoryBackupStore(new MemoryObjects({ prefix: 'latest' }));
    let error: unknown;
    try {
      await resolveBackupId(store, 'latest', { doing: 'verify' });
    } catch (e) {
      error = e;
    }
    expect(NoWholeBackupError.isInstance(error)).to.equal(true);
    expect((error as Error).message).to.match(/^There is no complete backup in .* to verify; run backup-state first\.$/);
  });
});
