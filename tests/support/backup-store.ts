// Tests hold an ObjectStore (or the fuzzers' map) to read and tamper with raw keys; the engines take a BackupStore.
// One wrapper for both, so a test names the bytes it changes and the product reads them through the real seam.
// Nothing is simulated: the wrapper is the product's own ObjectBackupStore, a seam shaped after Velero's BackupStore over
// an ObjectStore (vmware-tanzu/velero pkg/persistence/object_store.go).
import { ObjectBackupStore, type BackupObjects, type BackupStore } from '../../src/store/backup-store.ts';

const wrapped = new WeakMap<BackupObjects, BackupStore>();

export function backupStore(objects: BackupObjects): BackupStore {
  let store = wrapped.get(objects);
  if (!store) wrapped.set(objects, (store = new ObjectBackupStore(objects)));
  return store;
}
