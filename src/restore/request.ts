// What a restore is asked to do: the one request the charm's action and the CLI's command build, which the engine
// runs and hands whole to its preflight (which reads the part it needs, preflight.ts PreflightRequest). Typed here,
// under both, so that neither copies it field by field into another.
import type { Trust } from '../archive/authenticate.ts';
import type { Wording } from '../errors/remedy.ts';
import type { ProgressSink, RestoreControlPlaneStep, RestoreVolumeStep } from '../steps.ts';

export type ConflictPolicy = 'skip' | 'update' | 'fail';

export interface RestoreRequest {
  /** an id from list-backups, or `latest` */
  backupId: string;
  profiles?: readonly string[];
  namespaces?: readonly string[];
  conflictPolicy?: ConflictPolicy;
  dryRun?: boolean;
  includeVolumes?: boolean;
  /** the key the backup is authenticated and its Secrets opened with, and what the user allows without its proof */
  trust?: Trust;
  /** how long to wait for the profile controller (`restore-wait-timeout`) */
  waitTimeoutMs?: number;
  /** namespaces no archived Profile may claim (the charm's model), on top of the system ones */
  protectedNamespaces?: readonly string[];
  /** restore everything the allow-list accepts and list the rest in `refused`, instead of refusing the whole backup */
  skipRefused?: boolean;
  /** restore every kind the target serves and name the ones it serves in no version, instead of refusing the backup */
  skipUnserved?: boolean;
  /** `include-resources` / `exclude-resources` (comma lists, as for backup): what they leave out is skipped */
  includeResources?: readonly string[];
  excludeResources?: readonly string[];
  /** `old=new,old2=new2`: the storage class restored PVCs ask for instead (src/kubeflow/storage-classes.ts) */
  storageClassMap?: string;
  volumes?: RestoreVolumeStep;
  controlPlane?: RestoreControlPlaneStep;
  progress?: ProgressSink;
  /** how often a progress line goes out while the restore runs */
  progressIntervalMs?: number;
  /** how the edge words the settings a sentence names (src/errors/remedy.ts); neutral words without it */
  wording?: Wording;
}
