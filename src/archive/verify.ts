// verify-backup and list-backups: both read only, both tolerate whatever they find in the bucket.
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import type { BackupStore } from '../store/backup-store.ts';
import type { MarkerRead } from './reader.ts';
import type { BackupScope } from './manifest.ts';
import { readItems, type Problem } from './reader.ts';
import { BackupPhaseError, judgePhase } from './velero-backup.ts';
import { judgeAuthentication, MANIFEST_HMAC_ANNOTATION, type AuthenticationOutcome, type AuthenticationPolicy } from './authenticate.ts';
import { isSealed, SecretOpener } from './seal.ts';
import { checkDataFiles, DATA_FILES_INDEX } from './data-files.ts';
import { volumeDataKind, type VolumeDataKind } from './volume-kind.ts';

export type VerifyStatus = 'ok' | 'corrupt' | 'not-verifiable';

export interface VerifyReport {
  id: string;
  status: VerifyStatus;
  /** items read and checked (each item once, not once per copy) */
  objectsChecked: number;
  problems: Problem[];
  authentication: AuthenticationOutcome;
  /** how its Secrets are sealed: bound, without binding (an older backup), or not at all */
  sealing: string;
  /** the kind of volume data its manifest records (undefined without a usable manifest) */
  volumeData?: VolumeDataKind | undefined;
}

/** A sentence on how a backup's Secrets are sealed, for results: older backups are sealed without binding. */
export function sealingNote(manifest: { encryption: { binding?: string | undefined } | null } | null): string {
  if (!manifest?.encryption) return 'no Secrets sealed';
  return manifest.encryption.binding ? 'sealed, each value bound to its backup, Secret and key' : 'sealed without binding (an older backup: its sealed values are not tied to their Secret or backup)';
}

/**
 * Downloads the whole backup and re-checks every checksum. Corrupt bytes are findings, never exceptions; only
 * a store failure (unreachable, denied) throws, a BackupPhaseError when the marker says the backup is unfinished
 * or failed (there is nothing whole to check), and with an encryption key a NotAuthenticatedError before the items are
 * read when the manifest's HMAC is wrong, or missing and not allowed. With a key, every sealed value is opened too
 * (and dropped), so one moved from another Secret or backup is a finding. A foreign Velero backup without our manifest
 * is read through and reported as not verifiable unless it is unreadable.
 */
export async function verifyBackup(store: BackupStore, id: string, policy: AuthenticationPolicy = {}): Promise<VerifyReport> {
  const keys = store.keys(id);
  const problems: Problem[] = [];
  const marker = await store.readMarker(id);
  if (marker.state === 'present') {
    const verdict = judgePhase(id, marker.marker.status.phase);
    if (!verdict.whole) throw new BackupPhaseError(verdict.reason);
  }
  if (marker.state === 'absent') {
    problems.push({ kind: 'missing-marker', path: keys.marker, message: `Backup ${id} has no velero-backup.json, so it never completed.` });
  } else if (marker.state === 'invalid') {
    problems.push({ kind: 'bad-marker', path: keys.marker, message: `The velero-backup.json of backup ${id} is unusable: ${marker.reason}.` });
  }
  const read = await store.readManifest(id, { encryptionKey: policy.encryptionKey, marker });
  // A manifest that no longer matches its recorded sha256 is reported as corrupt below; anything else with a key set
  // must carry the right HMAC before a byte of the archive is trusted.
  const authentication = read.state === 'invalid' || (read.state === 'present' && read.changed)
    ? { state: 'not-checked' as const, note: 'not checked: the manifest is unusable or was changed' }
    : judgeAuthentication(id, read.state === 'present' ? read.authentication : 'no-hmac', policy, 'verified');
  if (read.state === 'invalid') {
    problems.push({ kind: 'bad-manifest', path: keys.manifest, message: `The manifest of backup ${id} is unusable: ${read.reason}.` });
  }
  if (read.state === 'present' && read.changed) {
    problems.push({ kind: 'bad-manifest', path: keys.manifest, message: `The manifest of backup ${id} was changed after the backup was committed: ${read.changed}.` });
  }
  const manifest = read.state === 'present' ? read.manifest : null;
  const key = policy.encryptionKey;
  const opener = key !== undefined && key.length > 0 && manifest?.encryption ? openerOrProblem(id, manifest.encryption, key, problems) : undefined;
  let objectsChecked = 0;
  for await (const item of readItems(store, id, { expected: read.state === 'present' ? read : null, copies: 'all', onProblem: (p) => problems.push(p) })) {
    if (item.preferredVersion === undefined && item.otherVersion === undefined) {
      objectsChecked++;
      if (opener && isSealed(item.object)) {
        try {
          opener.open(item.object);
        } catch (error) {
          problems.push({ kind: 'sealed-value', path: item.path, message: (error as Error).message });
        }
      }
    }
  }
  if (manifest) {
    // the data-files index is checked with the files it lists
    problems.push(...(await checkDataFiles(store, id, manifest)));
    for (const [file, expected] of Object.entries(manifest.checksums.files)) {
      if (file === DATA_FILES_INDEX) continue;
      const key = `${keys.folder}${file}`;
      const body = await store.openFile(id, file);
      if (!body) {
        problems.push({ kind: 'missing-file', path: key, message: `File ${file} of backup ${id} is missing.` });
        continue;
      }
      const digest = createHash('sha256');
      for await (const chunk of body) digest.update(chunk as Buffer);
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
  return { id, status, objectsChecked, problems, authentication, sealing: sealingNote(manifest), ...(manifest ? { volumeData: volumeDataKind(manifest.volumes) } : {}) };
}

function openerOrProblem(id: string, encryption: Parameters<typeof SecretOpener.forBackup>[1], key: string | Buffer, problems: Problem[]): SecretOpener | undefined {
  try {
    return SecretOpener.forBackup(id, encryption, key);
  } catch (error) {
    problems.push({ kind: 'sealed-value', message: (error as Error).message });
    return undefined;
  }
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
  /**
   * authenticated: its HMAC matches under the key given; not-authenticated: it carries none (older, keyless or foreign);
   * hmac-mismatch: it carries one that does not match; hmac-unchecked: it carries one, but no key was given to check it
   */
  authentication: ListedAuthentication;
  /** set when the backup is listed but its manifest could not be used */
  problem: string | undefined;
  /** restic snapshots, plain files, both or none, from the manifest's volume index */
  volumeData?: VolumeDataKind | undefined;
}

export type ListedAuthentication = 'authenticated' | 'not-authenticated' | 'hmac-mismatch' | 'hmac-unchecked';

export interface ListOptions {
  limit?: number;
  /** checks each listed backup's HMAC (one scrypt each); without it a backup carrying an HMAC is hmac-unchecked */
  encryptionKey?: string | Buffer | undefined;
}

/** Backups with their marker, whatever its phase, newest first, described from their manifests. */
export async function listBackups(store: BackupStore, options: ListOptions = {}): Promise<BackupListing[]> {
  const ids = await store.listBackupIds();
  const limit = pLimit(8);
  const found = await Promise.all(ids.map((id) => limit(() => describe(store, id, options.encryptionKey))));
  const listed = found.filter((b): b is BackupListing => b !== undefined);
  listed.sort((a, b) => (a.created === b.created ? b.id.localeCompare(a.id) : b.created.localeCompare(a.created)));
  return options.limit !== undefined ? listed.slice(0, Math.max(0, options.limit)) : listed;
}

/** One backup as list-backups shows it (its HMAC checked when a key is given), or undefined without a marker. */
export async function describeBackup(store: BackupStore, id: string, encryptionKey?: string | Buffer): Promise<BackupListing | undefined> {
  return describe(store, id, encryptionKey);
}

async function describe(store: BackupStore, id: string, encryptionKey: string | Buffer | undefined, known?: MarkerRead): Promise<BackupListing | undefined> {
  const marker = known ?? await store.readMarker(id);
  if (marker.state !== 'present') return undefined;
  const status = marker.marker.status;
  const carriesHmac = typeof (marker.marker.metadata.annotations as Record<string, unknown> | undefined)?.[MANIFEST_HMAC_ANNOTATION] === 'string';
  const fromMarker = {
    id,
    phase: status.phase,
    created: normaliseTime(status.startTimestamp) ?? new Date(0).toISOString(),
    completed: normaliseTime(status.completionTimestamp),
    scope: undefined,
    description: undefined,
    objects: status.progress?.itemsBackedUp,
    bytes: await store.tarballSize(id),
    encrypted: false,
    authentication: 'not-authenticated' as const,
  };
  const read = await store.readManifest(id, { encryptionKey, marker });
  if (read.state === 'absent') return { ...fromMarker, format: 'velero', problem: undefined };
  if (read.state === 'invalid') return { ...fromMarker, format: 'kubeflow-upgrader', problem: `manifest unusable: ${read.reason}` };
  const m = read.manifest;
  const authentication: ListedAuthentication = read.authentication === 'authenticated' ? 'authenticated'
    : read.authentication === 'mismatch' ? 'hmac-mismatch'
    : read.authentication === undefined && carriesHmac ? 'hmac-unchecked' : 'not-authenticated';
  return {
    id, phase: status.phase, created: m.created, completed: m.completed, format: 'kubeflow-upgrader', scope: m.scope, description: m.description,
    objects: m.objects, bytes: m.bytes, encrypted: m.encryption !== null, authentication, volumeData: volumeDataKind(m.volumes),
    problem: read.changed ? `manifest changed after the backup was committed (${read.changed})` : undefined,
  };
}

export interface LatestBackup {
  listing: BackupListing;
  /** set when the backup is PartiallyFailed */
  warning: string | undefined;
}

/** What `latest` means: the newest backup whose marker says Completed or PartiallyFailed, described as list shows it. */
export async function latestWholeBackup(store: BackupStore): Promise<LatestBackup | undefined> {
  const newest = await latestWholeMarker(store);
  if (!newest) return undefined;
  const listing = await describe(store, newest.id, undefined, newest.marker);
  return listing && { listing, warning: newest.warning };
}

/**
 * `latest` for a restore: the same choice as latestWholeBackup, made from the markers, so that the restore reads the
 * chosen manifest only once, in its preflight, where the key checks its HMAC. A marker's start time has whole seconds
 * (RFC 3339, as Velero writes it); only backups that start in the same second as the newest whole one have their
 * manifests read, for the millisecond `created` that orders them as the listing does.
 */
export async function latestWholeMarker(store: BackupStore): Promise<{ id: string; marker: MarkerRead; warning: string | undefined } | undefined> {
  const ids = await store.listBackupIds();
  const limit = pLimit(8);
  const read = await Promise.all(ids.map((id) => limit(async () => ({ id, marker: await store.readMarker(id) }))));
  const whole = read.flatMap(({ id, marker }) => {
    if (marker.state !== 'present') return [];
    const verdict = judgePhase(id, marker.marker.status.phase);
    const created = normaliseTime(marker.marker.status.startTimestamp) ?? new Date(0).toISOString();
    return verdict.whole ? [{ id, marker, created, warning: verdict.warning }] : [];
  });
  const newestSecond = whole.reduce<string | undefined>((max, b) => (max === undefined || b.created > max ? b.created : max), undefined);
  const tied = whole.filter((b) => b.created === newestSecond);
  if (tied.length > 1) {
    await Promise.all(tied.map((b) => limit(async () => {
      const manifest = await store.readManifest(b.id, { marker: b.marker });
      if (manifest.state === 'present') b.created = normaliseTime(manifest.manifest.created) ?? b.created;
    })));
  }
  tied.sort((a, b) => (a.created === b.created ? b.id.localeCompare(a.id) : b.created.localeCompare(a.created)));
  const newest = tied[0];
  return newest && { id: newest.id, marker: newest.marker, warning: newest.warning };
}

function normaliseTime(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const t = new Date(text);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}
