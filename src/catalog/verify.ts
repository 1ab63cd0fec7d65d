// verify-backup and list-backups: both read only, both tolerate whatever they find in the bucket.
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import type { BackupStore } from '../store/backup-store.ts';
import type { MarkerRead } from '../archive/reader.ts';
import type { BackupScope, ControlPlaneEntry, Manifest, VolumeEntry } from '../archive/manifest.ts';
import type { Problem } from '../archive/reader.ts';
import { readItems } from './read-items.ts';
import { BackupPhaseError, judgePhase } from '../archive/velero-backup.ts';
import { judgeAuthentication, MANIFEST_HMAC_ANNOTATION, type AuthenticationOutcome, type Trust } from '../archive/authenticate.ts';
import { isSealed, SecretOpener } from '../archive/seal.ts';
import { checkDataFiles, DATA_FILES_INDEX } from './data-files.ts';
import { volumeDataKind, type VolumeDataKind } from '../archive/volume-kind.ts';

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
  /** its manifest's volume index (the restic snapshots it pins), for the check of the repositories */
  volumes?: VolumeEntry[] | undefined;
  /** its manifest's control-plane entries (the snapshots of the control-plane repository it pins, with a key) */
  controlPlane?: ControlPlaneEntry[] | undefined;
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
 * is read through and reported as not verifiable unless it is unreadable. A marker that disagrees with the manifest
 * (its name, phase or times) is a problem too.
 */
export async function verifyBackup(store: BackupStore, id: string, trust: Trust = {}): Promise<VerifyReport> {
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
  const read = await store.readManifest(id, { encryptionKey: trust.encryptionKey, marker });
  // A manifest that no longer matches its recorded sha256 is reported as corrupt below; anything else with a key set
  // must carry the right HMAC before a byte of the archive is trusted.
  const authentication = read.state === 'invalid' || (read.state === 'present' && read.changed)
    ? { state: 'not-checked' as const, note: 'not checked: the manifest is unusable or was changed' }
    : judgeAuthentication(id, read.state === 'present' ? read.authentication : 'no-hmac', trust, 'verified');
  if (read.state === 'invalid') {
    problems.push({ kind: 'bad-manifest', path: keys.manifest, message: `The manifest of backup ${id} is unusable: ${read.reason}.` });
  }
  if (read.state === 'present' && read.changed) {
    problems.push({ kind: 'bad-manifest', path: keys.manifest, message: `The manifest of backup ${id} was changed after the backup was committed: ${read.changed}.` });
  }
  const manifest = read.state === 'present' ? read.manifest : null;
  // Our writer makes the marker from the manifest: one that says otherwise was rewritten after the commit.
  const disagreement = manifest ? markerDisagreement(id, marker, manifest) : undefined;
  if (disagreement) problems.push({ kind: 'bad-marker', path: keys.marker, message: `Backup ${id}: ${disagreement}.` });
  const key = trust.encryptionKey;
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
    problems.push(...(await checkDataFiles(store, id, manifest, { readBytes: true })));
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
  return { id, status, objectsChecked, problems, authentication, sealing: sealingNote(manifest), ...(manifest ? { volumeData: volumeDataKind(manifest.volumes), volumes: manifest.volumes, controlPlane: manifest.extras.controlPlane?.entries ?? [] } : {}) };
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
  /**
   * ISO time the backup started: with a key, for an authenticated backup, the manifest's (under the HMAC); otherwise
   * the manifest's when there is one, the marker's when not
   */
  created: string;
  completed: string | undefined;
  /**
   * the phase: of an authenticated backup, the one its manifest implies (Completed, or PartiallyFailed when it counts
   * errors); otherwise the one velero-backup.json records (Velero writes the marker of unfinished and failed backups too)
   */
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
   * hmac-mismatch: it carries one that does not match (or is malformed); hmac-unchecked: it carries one, but no key was
   * given to check it
   */
  authentication: ListedAuthentication;
  /** set when the backup is listed but its manifest could not be used, or its marker disagrees with its manifest */
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

/** A listed backup, with where it sorts and the marker it was described from. */
interface Described {
  listing: BackupListing;
  /**
   * Newest first by these, then by id. An authenticated backup sorts by its manifest's start (the HMAC covers it): the
   * second, then the millisecond. Any other by its marker's start second, then its manifest's millisecond: the order
   * latestWholeMarker finds from the markers alone, so that keyless `latest` and list agree without reading every
   * manifest.
   */
  second: string;
  precise: string;
  marker: MarkerRead;
}

const EPOCH = new Date(0).toISOString();

/**
 * Backups with their marker, whatever its phase, newest first, described from their manifests. With a key, an
 * authenticated backup is placed and described by its manifest (the HMAC covers that), never by the marker.
 */
export async function listBackups(store: BackupStore, options: ListOptions = {}): Promise<BackupListing[]> {
  const listed = (await describeAll(store, options.encryptionKey)).map((d) => d.listing);
  return options.limit !== undefined ? listed.slice(0, Math.max(0, options.limit)) : listed;
}

async function describeAll(store: BackupStore, encryptionKey: string | Buffer | undefined): Promise<Described[]> {
  const ids = await store.listBackupIds();
  const limit = pLimit(8);
  const found = await Promise.all(ids.map((id) => limit(() => describe(store, id, encryptionKey))));
  const listed = found.filter((b): b is Described => b !== undefined);
  listed.sort(newestFirst);
  return listed;
}

function newestFirst(a: { second: string; precise: string; listing: { id: string } }, b: { second: string; precise: string; listing: { id: string } }): number {
  if (a.second !== b.second) return b.second.localeCompare(a.second);
  if (a.precise !== b.precise) return b.precise.localeCompare(a.precise);
  return b.listing.id.localeCompare(a.listing.id);
}

/** One backup as list-backups shows it (its HMAC checked when a key is given), or undefined without a marker. */
export async function describeBackup(store: BackupStore, id: string, encryptionKey?: string | Buffer): Promise<BackupListing | undefined> {
  return (await describe(store, id, encryptionKey))?.listing;
}

/** The phase our writer records for a manifest (velero-backup.ts veleroBackupObject): errors make it PartiallyFailed. */
function manifestPhase(manifest: Manifest): string {
  return manifest.errors > 0 ? 'PartiallyFailed' : 'Completed';
}

/**
 * Where the marker of one of our backups says something else than its manifest: its name, phase, start or completion
 * (the marker's times are the manifest's cut to whole seconds). A clause naming each difference, or undefined. The
 * HMAC covers the manifest, not the marker: with a key the manifest's word is the one used.
 */
export function markerDisagreement(id: string, marker: MarkerRead, manifest: Manifest): string | undefined {
  if (marker.state !== 'present') return undefined;
  const { metadata, status } = marker.marker;
  const said: string[] = [];
  if (metadata.name !== id) said.push(`it names backup ${metadata.name}`);
  const phase = manifestPhase(manifest);
  if (status.phase !== phase) said.push(`phase ${status.phase ?? 'none'} where the manifest implies ${phase}`);
  const times: [string, string | undefined, string][] = [['start', status.startTimestamp, manifest.created], ['completion', status.completionTimestamp, manifest.completed]];
  for (const [what, recorded, expected] of times) {
    const second = wholeSecond(expected);
    if (wholeSecond(recorded) !== second) said.push(`${what} ${recorded ?? 'none'} where the manifest says ${second}`);
  }
  return said.length ? `its velero-backup.json disagrees with its manifest (${said.join('; ')})` : undefined;
}

async function describe(store: BackupStore, id: string, encryptionKey: string | Buffer | undefined): Promise<Described | undefined> {
  const marker = await store.readMarker(id);
  if (marker.state !== 'present') return undefined;
  const status = marker.marker.status;
  // Present at all, even malformed: a damaged HMAC is not the absence of one (authenticate.ts ManifestVerifier).
  const carriesHmac = (marker.marker.metadata.annotations as Record<string, unknown> | undefined)?.[MANIFEST_HMAC_ANNOTATION] !== undefined;
  const markerSecond = wholeSecond(status.startTimestamp) ?? EPOCH;
  const fromMarker = {
    id,
    phase: status.phase,
    created: normaliseTime(status.startTimestamp) ?? EPOCH,
    completed: normaliseTime(status.completionTimestamp),
    scope: undefined,
    description: undefined,
    objects: status.progress?.itemsBackedUp,
    bytes: await store.tarballSize(id),
    encrypted: false,
    authentication: (carriesHmac ? 'hmac-unchecked' : 'not-authenticated') as ListedAuthentication,
  };
  const read = await store.readManifest(id, { encryptionKey, marker });
  if (read.state === 'absent') return { listing: { ...fromMarker, format: 'velero', problem: undefined }, second: markerSecond, precise: markerSecond, marker };
  if (read.state === 'invalid') {
    return { listing: { ...fromMarker, format: 'kubeflow-upgrader', problem: `manifest unusable: ${read.reason}` }, second: markerSecond, precise: markerSecond, marker };
  }
  const m = read.manifest;
  const authentication: ListedAuthentication = read.authentication === 'authenticated' ? 'authenticated'
    : read.authentication === 'mismatch' ? 'hmac-mismatch'
    : read.authentication === undefined && carriesHmac ? 'hmac-unchecked' : 'not-authenticated';
  const trusted = authentication === 'authenticated' && !read.changed;
  const disagreement = markerDisagreement(id, marker, m);
  const problem = read.changed ? `manifest changed after the backup was committed (${read.changed})` : disagreement;
  const listing: BackupListing = {
    id, phase: trusted ? manifestPhase(m) : status.phase, created: m.created, completed: m.completed, format: 'kubeflow-upgrader', scope: m.scope,
    description: m.description, objects: m.objects, bytes: m.bytes, encrypted: m.encryption !== null, authentication, volumeData: volumeDataKind(m.volumes), problem,
  };
  const precise = normaliseTime(m.created) ?? markerSecond;
  return { listing, second: trusted ? (wholeSecond(m.created) ?? EPOCH) : markerSecond, precise, marker };
}

export interface LatestBackup {
  listing: BackupListing;
  /** set when the backup is PartiallyFailed */
  warning: string | undefined;
  /**
   * with a key: a sentence for each newer backup passed over because it is not authenticated, and one when the chosen
   * backup's marker disagrees with its manifest
   */
  notes: string[];
  /** the chosen backup's marker as it was read */
  marker: MarkerRead;
}

export interface LatestOptions {
  /**
   * With a key, `latest` is chosen only among backups whose HMAC verifies, ordered by the manifest's times (which the
   * HMAC covers): a marker's times, phase or name, which a writer without the key can rewrite, never decide it.
   */
  encryptionKey?: string | Buffer | undefined;
}

/**
 * What `latest` means, for every command that takes it (restore, verify, check, the status): without a key, the newest
 * backup whose marker says Completed or PartiallyFailed; with a key, the newest authenticated one, by its manifest.
 * Undefined when there is none; `latestRefusal` says why in one sentence.
 */
export async function latestWholeBackup(store: BackupStore, options: LatestOptions = {}): Promise<LatestBackup | undefined> {
  const key = options.encryptionKey;
  if (key === undefined || key.length === 0) {
    const newest = await latestWholeMarker(store);
    if (!newest) return undefined;
    const described = await describe(store, newest.id, undefined);
    return described && { listing: described.listing, warning: newest.warning, notes: [], marker: newest.marker };
  }
  const all = await describeAll(store, key);
  const notes: string[] = [];
  let chosen: { listing: BackupListing; marker: MarkerRead; warning: string | undefined } | undefined;
  for (const { listing, marker } of all) {
    const trusted = listing.authentication === 'authenticated' && !listing.problem?.startsWith('manifest ');
    // A rewritten marker of an authenticated backup is named wherever it sorts: its times are what a writer without
    // the key would move to have an older backup chosen.
    if (trusted && listing.problem) notes.push(`Backup ${listing.id}: ${listing.problem}; latest ordered it by its manifest.`);
    if (chosen) continue;
    // the marker's phase for the ones not authenticated: they are named only when a keyless latest could take them
    const verdict = judgePhase(listing.id, listing.phase);
    if (!verdict.whole) continue;
    if (!trusted) {
      notes.push(`Backup ${listing.id} is newer by its velero-backup.json but ${passedOverReason(listing)}, so latest passed over it.`);
      continue;
    }
    chosen = { listing, marker, warning: verdict.warning };
  }
  return chosen && { ...chosen, notes };
}

/** Why a backup that a keyless `latest` could take does not count with a key, as a clause. */
function passedOverReason(listing: BackupListing): string {
  const unusable = /^manifest unusable: (.*)$/.exec(listing.problem ?? '');
  if (unusable) return `its manifest is unusable (${unusable[1]})`;
  if (listing.problem?.startsWith('manifest changed')) return 'its manifest was changed after the backup was committed';
  if (listing.authentication === 'not-authenticated') return 'it carries no HMAC (restore it by its id with allow-unauthenticated=true if you trust it)';
  if (listing.authentication === 'hmac-mismatch') return 'its HMAC does not match its manifest under the encryption-key';
  return 'no key checked it';
}

/** Why `latest` found nothing, as one sentence: with a key, backups that are not authenticated do not count. */
export async function latestRefusal(store: BackupStore, doing: string, options: LatestOptions = {}): Promise<string> {
  const key = options.encryptionKey;
  const keyed = key !== undefined && key.length > 0;
  if (keyed && (await latestWholeMarker(store))) {
    return `There is no authenticated complete backup in ${store.url('backups/')} to ${doing}: with an encryption-key set, latest is the newest backup whose HMAC verifies, and none does (list-backups shows each one's authentication).`;
  }
  return `There is no complete backup in ${store.url('backups/')} to ${doing}; run backup-state first.`;
}

/**
 * `latest` without a key, from the markers, so that a keyless restore or status reads the chosen manifest only once. A
 * marker's start time has whole seconds (RFC 3339, as Velero writes it); only backups that start in the same second as
 * the newest whole one have their manifests read, for the millisecond `created` that orders them as the listing does.
 */
export async function latestWholeMarker(store: BackupStore): Promise<{ id: string; marker: MarkerRead; warning: string | undefined } | undefined> {
  const ids = await store.listBackupIds();
  const limit = pLimit(8);
  const read = await Promise.all(ids.map((id) => limit(async () => ({ id, marker: await store.readMarker(id) }))));
  const whole = read.flatMap(({ id, marker }) => {
    if (marker.state !== 'present') return [];
    const verdict = judgePhase(id, marker.marker.status.phase);
    const second = wholeSecond(marker.marker.status.startTimestamp) ?? EPOCH;
    return verdict.whole ? [{ id, marker, second, precise: second, warning: verdict.warning, listing: { id } }] : [];
  });
  const newestSecond = whole.reduce<string | undefined>((max, b) => (max === undefined || b.second > max ? b.second : max), undefined);
  const tied = whole.filter((b) => b.second === newestSecond);
  if (tied.length > 1) {
    await Promise.all(tied.map((b) => limit(async () => {
      const manifest = await store.readManifest(b.id, { marker: b.marker });
      if (manifest.state === 'present') b.precise = normaliseTime(manifest.manifest.created) ?? b.precise;
    })));
  }
  tied.sort(newestFirst);
  const newest = tied[0];
  return newest && { id: newest.id, marker: newest.marker, warning: newest.warning };
}

function normaliseTime(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const t = new Date(text);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** A time cut to its whole second, as ISO: what a marker records of the manifest's millisecond times. */
function wholeSecond(text: string | undefined): string | undefined {
  return normaliseTime(text)?.replace(/\.\d+Z$/, '.000Z');
}

/** The backup pre-upgrade-check (and `check`) judges: the one `latest` would restore, with how it was chosen. */
export interface NewestForCheck {
  id: string;
  completedAt: Date;
  authentication: ListedAuthentication;
  notes: string[];
}

/**
 * The newest backup as restore-state's `latest` sees it: with a key, the newest authenticated one and the newer ones
 * passed over. When a key is set and none is authenticated, the newest whole one by its marker, as it lists (so the
 * check warns that a restore would refuse it). Undefined when there is no whole backup.
 */
export async function newestForCheck(store: BackupStore, encryptionKey?: string | Buffer): Promise<NewestForCheck | undefined> {
  const chosen = await latestWholeBackup(store, { encryptionKey });
  const of = (listing: BackupListing, notes: string[]): NewestForCheck => ({
    id: listing.id, completedAt: new Date(listing.completed ?? listing.created), authentication: listing.authentication, notes,
  });
  if (chosen) return of(chosen.listing, chosen.notes);
  if (encryptionKey === undefined || encryptionKey.length === 0) return undefined;
  const newest = await latestWholeMarker(store);
  const listing = newest && (await describe(store, newest.id, encryptionKey))?.listing;
  return listing && of(listing, []);
}
