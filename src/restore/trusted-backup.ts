// The backup a restore reads: chosen as every command chooses `latest` (catalog/latest.ts) and read as every command
// trusts a backup (catalog/trusted-read.ts), its findings worded as the restore's refusals.
import { NoWholeBackupError, resolveBackupId } from '../catalog/latest.ts';
import { readTrustedBackup } from '../catalog/trusted-read.ts';
import { checkDataFiles } from '../catalog/data-files.ts';
import { BackupPhaseError, type Manifest } from '../archive/index.ts';
import { refuseAllowWithLatest, type AuthenticationOutcome, type Trust } from '../archive/authenticate.ts';
import type { ManifestRead } from '../archive/reader.ts';
import type { BackupStore } from '../store/backup-store.ts';
import { RestoreInputError, RestoreRefusedError, listOf } from './errors.ts';

export interface TrustedManifest {
  backupId: string;
  read: ManifestRead;
  manifest: Manifest | null;
  authentication: AuthenticationOutcome;
}

/**
 * The backup chosen (catalog/latest.ts, the one answer to `latest`) and read as every command trusts a backup
 * (catalog/trusted-read.ts, as verify reads it): whatever verify would call a problem refuses the restore. Its manifest
 * is read once (the Preflight hands it to the restore's later steps: control plane, volumes), and its volume and
 * control-plane files are compared with their index. With a key, nothing of the archive is trusted before the
 * manifest's HMAC is: a forger recomputes every sha256.
 */
export async function readTrustedManifest(store: BackupStore, requested: string, trust: Trust, warnings: string[]): Promise<TrustedManifest> {
  try {
    refuseAllowWithLatest(requested, trust);
  } catch (error) {
    throw new RestoreInputError((error as Error).message);
  }
  const resolved = await resolveBackupId(store, requested, { encryptionKey: trust.encryptionKey, doing: 'restore' }).catch((error: unknown) => {
    throw NoWholeBackupError.isInstance(error) ? new RestoreInputError(error.message) : error;
  });
  warnings.push(...resolved.notes);
  const backupId = resolved.id;
  const trusted = await readTrustedBackup(store, backupId, trust, 'restored', resolved.marker).catch((error: unknown) => {
    throw BackupPhaseError.isInstance(error) ? new RestoreInputError(`Backup ${backupId} cannot be restored: ${error.message}.`) : error;
  });
  const { marker, read, manifest } = trusted;
  if (marker.state === 'absent') throw new RestoreInputError(`There is no complete backup ${backupId} in ${store.url('backups/')}; list-backups shows the ones that exist.`);
  if (marker.state === 'invalid') throw new RestoreInputError(`Backup ${backupId} cannot be restored: its velero-backup.json is unusable (${marker.reason}).`);
  // the phase's word was said by `latest` already when it chose the backup
  if (trusted.phaseWarning && requested !== 'latest') warnings.push(trusted.phaseWarning);
  if (read.state === 'invalid') throw new RestoreRefusedError(`Backup ${backupId} cannot be restored: its manifest is unusable (${read.reason}).`, [`manifest: ${read.reason}`]);
  if (read.state === 'present' && read.changed) {
    throw new RestoreRefusedError(`Backup ${backupId} cannot be restored: its manifest was changed after the backup was committed (${read.changed}).`, [`manifest: ${read.changed}`]);
  }
  if (trusted.refusal) throw new RestoreRefusedError(trusted.refusal.message, [trusted.refusal.message]);
  const { authentication } = trusted;
  if (authentication.state === 'unauthenticated-allowed') warnings.push(`Backup ${backupId} is ${authentication.note}.`);
  // what is left is a marker that disagrees with the manifest: rewritten after the commit, so verify calls it corrupt
  if (trusted.problems.length > 0) {
    const offenders = trusted.problems.map((p) => p.message.replace(/\.$/, ''));
    throw new RestoreRefusedError(`Backup ${backupId} was refused and nothing was restored: ${listOf(offenders, 10)}.`, offenders);
  }
  // The volume and control-plane files are written by Jobs straight from the bucket: compared with the backup's index
  // here, before anything is written, as no later step would notice one that was changed.
  const dataProblems = manifest ? await checkDataFiles(store, backupId, manifest) : [];
  if (dataProblems.length > 0) {
    const offenders = dataProblems.map((p) => p.message.replace(/\.$/, ''));
    throw new RestoreRefusedError(`Backup ${backupId} was refused and nothing was restored: its volume or control-plane files differ from the ones it was made with (${listOf(offenders, 10)}).`, offenders);
  }
  if (manifest?.encryption && !manifest.encryption.binding) {
    warnings.push(`Backup ${backupId} was sealed without binding (an older backup): its sealed values are not tied to their Secret or backup.`);
  }
  if (!manifest) warnings.push(`Backup ${backupId} has no kubeflow-upgrader manifest (a foreign Velero backup?): nothing in it could be verified against checksums.`);
  return { backupId, read, manifest, authentication };
}
