// The restore's decision for one archived object, the counterpart of backup-selection.ts: written, skipped (with the
// reason the results name), or refused (the allow-list's reason, which refuses the whole restore unless skip-refused
// leaves it out). The verdict and the category are data, so that no caller reads them back out of the sentence.
//
// The allow-list's namespace rule needs every profile namespace of the archive, which a restore streaming the archive
// knows only at its end: `restoreDecision` applies every other rule to each object as it arrives, and
// `namespaceDecision` applies the namespace rule (allow-list.ts `namespaceRefusal`) to each namespace once the
// archive's Profiles are all read.
import type { KubeObject } from '../kube/types.ts';
import { namespaceRefusal, objectRefusal } from './allow-list.ts';
import { clusterSuppliedReason } from './cluster-supplied.ts';
import { finishedJobReason } from './finished-jobs.ts';
import { generatedReason } from './generated.ts';
import { groupOf } from './identity.ts';
import { reservedProfileReason } from './profile-namespaces.ts';
import { isRecurringRun, recurringRunReason } from './recurring-runs.ts';
import { filteredOutReason, type ResourceFilter } from './resource-filters.ts';

export type RestoreVerdict = 'restore' | 'skip' | 'refuse';

/** why, as data: what the results count and list an item under */
export type RestoreCategory =
  /** restore: a Profile, judged against the other profile namespaces only by the namespace rule of its objects */
  | 'profile'
  /** restore: an object in a namespace (subject to `namespaceDecision` for that namespace) */
  | 'state'
  /** skip: a Namespace object, which the profile controller makes from its Profile */
  | 'namespace'
  /** skip: a CRD or PV a Velero archive carries, which the target supplies itself (cluster-supplied.ts) */
  | 'cluster-supplied'
  /** skip: left out by include-resources / exclude-resources */
  | 'filtered'
  /** skip: made by a controller (generated.ts) */
  | 'generated'
  /** skip: a KFP recurring run, which only KFP can make (recurring-runs.ts); the results list it by name */
  | 'recurring-run'
  /** skip: a batch Job that had finished, which created again would run again (finished-jobs.ts) */
  | 'finished-job'
  /** refuse: a rule of the allow-list (admission configuration, cluster scope, a RoleBinding granting too much) */
  | 'not-allowed'
  /** refuse: a Profile named after a system or protected namespace */
  | 'reserved-profile'
  /** refuse: an object of a namespace whose Profile the archive does not hold */
  | 'no-profile';

export interface RestoreDecision {
  verdict: RestoreVerdict;
  category: RestoreCategory;
  /** one sentence fragment, without any label: the verdict and category say what it is */
  reason: string;
}

export interface RestoreScope {
  /** namespaces no archived Profile may claim (the charm's model), on top of the system ones */
  protectedNamespaces?: ReadonlySet<string>;
  /** the ClusterRoles an owner may bind on the target (bindable-roles.ts); without it, the fixed ones */
  bindableRoles?: ReadonlySet<string>;
  filter?: ResourceFilter;
}

const decide = (verdict: RestoreVerdict, category: RestoreCategory, reason: string): RestoreDecision => ({ verdict, category, reason });

/**
 * Every rule but the namespace one, in the order the restore has always applied them. `resource` is the plural the
 * archive files the object under, for include/exclude-resources.
 */
export function restoreDecision(object: KubeObject, resource: string, scope: RestoreScope = {}): RestoreDecision {
  const group = groupOf(object.apiVersion);
  const namespace = object.metadata.namespace;
  const name = object.metadata.name ?? '';
  // A foreign Velero archive carries the Namespace objects: the profile controller makes those.
  if (group === '' && object.kind === 'Namespace' && !namespace) {
    return decide('skip', 'namespace', 'namespaces are made by the profile controller from their Profile');
  }
  const supplied = clusterSuppliedReason(object);
  if (supplied) return decide('skip', 'cluster-supplied', supplied);
  const refusal = objectRefusal(object, scope.bindableRoles);
  if (refusal) return decide('refuse', 'not-allowed', refusal);
  if (!namespace) {
    const reserved = reservedProfileReason(name, scope.protectedNamespaces);
    if (reserved) return decide('refuse', 'reserved-profile', reserved);
    return decide('restore', 'profile', `Profile ${name}`);
  }
  // Profiles are never filtered: a namespace exists only through its Profile (as on the backup side).
  const filtered = scope.filter && filteredOutReason(scope.filter, { group, resource, kind: object.kind });
  if (filtered) return decide('skip', 'filtered', filtered);
  const generated = generatedReason(object);
  if (generated) return decide('skip', 'generated', generated);
  if (isRecurringRun(object)) return decide('skip', 'recurring-run', recurringRunReason);
  const finished = finishedJobReason(object);
  if (finished) return decide('skip', 'finished-job', finished);
  return decide('restore', 'state', `${object.kind} in namespace ${namespace}`);
}

/**
 * The namespace rule for every object of `namespace` (a Namespace object counts by its name): refused when the
 * archive holds no Profile of that name, restored otherwise.
 */
export function namespaceDecision(namespace: string, archivedProfiles: ReadonlySet<string>): RestoreDecision {
  const refusal = namespaceRefusal(namespace, archivedProfiles, ' in this backup');
  if (refusal) return decide('refuse', 'no-profile', refusal);
  return decide('restore', 'state', `namespace ${namespace} has its Profile in this backup`);
}

/** the namespace whose Profile an archived object needs: its own, or a Namespace object's name; none for cluster scope */
export function namespaceOf(object: KubeObject, decision: RestoreDecision): string | undefined {
  if (decision.category === 'namespace') return object.metadata.name ?? '';
  return decision.verdict === 'refuse' ? undefined : object.metadata.namespace;
}
