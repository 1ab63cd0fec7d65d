// `latest`: which backup a command, an action or the service takes when it is not named. One answer for the whole
// product (restore, verify, pre-upgrade-check, the charm's status and the scheduler's service all ask it here), in the
// order list-backups shows (listing.ts).
import pLimit from 'p-limit';
import type { BackupStore } from '../store/backup-store.ts';
import type { MarkerRead } from '../archive/reader.ts';
import { judgePhase } from '../archive/velero-backup.ts';
import { KfuError } from '../errors/index.ts';
import { describeAll, describeListed, EPOCH, newestFirst, normaliseTime, wholeSecond, type BackupListing, type ListedAuthentication } from './listing.ts';

export interface ChosenBackup {
  id: string;
  /** how list-backups describes it; read only when asked for (`describe`), or with a key (the choice reads it) */
  listing?: BackupListing | undefined;
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

export interface LatestBackup extends ChosenBackup {
  listing: BackupListing;
}

export interface LatestOptions {
  /**
   * With a key, `latest` is chosen only among backups whose HMAC verifies, ordered by the manifest's times (which the
   * HMAC covers): a marker's times, phase or name, which a writer without the key can rewrite, never decide it.
   */
  encryptionKey?: string | Buffer | undefined;
  /**
   * false: without a key, the choice is made from the markers alone and the chosen backup is not described, so that a
   * restore, which reads the chosen manifest itself, reads it once
   */
  describe?: boolean;
}

/**
 * What `latest` means, for every command, action and service that takes it (restore, verify, check, the charm's
 * status, the scheduler's service): without a key, the newest backup whose marker says Completed or PartiallyFailed;
 * with a key, the newest authenticated one, by its manifest. Undefined when there is none; `latestRefusal` says why
 * in one sentence. The one place `latest` is decided: everything else asks this or resolveBackupId.
 */
export async function latestWholeBackup(store: BackupStore, options: LatestOptions & { describe: false }): Promise<ChosenBackup | undefined>;
export async function latestWholeBackup(store: BackupStore, options?: LatestOptions): Promise<LatestBackup | undefined>;
export async function latestWholeBackup(store: BackupStore, options: LatestOptions = {}): Promise<ChosenBackup | undefined> {
  const key = options.encryptionKey;
  if (key === undefined || key.length === 0) {
    const newest = await latestWholeMarker(store);
    if (!newest) return undefined;
    if (options.describe === false) return { id: newest.id, warning: newest.warning, notes: [], marker: newest.marker };
    const described = await describeListed(store, newest.id, undefined);
    return described && { id: newest.id, listing: described.listing, warning: newest.warning, notes: [], marker: newest.marker };
  }
  const all = await describeAll(store, key);
  const notes: string[] = [];
  let chosen: { id: string; listing: BackupListing; marker: MarkerRead; warning: string | undefined } | undefined;
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
    chosen = { id: listing.id, listing, marker, warning: verdict.warning };
  }
  return chosen && { ...chosen, notes };
}

/** `latest` found nothing: the sentence says why (latestRefusal) */
export class NoWholeBackupError extends KfuError {
  static override readonly errorId = 'NoWholeBackupError';
  constructor(sentence: string) {
    super(sentence, { kind: 'input' });
  }
}

/**
 * A backup id as a command names it: `latest` resolved (latestWholeBackup), with the sentences to pass on (a
 * PartiallyFailed backup, the newer ones passed over) in `notes`; any other id as it is, to be judged by whoever reads
 * it. Throws a NoWholeBackupError naming what `doing` could not find.
 */
export async function resolveBackupId(
  store: BackupStore, requested: string, options: Omit<LatestOptions, 'describe'> & { doing: string },
): Promise<{ id: string; marker?: MarkerRead; notes: string[] }> {
  if (requested !== 'latest') return { id: requested, notes: [] };
  const newest = await latestWholeBackup(store, { encryptionKey: options.encryptionKey, describe: false });
  if (!newest) throw new NoWholeBackupError(await latestRefusal(store, options.doing, { encryptionKey: options.encryptionKey }));
  return { id: newest.id, marker: newest.marker, notes: [...(newest.warning ? [newest.warning] : []), ...newest.notes] };
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
async function latestRefusal(store: BackupStore, doing: string, options: LatestOptions = {}): Promise<string> {
  const key = options.encryptionKey;
  const keyed = key !== undefined && key.length > 0;
  if (keyed && (await latestWholeBackup(store, { describe: false }))) {
    return `There is no authenticated complete backup in ${store.url('backups/')} to ${doing}: with an encryption-key set, latest is the newest backup whose HMAC verifies, and none does (list-backups shows each one's authentication).`;
  }
  return `There is no complete backup in ${store.url('backups/')} to ${doing}; run backup-state first.`;
}

/**
 * `latest` without a key, from the markers, so that a keyless restore or status reads the chosen manifest only once. A
 * marker's start time has whole seconds (RFC 3339, as Velero writes it); only backups that start in the same second as
 * the newest whole one have their manifests read, for the millisecond `created` that orders them as the listing does.
 */
async function latestWholeMarker(store: BackupStore): Promise<{ id: string; marker: MarkerRead; warning: string | undefined } | undefined> {
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
  const newest = await latestWholeBackup(store, { describe: false });
  const listing = newest && (await describeListed(store, newest.id, encryptionKey))?.listing;
  return listing && of(listing, []);
}
