// Tests hold an ObjectStore (or the fuzzers' map) to read and tamper with raw keys; the engines take a BackupStore.
// One wrapper for both, so a test names the bytes it changes and the product reads them through the real seam.
// Nothing is simulated: the wrapper is the product's own ObjectBackupStore, a seam shaped after Velero's BackupStore over
// an ObjectStore (vmware-tanzu/velero pkg/persistence/object_store.go).
import { ObjectBackupStore, type BackupObjects, type BackupStore } from '../../src/store/backup-store.ts';
import { BackupWriter, type BackupWriterOptions } from '../../src/archive/writer.ts';
import { newBackupId } from '../../src/store/layout.ts';

const wrapped = new WeakMap<BackupObjects, BackupStore>();

export function backupStore(objects: BackupObjects): BackupStore {
  let store = wrapped.get(objects);
  if (!store) wrapped.set(objects, (store = new ObjectBackupStore(objects)));
  return store;
}

/** Opens backup `id` (a fresh kf-… id by default) in the store, its run record signed with the writer's key, and starts the product's writer on it, as the backup engine does. */
export async function startWriter(store: BackupStore, options: Omit<BackupWriterOptions, 'pending'> & { id?: string }): Promise<BackupWriter> {
  const { id, ...rest } = options;
  const started = options.started ?? options.now?.() ?? new Date();
  return BackupWriter.start({ ...rest, started, pending: await store.beginBackup(id ?? newBackupId(started), { encryptionKey: rest.encryptionKey, started }) });
}
