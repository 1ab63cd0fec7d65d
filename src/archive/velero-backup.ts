// velero-backup.json: the Velero Backup object that marks a backup as complete (Velero's sync and our list both
// treat a folder without it as not existing), plus the tolerant reader for markers written by Velero itself.
import { z } from 'zod';
import { VELERO_FORMAT_VERSION } from './paths.ts';
import { MANIFEST_HMAC_ANNOTATION } from './authenticate.ts';
import { KfuError } from '../errors/index.ts';

export const MARKER_FILE = 'velero-backup.json';
/** The manifest's own sha256, recorded in the marker (written after it), so a changed manifest is found. */
export const MANIFEST_SHA256_ANNOTATION = 'kubeflow-upgrader.io/manifest-sha256';

export interface MarkerInput {
  id: string;
  started: Date;
  completed: Date;
  namespaces: string[];
  items: number;
  errors: number;
  warnings: number;
  storageLocation: string;
  toolVersion: string;
  manifestSha256?: string;
  /** with an encryption key: the manifest's HMAC (authenticate.ts), as an annotation because Velero keeps those */
  manifestHmac?: string | undefined;
}

/**
 * The Backup object as Velero 1.x writes it for a completed backup, without a TTL or an expiration: Velero's garbage
 * collection deletes a synced backup (volumes, control-plane copies and all) once `status.expiration` has passed, and
 * passes over one that has none (vmware-tanzu/velero pkg/controller/gc_controller.go). `prune-backups` decides how
 * long our backups live.
 */
export function veleroBackupObject(input: MarkerInput) {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: {
      name: input.id,
      namespace: 'velero',
      labels: { 'velero.io/storage-location': input.storageLocation },
      annotations: {
        'kubeflow-upgrader.io/tool-version': input.toolVersion,
        ...(input.manifestSha256 ? { [MANIFEST_SHA256_ANNOTATION]: input.manifestSha256 } : {}),
        ...(input.manifestHmac ? { [MANIFEST_HMAC_ANNOTATION]: input.manifestHmac } : {}),
      },
      creationTimestamp: rfc3339(input.started),
    },
    spec: {
      includedNamespaces: input.namespaces.length ? input.namespaces : ['*'],
      storageLocation: input.storageLocation,
      snapshotVolumes: false,
      defaultVolumesToFsBackup: false,
    },
    status: {
      version: 1,
      formatVersion: VELERO_FORMAT_VERSION,
      phase: input.errors > 0 ? 'PartiallyFailed' : 'Completed',
      startTimestamp: rfc3339(input.started),
      completionTimestamp: rfc3339(input.completed),
      progress: { totalItems: input.items, itemsBackedUp: input.items },
      errors: input.errors,
      warnings: input.warnings,
    },
  };
}

/** A time as Kubernetes writes one (apimachinery's metav1.Time): RFC 3339 in UTC, whole seconds. */
function rfc3339(time: Date): string {
  return time.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Only what we need from any marker, ours or Velero's; everything else is passed through. */
export const MarkerSchema = z.looseObject({
  kind: z.literal('Backup'),
  metadata: z.looseObject({ name: z.string() }),
  status: z
    .looseObject({
      phase: z.string().optional(),
      formatVersion: z.string().optional(),
      startTimestamp: z.string().optional(),
      completionTimestamp: z.string().optional(),
      expiration: z.string().optional(),
      progress: z.looseObject({ itemsBackedUp: z.number().optional() }).optional(),
    })
    .default({}),
});
export type Marker = z.infer<typeof MarkerSchema>;

/** The phases of a whole backup (vmware-tanzu/velero pkg/apis/velero/v1/backup_types.go). */
const WHOLE_PHASES: readonly string[] = ['Completed', 'PartiallyFailed'];

/**
 * Whether a backup may be restored or verified, by the phase its marker records. Since v1.11 Velero uploads
 * velero-backup.json while a backup is still WaitingForPluginOperations or Finalizing, and when it Failed
 * (vmware-tanzu/velero pkg/controller/backup_controller.go): the marker's presence alone does not make it whole.
 * `reason` is a clause for "Backup <id> cannot be …: <reason>."; `warning` a sentence of its own.
 */
export type PhaseVerdict = { whole: true; warning: string | undefined } | { whole: false; reason: string };

export function judgePhase(id: string, phase: string | undefined): PhaseVerdict {
  if (phase === 'Completed') return { whole: true, warning: undefined };
  if (phase === 'PartiallyFailed') {
    return { whole: true, warning: `Backup ${id} is PartiallyFailed: errors were logged while it was made (see ${id}-results.gz), so some objects may be missing from it.` };
  }
  const said = phase ? `phase ${phase}` : 'no phase';
  return { whole: false, reason: `its velero-backup.json says ${said}, and only a ${WHOLE_PHASES.join(' or ')} backup is whole` };
}

/** A backup whose marker's phase says it is unfinished or failed; the message is the clause of `judgePhase`. */
export class BackupPhaseError extends KfuError {
  static override readonly errorId = 'BackupPhaseError';
  constructor(sentence: string) {
    super(sentence, { kind: 'refused' });
  }
}
