// The backup's decision for one object: kept as user state, or left out, with the category (data, so that no caller
// reads it back out of the sentence) and the sentence the backup records. The counterpart of restore-selection.ts.
import type { KubeObject } from '../kube/types.ts';
import { roleBindingRefusal } from './allow-list.ts';
import { isContributorObject } from './contributors.ts';
import { generatedReason } from './generated.ts';
import { groupOf } from './identity.ts';
import { isProfileResource } from './kinds.ts';
import { reservedProfileReason } from './profile-namespaces.ts';
import { filteredOutReason, type ResourceFilter } from './resource-filters.ts';
import { runtimeKindOfObject } from './runtime-kinds.ts';

/** why an object is kept */
export type KeptCategory =
  /** a Profile */
  | 'profile'
  /** an object of a profile namespace being backed up */
  | 'state';

/** why an object is left out */
export type LeftOutCategory =
  /** cluster-scoped, and only Profiles are state there */
  | 'cluster-scoped'
  /** a kind of the runtime (Pods, Events, ...: runtime-kinds.ts) */
  | 'runtime'
  /** left out by include-resources / exclude-resources */
  | 'filtered'
  /** a Profile not asked for, or an object of a namespace not backed up */
  | 'out-of-scope'
  /** refused as the restore's allow-list would: a Profile named after a system or protected namespace */
  | 'reserved-profile'
  /** refused as the restore's allow-list would: a RoleBinding granting more than an owner may */
  | 'not-allowed'
  /** made by a controller (generated.ts) */
  | 'generated'
  /** snapshot-profiles keeps Profiles and KFAM contributors only */
  | 'not-a-contributor';

/**
 * `reason` is the sentence the backup records for the object (its results and the archive's leftOutObjects), its label
 * first; a refused object also carries the allow-list's `refusal` alone, for the warning that names it.
 */
export type BackupDecision =
  | { keep: true; category: KeptCategory; reason: string }
  | { keep: false; category: Exclude<LeftOutCategory, 'reserved-profile' | 'not-allowed'>; reason: string }
  | { keep: false; category: 'reserved-profile' | 'not-allowed'; reason: string; refusal: string };

/** the word a backup counts each left-out category under (its results' skippedBy, the archive's `skipped`) */
export const leftOutTally: Readonly<Record<LeftOutCategory, string>> = {
  'cluster-scoped': 'not state',
  runtime: 'not state',
  filtered: 'filtered',
  'out-of-scope': 'out of scope',
  'reserved-profile': 'refused',
  'not-allowed': 'refused',
  generated: 'generated',
  'not-a-contributor': 'not a contributor',
};

export interface BackupScope {
  /** namespaces to back up: the profile namespaces (or the ones the user asked for among them) */
  namespaces: ReadonlySet<string>;
  /** Profiles to back up; undefined means every Profile */
  profiles?: ReadonlySet<string>;
  filter?: ResourceFilter;
  /** the ClusterRoles an owner may bind on the cluster (bindable-roles.ts); without it, the fixed ones */
  bindableRoles?: ReadonlySet<string>;
  /** snapshot-profiles: keep Profiles and the two halves of each KFAM contributor, nothing else */
  contributorsOnly?: boolean;
}

/**
 * `resource` is the plural the object was listed through, for include/exclude-resources; without it (an object
 * judged on its own) the filter matches by kind.
 */
export function backupDecision(object: KubeObject, scope: BackupScope, resource?: string): BackupDecision {
  const group = groupOf(object.apiVersion);
  const isProfile = !object.metadata.namespace && isProfileResource({ group, resource: resource ?? (object.kind === 'Profile' ? 'profiles' : '') });
  if (!isProfile && !object.metadata.namespace) {
    return { keep: false, category: 'cluster-scoped', reason: `not state: ${object.kind} (${object.apiVersion}) is cluster-scoped, and only Profiles are state there` };
  }
  const runtime = runtimeKindOfObject(object);
  if (runtime) return { keep: false, category: 'runtime', reason: `not state: ${runtime.why}` };
  // Profiles are never filtered out: their namespaces (and so everything in them) exist only through them, and an
  // archive of namespaces without their Profiles is one no restore can use.
  const filtered = !isProfile && scope.filter && filteredOutReason(scope.filter, { group, resource: resource ?? '', kind: object.kind });
  if (filtered) return { keep: false, category: 'filtered', reason: filtered };
  const namespace = object.metadata.namespace;
  if (isProfile && scope.profiles && !scope.profiles.has(object.metadata.name!)) {
    return { keep: false, category: 'out-of-scope', reason: `out of scope: Profile ${object.metadata.name} was not asked for` };
  }
  if (!isProfile && !scope.namespaces.has(namespace!)) {
    return { keep: false, category: 'out-of-scope', reason: `out of scope: namespace ${namespace} is not a profile namespace being backed up` };
  }
  // What the restore's allow-list refuses, the backup leaves out: a backup must always be restorable.
  const reserved = isProfile ? reservedProfileReason(object.metadata.name!) : undefined;
  if (reserved) return { keep: false, category: 'reserved-profile', reason: `refused: ${reserved}`, refusal: reserved };
  const refused = roleBindingRefusal(object, scope.bindableRoles);
  if (refused) return { keep: false, category: 'not-allowed', reason: `refused: ${refused}`, refusal: refused };
  const generated = generatedReason(object);
  if (generated) return { keep: false, category: 'generated', reason: generated };
  if (scope.contributorsOnly && !isProfile && !isContributorObject(object)) {
    return { keep: false, category: 'not-a-contributor', reason: 'not a contributor: snapshot-profiles keeps Profiles and KFAM contributors only' };
  }
  return isProfile
    ? { keep: true, category: 'profile', reason: 'state: Profile' }
    : { keep: true, category: 'state', reason: `state: ${object.kind} in profile namespace ${namespace}` };
}
