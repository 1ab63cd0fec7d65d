// verify-backup: reads a backup whole, as every command trusts one (trusted-read.ts), and reports what it finds; it
// tolerates whatever is in the bucket. list-backups' reading is listing.ts, `latest` is latest.ts.
import { createHash } from 'node:crypto';
import type { BackupStore } from '../store/backup-store.ts';
import type { ControlPlaneEntry, VolumeEntry } from '../archive/manifest.ts';
import { readTrustedBackup } from './trusted-read.ts';
import type { Problem } from '../archive/reader.ts';
import { readItems } from './read-items.ts';
import type { AuthenticationOutcome, Trust } from '../archive/authenticate.ts';
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
  const trusted = await readTrustedBackup(store, id, trust, 'verified');
  if (trusted.refusal) throw trusted.refusal;
  const { read, manifest, authentication } = trusted;
  const problems: Problem[] = [...trusted.problems];
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

// list-backups' reading, for the commands that import it with verify
export { listBackups, describeBackup, markerDisagreement, type BackupListing, type ListedAuthentication, type ListOptions } from './listing.ts';
