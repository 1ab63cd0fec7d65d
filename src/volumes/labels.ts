// Labels and names that tie every Job and Secret of a run to its backup id, so leftovers can be found and removed.
import { createHmac, hkdfSync } from 'node:crypto';

export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_BACKUP_ID = 'kubeflow-upgrader/backup-id';
export const LABEL_OPERATION = 'kubeflow-upgrader/operation';
/** PVC names may be longer than a label value allows, so the full name (of the PVC whose data a mover moves) goes into an annotation. */
export const ANNOTATION_PVC = 'kubeflow-upgrader/pvc';

export const MANAGED_BY = 'kubeflow-upgrader';
export const COMPONENT = 'volume-mover';

export type MoveOperation = 'backup' | 'restore';

/** 'prune': a restic repository's prune Job (src/volumes/restic/prune.ts), labelled like the movers so leftovers are found alike. */
export function moverLabels(backupId: string, operation: MoveOperation | 'prune'): Record<string, string> {
  return {
    [LABEL_MANAGED_BY]: MANAGED_BY,
    [LABEL_COMPONENT]: COMPONENT,
    [LABEL_BACKUP_ID]: backupId,
    [LABEL_OPERATION]: operation,
  };
}

/** Selects every mover object of one backup id (both operations), or of all runs when the id is omitted. */
export function moverSelector(backupId?: string): string {
  const base = `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_COMPONENT}=${COMPONENT}`;
  return backupId ? `${base},${LABEL_BACKUP_ID}=${backupId}` : base;
}

/**
 * The key the movers' names are made with: derived from the bucket's secret key, which the run holds and no profile
 * user does, so a user who may create Jobs in their namespace cannot know a mover's name before the run makes it (and
 * so cannot lie in wait for it under that name), while a rerun with the same credentials finds the same names.
 */
export function moverNameKey(bucketSecretKey: string): Buffer {
  return Buffer.from(hkdfSync('sha256', bucketSecretKey, 'kubeflow-upgrader', 'kubeflow-upgrader mover names v1', 32));
}

function keyedHash(key: Buffer, text: string, length: number): string {
  return createHmac('sha256', key).update(text).digest('hex').slice(0, length);
}

/**
 * A Job name within 63 characters (Pods carry it in the `job-name` label), the same on every run for one PVC of one
 * backup: a rerun after a crash finds the Job the killed run left still copying and waits for it instead of starting a
 * second copy into the same volume. Keyed (moverNameKey): nobody without the bucket's key can predict it.
 */
export function moverJobName(operation: MoveOperation, backupId: string, namespace: string, pvc: string, nameKey: Buffer): string {
  return `kfu-${operation}-${keyedHash(nameKey, `${backupId}/${namespace}/${pvc}`, 16)}`;
}

/** One credentials Secret per namespace and run of a backup id; a rerun replaces it (the keys may have rotated). */
export function moverSecretName(operation: MoveOperation, backupId: string, nameKey: Buffer): string {
  return `kfu-${operation}-creds-${keyedHash(nameKey, backupId, 12)}`;
}

/**
 * The credentials Secret of a mover that runs outside its PVC's namespace (in the model's: a backup from a snapshot,
 * src/volumes/snapshot; a restore by hand-over, src/volumes/rebind.ts): one per namespace whose data such movers move,
 * each holding that namespace's access only, named apart by that namespace.
 */
export function placedMoverSecretName(operation: MoveOperation, backupId: string, nameKey: Buffer, namespace: string): string {
  return `${moverSecretName(operation, backupId, nameKey)}-${keyedHash(nameKey, `secret/${namespace}`, 10)}`;
}
