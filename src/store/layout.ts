// Key names only, like Velero's object_store_layout.go: the BackupStore (backup-store.ts) reaches objects by these,
// and hands them to the rest of the code through keys(id); the movers name their folders by them too. Keys are
// relative to the configured path prefix; ObjectStore adds the prefix.
import { randomBytes } from 'node:crypto';

/** The only top-level folders Velero accepts under a backup location's prefix; anything else invalidates it. */
export const VELERO_TOP_LEVEL_FOLDERS = ['backups', 'restores', 'restic', 'metadata', 'plugins', 'kopia'] as const;

const BACKUP_ID = /^kf-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-([0-9a-f]{6})$/;

/** A fresh backup id `kf-YYYYMMDD-HHMMSS-<6 hex>` (UTC): sortable by time and a valid Kubernetes name. */
export function newBackupId(now: Date = new Date(), random: () => Buffer = () => randomBytes(3)): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const date = `${pad(now.getUTCFullYear(), 4)}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `kf-${date}-${time}-${random().subarray(0, 3).toString('hex')}`;
}

/** True when `id` is one of our backup ids and names a real calendar time. */
export function isBackupId(id: string): boolean {
  return backupIdTime(id) !== undefined;
}

/** The time encoded in a backup id, or undefined when it is not a valid id. */
export function backupIdTime(id: string): Date | undefined {
  const m = BACKUP_ID.exec(id);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const roundTrips =
    at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day &&
    at.getUTCHours() === hour && at.getUTCMinutes() === minute && at.getUTCSeconds() === second;
  return roundTrips ? at : undefined;
}

/** Throws one readable sentence unless `id` is a valid backup id. */
export function assertBackupId(id: string): void {
  if (!isBackupId(id)) {
    throw new Error(`"${id}" is not a backup id; ids look like kf-20250131-142500-a1b2c3.`);
  }
}

/**
 * Names inside a backup folder may be foreign (Velero backups we only read), so they are checked to be one
 * safe key segment rather than matched against our id pattern.
 */
export function isSafeBackupName(name: string): boolean {
  return /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name) && !name.includes('..');
}

function segment(value: string, what: string): string {
  if (value === '' || value === '.' || value === '..' || /[/\\\0]/.test(value)) {
    throw new Error(`${what} "${value}" cannot be used in an object key.`);
  }
  return value;
}

export const BACKUPS_FOLDER = 'backups/';

/** The index of a backup's volume and control-plane files (src/catalog/data-files.ts), by its name in the folder. */
export const DATA_FILES_INDEX = 'kubeflow-upgrader-data-files.json.gz';

/** Where each file of backup `id` lives, relative to the location's prefix. */
export function backupKeys(id: string) {
  segment(id, 'Backup name');
  if (!isSafeBackupName(id)) throw new Error(`"${id}" is not a valid backup name.`);
  const folder = `${BACKUPS_FOLDER}${id}/`;
  return {
    folder,
    tarball: `${folder}${id}.tar.gz`,
    resourceList: `${folder}${id}-resource-list.json.gz`,
    logs: `${folder}${id}-logs.gz`,
    results: `${folder}${id}-results.gz`,
    manifest: `${folder}kubeflow-upgrader.json`,
    marker: `${folder}velero-backup.json`,
    dataFilesIndex: `${folder}${DATA_FILES_INDEX}`,
    volumesFolder: `${folder}volumes/`,
    volume: (namespace: string, pvc: string) =>
      `${folder}volumes/${segment(namespace, 'Namespace')}/${segment(pvc, 'PVC name')}/`,
    controlPlaneFolder: `${folder}control-plane/`,
    /** `part` is a component such as `kfp-db` or `minio`; `file` may contain `/` but no empty or dot segments. */
    controlPlane: (part: string, file: string) =>
      `${folder}control-plane/${segment(part, 'Control-plane part')}/${file.split('/').map((s) => segment(s, 'File name')).join('/')}`,
  };
}

export type BackupKeys = ReturnType<typeof backupKeys>;

/** Normalises a user path prefix: no leading/trailing slashes, no empty or dot segments; '' means the bucket root. */
export function normalizePrefix(prefix: string | undefined): string {
  const parts = (prefix ?? '').split('/').filter((p) => p !== '');
  for (const p of parts) segment(p, 'Path prefix segment');
  return parts.join('/');
}

/** The id part of a key under backups/ (`backups/<id>/...`), or undefined. */
export function backupNameOfFolder(relativeFolder: string): string | undefined {
  if (!relativeFolder.startsWith(BACKUPS_FOLDER)) return undefined;
  const name = relativeFolder.slice(BACKUPS_FOLDER.length).split('/')[0];
  return name && isSafeBackupName(name) ? name : undefined;
}
