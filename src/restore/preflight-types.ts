// What the preflight hands the restore: the steps it spooled, what it left out and why, and the backup it read. Typed
// apart from the preflight so that its parts (archive-scan.ts, trusted-backup.ts) and the restore's (planner, scheduler,
// writer) share them without importing the preflight itself.
import type { ApiResource, KubeObject } from '../kube/types.ts';
import type { SecretOpener, Manifest } from '../archive/index.ts';
import type { AuthenticationOutcome } from '../archive/authenticate.ts';
import type { RestoreCategory } from '../kubeflow/restore-selection.ts';
import type { ResourceFilter } from '../kubeflow/resource-filters.ts';
import type { RestoreRequest } from './request.ts';
import type { ProgressSink } from '../steps.ts';
import type { Spool } from './spool.ts';

/** The part of the restore's request the preflight reads: passed whole, never copied field by field. */
export type PreflightRequest = Pick<RestoreRequest, 'backupId' | 'profiles' | 'namespaces' | 'trust' | 'protectedNamespaces' | 'skipRefused' | 'skipUnserved' | 'dryRun'>;

/** What the engine derives from the request before the preflight: the parsed filters and its progress line. */
export interface PreflightInputs {
  /** `include-resources` / `exclude-resources`: objects filtered out are skipped, never written */
  filter?: ResourceFilter;
  progress?: ProgressSink;
}

/** One restore step: the objects of one resource, spooled, and the target resource they are written through. */
export interface SpooledStep {
  key: string;
  group: string;
  resource: string;
  /** as the target serves it, at the version the archive's objects carry (or the one they are mapped to) */
  target: ApiResource;
  count: number;
  /** the version the archive's objects carry, when the target serves them through another one (`target.version`) */
  archivedVersion?: string;
}

/** archived objects of a kind and version the target does not serve at all */
export interface UnservedStep {
  /** `<resource>[.<group>]/<version>` */
  what: string;
  key: string;
  spoolKey: string;
  count: number;
}

export interface SkippedItem {
  key: string;
  namespace: string;
  kind: string;
  /** the object's name, so that the results name what was left out (absent for a Namespace: its namespace says it) */
  name?: string;
  /** why it is left out, as data (restore-selection.ts) */
  category: RestoreCategory;
  /** the sentence the results give (`refused: …` for what the allow-list refuses) */
  reason: string;
  /** set for the KFP recurring runs, which the results list by name */
  recurringRun?: string;
}

export interface Preflight {
  backupId: string;
  manifest: Manifest | null;
  /** what the HMAC check found (not checked without a key) */
  authentication: AuthenticationOutcome;
  warnings: string[];
  /** the archived Profiles chosen, in name order */
  profiles: KubeObject[];
  profileResource: ApiResource | undefined;
  /** the namespaces whose objects are restored */
  namespaces: Set<string>;
  /** namespaced steps in restore order */
  steps: SpooledStep[];
  /** with tolerateUnserved: the kinds and versions left out because the target serves no version of them */
  unserved: UnservedStep[];
  /** `<resource>[.<group>] <archived version> → <served version>` for each kind restored through another version */
  mappings: string[];
  /** archived objects that are never written (controller-made, filtered out, or refused with skip-refused), with the reason */
  skipped: SkippedItem[];
  /** with skip-refused: every item the allow-list refused, described with its reason (empty otherwise) */
  refused: string[];
  opener: SecretOpener | undefined;
  spool: Spool;
  objectsChecked: number;
  /** archived uids that some restored object names in its ownerReferences: the only uids worth relinking */
  ownerUids: Set<string>;
  /** every spooled PVC that names a storage class, in spool order: what the storage-class review reads, without the spool */
  pvcClasses: PvcClass[];
}

export interface PvcClass {
  namespace: string;
  name: string;
  storageClass: string;
}
