// The backups of a location as list-backups shows them: each described from its marker and manifest (with a key,
// an authenticated one by its manifest alone), newest first. `latest` (latest.ts) chooses among them in this order.
import pLimit from 'p-limit';
import type { BackupStore } from '../store/backup-store.ts';
import type { MarkerRead } from '../archive/reader.ts';
import type { BackupScope, Manifest } from '../archive/manifest.ts';
import { MANIFEST_HMAC_ANNOTATION } from '../archive/authenticate.ts';
import { volumeDataKind, type VolumeDataKind } from '../archive/volume-kind.ts';

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
export interface Described {
  listing: BackupListing;
  /**
   * Newest first by these, then by id. An authenticated backup sorts by its manifest's start (the HMAC covers it): the
   * second, then the millisecond. Any other by its marker's start second, then its manifest's millisecond: the order
   * keyless `latest` (latest.ts) finds from the markers alone, so that keyless `latest` and list agree without reading every
   * manifest.
   */
  second: string;
  precise: string;
  marker: MarkerRead;
}

export const EPOCH = new Date(0).toISOString();

/**
 * Backups with their marker, whatever its phase, newest first, described from their manifests. With a key, an
 * authenticated backup is placed and described by its manifest (the HMAC covers that), never by the marker.
 */
export async function listBackups(store: BackupStore, options: ListOptions = {}): Promise<BackupListing[]> {
  const listed = (await describeAll(store, options.encryptionKey)).map((d) => d.listing);
  return options.limit !== undefined ? listed.slice(0, Math.max(0, options.limit)) : listed;
}

export async function describeAll(store: BackupStore, encryptionKey: string | Buffer | undefined): Promise<Described[]> {
  const ids = await store.listBackupIds();
  const limit = pLimit(8);
  const found = await Promise.all(ids.map((id) => limit(() => describeListed(store, id, encryptionKey))));
  const listed = found.filter((b): b is Described => b !== undefined);
  listed.sort(newestFirst);
  return listed;
}

export function newestFirst(a: { second: string; precise: string; listing: { id: string } }, b: { second: string; precise: string; listing: { id: string } }): number {
  if (a.second !== b.second) return b.second.localeCompare(a.second);
  if (a.precise !== b.precise) return b.precise.localeCompare(a.precise);
  return b.listing.id.localeCompare(a.listing.id);
}

/** One backup as list-backups shows it (its HMAC checked when a key is given), or undefined without a marker. */
export async function describeBackup(store: BackupStore, id: string, encryptionKey?: string | Buffer): Promise<BackupListing | undefined> {
  return (await describeListed(store, id, encryptionKey))?.listing;
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

export async function describeListed(store: BackupStore, id: string, encryptionKey: string | Buffer | undefined): Promise<Described | undefined> {
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

export function normaliseTime(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const t = new Date(text);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** A time cut to its whole second, as ISO: what a marker records of the manifest's millisecond times. */
export function wholeSecond(text: string | undefined): string | undefined {
  return normaliseTime(text)?.replace(/\.\d+Z$/, '.000Z');
}
