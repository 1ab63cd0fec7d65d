// KFAM contributors: a RoleBinding and an Istio AuthorizationPolicy of the same name per (user, role), named from the
// e-mail address (kubeflow.md). They carry no ownerReference: they are user state.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

export type ContributorRole = 'edit' | 'view';

/** `alice@example.com`, `edit` → `user-alice-example-com-clusterrole-edit` */
export function contributorBindingName(email: string, role: ContributorRole): string {
  return `User-${email.replace(/[^a-zA-Z0-9]+/g, '-')}-ClusterRole-${role}`.toLowerCase();
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
