// verify-backup and list-backups: both read only, both tolerate whatever they find in the bucket.
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { backupKeys, backupNameOfFolder, BACKUPS_FOLDER } from '../store/layout.ts';
import type { ObjectStore } from '../store/objects.ts';
import type { BackupScope } from './manifest.ts';
import { readItems, readManifest, readMarker, type Problem } from './reader.ts';
import { BackupPhaseError, judgePhase } from './velero-backup.ts';

export type VerifyStatus = 'ok' | 'corrupt' | 'not-verifiable';

export interface VerifyReport {
  id: string;
  status: VerifyStatus;
  /** items read and checked (each item once, not once per copy) */
  objectsChecked: number;
  problems: Problem[];
}

/**
 * Downloads the whole backup and re-checks every checksum. Corrupt bytes are findings, never exceptions; only
 * a store failure (unreachable, denied) throws, and a BackupPhaseError when the marker says the backup is unfinished
 * or failed (there is nothing whole to check). A foreign Velero backup without our manifest is read through and
 * reported as not verifiable unless it is unreadable.
 */
export async function verifyBackup(store: ObjectStore, id: string): Promise<VerifyReport> {
  const keys = backupKeys(id);
  const problems: Problem[] = [];
  const marker = await readMarker(store, id);
  if (marker.state === 'present') {
    const verdict = judgePhase(id, marker.marker.status.phase);
    if (!verdict.whole) throw new BackupPhaseError(verdict.reason);
  }
  if (marker.state === 'absent') {
    problems.push({ kind: 'missing-marker', path: keys.marker, message: `Backup ${id} has no velero-backup.json, so it never completed.` });
  } else if (marker.state === 'invalid') {
    problems.push({ kind: 'bad-marker', path: keys.marker, message: `The velero-backup.json of backup ${id} is unusable: ${marker.reason}.` });
  }
  const read = await readManifest(store, id);
  if (read.state === 'invalid') {
    problems.push({ kind: 'bad-manifest', path: keys.manifest, message: `The manifest of backup ${id} is unusable: ${read.reason}.` });
  }
  if (read.state === 'present' && read.changed) {
    problems.push({ kind: 'bad-manifest', path: keys.manifest, message: `The manifest of backup ${id} was changed after the backup was committed: ${read.changed}.` });
  }
  const manifest = read.state === 'present' ? read.manifest : null;
  let objectsChecked = 0;
  for await (const item of readItems(store, id, { manifest, copies: 'all', onProblem: (p) => problems.push(p) })) {
    if (item.preferredVersion === undefined && item.otherVersion === undefined) objectsChecked++;
  }
  if (manifest) {
    for (const [file, expected] of Object.entries(manifest.checksums.files)) {
      const key = `${keys.folder}${file}`;
      if (!(await store.exists(key))) {
        problems.push({ kind: 'missing-file', path: key, message: `File ${file} of backup ${id} is missing.` });
        continue;
      }
      const digest = createHash('sha256');
      for await (const chunk of await store.getStream(key)) digest.update(chunk as Buffer);
      if (digest.digest('hex') !== expected) {
        problems.push({ kind: 'file-checksum', path: key, message: `File ${file} of backup ${id} does not match its checksum in the manifest.` });
      }
    }
    if (objectsChecked !== manifest.objects && problems.length === 0) {
      problems.push({ kind: 'bad-manifest', path: keys.manifest, message: `The manifest of backup ${id} counts ${manifest.objects} objects but the tarball holds ${objectsChecked}.` });
    }
  }
  const status: VerifyStatus = problems.length > 0 ? 'corrupt' : manifest ? 'ok' : 'not-verifiable';
  if (status === 'not-verifiable') {
    problems.push({ kind: 'missing-manifest', path: keys.manifest, message: `Backup ${id} has no kubeflow-upgrader manifest (a foreign Velero backup?), so its checksums cannot be verified; its items are readable.` });
  }
  return { id, status, objectsChecked, problems };
}

export interface BackupListing {
  id: string;
  /** ISO time the backup started */
  created: string;
  completed: string | undefined;
  /** the phase velero-backup.json records (Velero writes the marker of unfinished and failed backups too) */
  phase: string | undefined;
  /** 'kubeflow-upgrader' when our manifest is present, 'velero' for a foreign backup */
  format: 'kubeflow-upgrader' | 'velero';
  scope: BackupScope | undefined;
  description: string | undefined;
  objects: number | undefined;
  bytes: number | undefined;
  encrypted: boolean;
  /** set when the backup is listed but its manifest could not be used */
  problem: string | undefined;
}

/** Backups with their marker, whatever its phase, newest first, described from their manifests. */
export async function listBackups(store: ObjectStore, options: { limit?: number } = {}): Promise<BackupListing[]> {
  const ids: string[] = [];
  for await (const folder of store.listFolders(BACKUPS_FOLDER)) {
    const id = backupNameOfFolder(folder);
    if (id) ids.push(id);
  }
  const limit = pLimit(8);
  const found = await Promise.all(ids.map((id) => limit(() => describe(store, id))));
  const listed = found.filter((b): b is BackupListing => b !== undefined);
  listed.sort((a, b) => (a.created === b.created ? b.id.localeCompare(a.id) : b.created.localeCompare(a.created)));
  return options.limit !== undefined ? listed.slice(0, Math.max(0, options.limit)) : listed;
}

async function describe(store: ObjectStore, id: string): Promise<BackupListing | undefined> {
  const marker = await readMarker(store, id);
  if (marker.state !== 'present') return undefined;
  const status = marker.marker.status;
  const fromMarker = {
    id,
    phase: status.phase,
    created: normaliseTime(status.startTimestamp) ?? new Date(0).toISOString(),
    completed: normaliseTime(status.completionTimestamp),
    scope: undefined,
    description: undefined,
    objects: status.progress?.itemsBackedUp,
    bytes: (await store.head(backupKeys(id).tarball))?.size,
    encrypted: false,
  };
  const read = await readManifest(store, id);
  if (read.state === 'absent') return { ...fromMarker, format: 'velero', problem: undefined };
  if (read.state === 'invalid') return { ...fromMarker, format: 'kubeflow-upgrader', problem: `manifest unusable: ${read.reason}` };
  const m = read.manifest;
  return {
    id, phase: status.phase, created: m.created, completed: m.completed, format: 'kubeflow-upgrader', scope: m.scope, description: m.description,
    objects: m.objects, bytes: m.bytes, encrypted: m.encryption !== null, problem: undefined,
  };
}

export interface LatestBackup {
  listing: BackupListing;
  /** set when the backup is PartiallyFailed */
  warning: string | undefined;
}

/** What `latest` means: the newest backup whose marker says Completed or PartiallyFailed. */
export async function latestWholeBackup(store: ObjectStore): Promise<LatestBackup | undefined> {
  for (const listing of await listBackups(store)) {
    const verdict = judgePhase(listing.id, listing.phase);
    if (verdict.whole) return { listing, warning: verdict.warning };
  }
  return undefined;
}

function normaliseTime(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const t = new Date(text);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}
