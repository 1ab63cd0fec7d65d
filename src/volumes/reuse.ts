// Incremental volume backups without chains: each PVC's mover is pointed at the same PVC's folder in the newest
// complete earlier backup of this location: that folder is copied inside the bucket and the volume synced onto it, so
// every file equal to the volume's (same size and same MD5, rclone/rclone fs/operations/operations.go equal) stays a
// server-side copy instead of being uploaded (src/volumes/job.ts). The copy is a whole object of the new backup, so deleting the older backup never touches
// the newer one: no backup depends on another.
import { checkDataFiles } from '../catalog/data-files.ts';
import type { Manifest } from '../archive/manifest.ts';
import type { BackupFolder, BackupStore } from '../store/backup-store.ts';

export interface PvcKey {
  namespace: string;
  name: string;
}

export const pvcKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * `namespace/pvc` → the id of the newest complete, intact backup (marker present) other than `currentId` whose
 * manifest records data for that PVC. PVCs found in no earlier backup are absent: their movers upload everything.
 */
export function reusableBackups(store: BackupStore, currentId: string, pvcs: readonly PvcKey[], trust: ReuseTrust = {}): Promise<Map<string, string>> {
  const wanted = new Set(pvcs.map((p) => pvcKey(p.namespace, p.name)));
  return pickSources(store, currentId, trust, wanted, (manifest) => manifest.volumes
    // a restic entry's data is a snapshot in its repository, not files an rclone copy could start from
    .filter((entry) => !entry.unbound && entry.files > 0 && !entry.restic)
    .map((entry) => [pvcKey(entry.namespace, entry.pvc), manifest.backupId]));
}

/**
 * `namespace/pvc` → the restic snapshot of that PVC in the newest complete, trusted earlier backup: the restic mover's
 * --parent, so restic reads only files whose size, mtime, ctime or inode changed since.
 */
export function resticParents(store: BackupStore, currentId: string, pvcs: readonly PvcKey[], trust: ReuseTrust = {}): Promise<Map<string, string>> {
  const wanted = new Set(pvcs.map((p) => pvcKey(p.namespace, p.name)));
  return pickSources(store, currentId, trust, wanted, (manifest) => manifest.volumes
    .flatMap((entry): Array<[string, string]> => (entry.restic ? [[pvcKey(entry.namespace, entry.pvc), entry.restic.snapshot]] : [])));
}

/**
 * MinIO bucket → the full key prefix of its copy in the newest complete, intact earlier backup that mirrored it (the
 * control-plane entries the manifest records in extras.controlPlane), for the control-plane mirror's reuse. A bucket
 * stored in the control-plane restic repository (a backup made with encryption-key) has no mirror to start from.
 */
export function reusableMinioCopies(store: BackupStore, currentId: string, buckets: readonly string[], trust: ReuseTrust = {}): Promise<Map<string, string>> {
  return pickSources(store, currentId, trust, new Set(buckets), (manifest) =>
    (manifest.extras.controlPlane?.entries ?? []).flatMap((entry): Array<[string, string]> => (entry.part === 'minio' && !entry.restic ? [[entry.bucket, entry.keyPrefix]] : [])));
}

/**
 * How many of the newest complete backups are read when looking for sources. A manifest holds a checksum per archived
 * item (megabytes at thousands of profiles), and a PVC new since the last backups would otherwise have every backup of
 * the location read for nothing; one absent from this many backups has little left to reuse.
 */
export const MAX_BACKUPS_READ = 8;

/** What an earlier backup must pass before its objects are copied into a new one. */
export interface ReuseTrust {
  /** the user's encryption key: with it, only backups whose manifest HMAC verifies under it are reused */
  encryptionKey?: string | Buffer | undefined;
}

/**
 * Walks the complete backups of this location other than `currentId`, newest first, and gives each wanted key the
 * value the first trusted backup that `offers` it gives. Ids name the second a backup started; backups of the same
 * second are ordered by when their manifests say they completed.
 *
 * Why a source is checked: rclone judges an object of a multipart upload equal by the MD5 in its user metadata
 * (X-Amz-Meta-Md5chksum, rclone/rclone backend/s3/s3.go), which whoever can write the bucket can set. An object
 * rewritten that way gets a new ETag, so a backup whose data files no longer match its index (src/catalog/data-files.ts)
 * is passed over, as is one whose manifest changed after it was committed or, with a key, whose HMAC does not verify.
 * The data files are listed only for a backup that offers something still wanted.
 */
async function pickSources(
  store: BackupStore,
  currentId: string,
  trust: ReuseTrust,
  wanted: ReadonlySet<string>,
  offers: (manifest: Manifest) => Array<[string, string]>,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (wanted.size === 0) return found;
  const second = (f: BackupFolder) => f.created?.getTime() ?? 0;
  const complete = (await store.listBackupFolders())
    .filter((f) => f.complete && f.ours && f.id !== currentId)
    .sort((a, b) => second(b) - second(a))
    .slice(0, MAX_BACKUPS_READ);
  for (let start = 0; start < complete.length && found.size < wanted.size;) {
    let end = start + 1;
    while (end < complete.length && second(complete[end]!) === second(complete[start]!)) end++;
    const group: Manifest[] = [];
    for (const folder of complete.slice(start, end)) {
      const read = await store.readManifest(folder.id, { encryptionKey: trust.encryptionKey });
      if (read.state !== 'present' || read.changed) continue;
      if (read.authentication !== undefined && read.authentication !== 'authenticated') continue;
      group.push(read.manifest);
    }
    for (const manifest of group.sort((a, b) => Date.parse(b.completed) - Date.parse(a.completed))) {
      const useful = offers(manifest).filter(([key]) => wanted.has(key) && !found.has(key));
      if (useful.length === 0) continue;
      if ((await checkDataFiles(store, manifest.backupId, manifest)).length > 0) continue;
      for (const [key, value] of useful) if (!found.has(key)) found.set(key, value);
    }
    start = end;
  }
  return found;
}

/**
 * Files of `newFolder` equal in size and ETag to the file of the same name in `oldFolder`: what a server-side copy
 * left. Used only when the mover's rclone is older than 1.64 and its stats do not count server-side copies apart
 * (serverSideCopyBytes, rclone/rclone fs/accounting/stats.go). An object rclone uploaded can only match when the old
 * one was a multipart upload of the same bytes, which rclone would itself have copied; so this never counts an upload
 * as reused.
 */
export async function reusedByListing(store: BackupStore, newFolder: string, oldFolder: string): Promise<{ files: number; bytes: number }> {
  const old = new Map<string, { size: number; etag: string | undefined }>();
  for await (const object of store.listObjects(oldFolder)) old.set(object.key.slice(oldFolder.length), { size: object.size, etag: object.etag });
  let files = 0;
  let bytes = 0;
  for await (const object of store.listObjects(newFolder)) {
    const before = old.get(object.key.slice(newFolder.length));
    if (before && before.size === object.size && before.etag !== undefined && before.etag === object.etag) {
      files++;
      bytes += object.size;
    }
  }
  return { files, bytes };
}
