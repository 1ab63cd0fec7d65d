// The backup's decision for one object, with its reason: kept as user state, or left out and why.
import type { KubeObject } from '../kube/types.ts';
import { roleBindingRefusal } from './allow-list.ts';
import { generatedReason } from './generated.ts';
import { groupOf } from './identity.ts';
import { isProfileResource } from './kinds.ts';
import { reservedProfileReason } from './profile-namespaces.ts';
import { filteredOutReason, type ResourceFilter } from './resource-filters.ts';
import { runtimeKindOfObject } from './runtime-kinds.ts';

export type BackupDecision = { keep: true; reason: string } | { keep: false; reason: string };

export interface BackupScope {
  /** namespaces to back up: the profile namespaces (or the ones the user asked for among them) */
  namespaces: ReadonlySet<string>;
  /** Profiles to back up; undefined means every Profile */
  profiles?: ReadonlySet<string>;
  filter?: ResourceFilter;
  /** the ClusterRoles an owner may bind on the cluster (bindable-roles.ts); without it, the fixed ones */
  bindableRoles?: ReadonlySet<string>;
}

/**
 * `resource` is the plural the object was listed through, for include/exclude-resources; without it (an object
 * judged on its own) the filter matches by kind.
 */
export function backupDecision(object: KubeObject, scope: BackupScope, resource?: string): BackupDecision {
  const group = groupOf(object.apiVersion);
  const isProfile = !object.metadata.namespace && isProfileResource({ group, resource: resource ?? (object.kind === 'Profile' ? 'profiles' : '') });
  if (!isProfile && !object.metadata.namespace) {
    return { keep: false, reason: `not state: ${object.kind} (${object.apiVersion}) is cluster-scoped, and only Profiles are state there` };
  }
  const runtime = runtimeKindOfObject(object);
  if (runtime) return { keep: false, reason: `not state: ${runtime.why}` };
  // Profiles are never filtered out: their namespaces (and so everything in them) exist only through them, and an
  // archive of namespaces without their Profiles is one no restore can use.
  const filtered = !isProfile && scope.filter && filteredOutReason(scope.filter, { group, resource: resource ?? '', kind: object.kind });
  if (filtered) return { keep: false, reason: filtered };
  const namespace = object.metadata.namespace;
  if (isProfile && scope.profiles && !scope.profiles.has(object.metadata.name!)) {
    return { keep: false, reason: `out of scope: Profile ${object.metadata.name} was not asked for` };
  }
  if (!isProfile && !scope.namespaces.has(namespace!)) {
    return { keep: false, reason: `out of scope: namespace ${namespace} is not a profile namespace being backed up` };
  }
  // What the restore's allow-list refuses, the backup leaves out: a backup must always be restorable.
  const reserved = isProfile ? reservedProfileReason(object.metadata.name!) : undefined;
  if (reserved) return { keep: false, reason: `refused: ${reserved}` };
  const refused = roleBindingRefusal(object, scope.bindableRoles);
  if (refused) return { keep: false, reason: `refused: ${refused}` };
  const generated = generatedReason(object);
  if (generated) return { keep: false, reason: generated };
  return { keep: true, reason: isProfile ? 'state: Profile' : `state: ${object.kind} in profile namespace ${namespace}` };
}
