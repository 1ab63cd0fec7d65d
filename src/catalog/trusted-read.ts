// The one trusted read of a backup, for every command that trusts one (verify-backup, restore-state's preflight): its
// marker and the phase it records, its manifest (with a key, under its HMAC) and whether the marker still says what
// the manifest does. What is wrong is returned as findings with the same rules for every caller; verify lists them,
// a restore refuses on any of them. Only what leaves nothing whole to read throws: a phase that says the backup is
// unfinished or failed (BackupPhaseError). A manifest that is not authenticated where a key demands it is handed back
// as `refusal`, for the caller to throw where its order of sentences puts it.
import type { BackupStore } from '../store/backup-store.ts';
import type { Manifest } from '../archive/manifest.ts';
import type { ManifestRead, MarkerRead, Problem } from '../archive/reader.ts';
import { BackupPhaseError, judgePhase } from '../archive/velero-backup.ts';
import { judgeAuthentication, NotAuthenticatedError, type AuthenticationOutcome, type Trust } from '../archive/authenticate.ts';
import { markerDisagreement } from './listing.ts';

export interface TrustedRead {
  id: string;
  marker: MarkerRead;
  read: ManifestRead;
  /** the manifest, when it is there and usable (changed or not: `problems` says) */
  manifest: Manifest | null;
  /** what the HMAC check found; not checked when the manifest is unusable or was changed (a problem already) */
  authentication: AuthenticationOutcome;
  /** with a key: why the manifest is not to be trusted (no HMAC, or a wrong one, and not allowed) */
  refusal?: NotAuthenticatedError | undefined;
  /** a whole backup's phase that still calls for a word (PartiallyFailed) */
  phaseWarning?: string | undefined;
  /** in the order found: the marker's, the manifest's, then a marker that disagrees with the manifest */
  problems: Problem[];
}

/**
 * `doing` words the authentication's sentences (`verified`, `restored`). `marker`: the one already read to choose the
 * backup (`latest`), read once.
 */
export async function readTrustedBackup(store: BackupStore, id: string, trust: Trust, doing: string, known?: MarkerRead): Promise<TrustedRead> {
  const keys = store.keys(id);
  const problems: Problem[] = [];
  const marker = known ?? (await store.readMarker(id));
  let phaseWarning: string | undefined;
  if (marker.state === 'present') {
    const verdict = judgePhase(id, marker.marker.status.phase);
    if (!verdict.whole) throw new BackupPhaseError(verdict.reason);
    phaseWarning = verdict.warning;
  }
  if (marker.state === 'absent') {
    problems.push({ kind: 'missing-marker', path: keys.marker, message: `Backup ${id} has no velero-backup.json, so it never completed.` });
  } else if (marker.state === 'invalid') {
    problems.push({ kind: 'bad-marker', path: keys.marker, message: `The velero-backup.json of backup ${id} is unusable: ${marker.reason}.` });
  }
  const read = await store.readManifest(id, { encryptionKey: trust.encryptionKey, marker });
  // A manifest that no longer matches its recorded sha256 is a problem of its own; anything else with a key set must
  // carry the right HMAC before a byte of the archive is trusted.
  let authentication: AuthenticationOutcome = { state: 'not-checked', note: 'not checked: the manifest is unusable or was changed' };
  let refusal: NotAuthenticatedError | undefined;
  if (read.state !== 'invalid' && !(read.state === 'present' && read.changed)) {
    try {
      authentication = judgeAuthentication(id, read.state === 'present' ? read.authentication : 'no-hmac', trust, doing);
    } catch (error) {
      if (!NotAuthenticatedError.isInstance(error)) throw error;
      refusal = error;
    }
  }
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
  return { id, marker, read, manifest, authentication, refusal, phaseWarning, problems };
}
