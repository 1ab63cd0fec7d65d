// KFAM contributors: a RoleBinding and an Istio AuthorizationPolicy of the same name per (user, role), named from the
// e-mail address (kubeflow/kubeflow components/access-management/kfam/bindings.go: BindingClient.Create names both by
// getBindingName). They carry no ownerReference: they are user state.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

export type ContributorRole = 'edit' | 'view';

/** a run of anything but ASCII letters and digits: KFAM's `[^a-zA-Z0-9]+` (kubeflow/kubeflow kfam/bindings.go) */
const notAlphanumeric = /[^a-zA-Z0-9]+/g;

/**
 * The name KFAM gives a contributor's RoleBinding and AuthorizationPolicy, by getBindingName in kubeflow/kubeflow
 * v1.10.0 components/access-management/kfam/bindings.go: the user's name with every run of non-alphanumerics turned
 * into `-`, joined with `-` to the subject kind, the roleRef kind and the role, lower-cased, and then every run of
 * non-alphanumerics turned into one `-` again. The second pass is why `-bob-@x.io` gives `user-bob-x-io-…` and not
 * `user--bob-x-io-…`. (The URL escaping between the two passes never changes a name made only of [a-zA-Z0-9-].)
 * JavaScript matches UTF-16 code units where Go matches runes; both only ever replace whole runs, so they agree.
 */
export function contributorBindingName(email: string, role: ContributorRole, subjectKind = 'User'): string {
  const raw = [subjectKind, email.replace(notAlphanumeric, '-'), 'ClusterRole', role].join('-').toLowerCase();
  return raw.replace(notAlphanumeric, '-');
}

/** a RoleBinding or AuthorizationPolicy that KFAM made for a contributor */
export function isContributorObject(object: KubeObject): boolean {
  const group = groupOf(object.apiVersion);
  const isBinding = group === 'rbac.authorization.k8s.io' && object.kind === 'RoleBinding';
  const isPolicy = group === 'security.istio.io' && object.kind === 'AuthorizationPolicy';
  if (!isBinding && !isPolicy) return false;
  const user = object.metadata.annotations?.user;
  const role = object.metadata.annotations?.role;
  if (!user || (role !== 'edit' && role !== 'view')) return false;
  return object.metadata.name === contributorBindingName(user, role);
}
