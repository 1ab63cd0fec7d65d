// What a restore may write, whatever the archive says (ours or a foreign one): nothing cluster-scoped but Profiles,
// nothing outside profile namespaces, no admission configuration, and no RoleBinding that grants more than a profile
// owner already holds. Each rule answers with the reason it refuses (a sentence without any `refused:` label: the
// caller knows it is a refusal), or undefined. The backup applies the same rules, so that it never writes what its own
// restore would refuse. The namespace rule needs every profile namespace; a restore that streams an archive knows them
// only at its end, so it judges each object by `objectRefusal` as it arrives and each namespace by `namespaceRefusal`
// once the archive's Profiles are all read (restore-selection.ts).
import type { KubeObject } from '../kube/types.ts';
import { describeObject, groupOf } from './identity.ts';
import { noProfileReason } from './profile-namespaces.ts';

/**
 * ClusterRoles a RoleBinding in a profile namespace may name. The profile controller binds the owner to
 * kubeflow-admin (kubeflow/kubeflow v1.10.0 components/profile-controller/controllers/profile_controller.go,
 * RoleBinding namespaceAdmin), and kubeflow-admin aggregates Kubernetes' own `admin`, which in turn aggregates `edit`
 * and `view`: an owner may bind anyone in their namespace to any of these, so such bindings are ordinary user state.
 */
export const bindableClusterRoles: readonly string[] = ['admin', 'edit', 'view', 'kubeflow-admin', 'kubeflow-edit', 'kubeflow-view'];

const admissionGroups = new Set(['admissionregistration.k8s.io']);
const admissionKinds = new Set([
  'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding',
]);

export function admissionRefusal(object: KubeObject): string | undefined {
  if (admissionGroups.has(groupOf(object.apiVersion)) || admissionKinds.has(object.kind)) {
    return `${describeObject(object)} is admission configuration, which a restore never writes`;
  }
  return undefined;
}

export function clusterScopeRefusal(object: KubeObject): string | undefined {
  if (object.metadata.namespace) return undefined;
  if (object.kind === 'Profile' && groupOf(object.apiVersion) === 'kubeflow.org') return undefined;
  return `${describeObject(object)} is cluster-scoped and only Profiles are restored at cluster scope`;
}

/**
 * The namespace rule, for every object of `namespace` at once: nothing is written into a namespace that is not a
 * profile namespace, since only the profile controller makes one, from its Profile. `where` says where the Profiles
 * were looked for (` in this backup`). Undefined for a profile namespace and for cluster scope (no namespace).
 */
export function namespaceRefusal(namespace: string | undefined, profileNamespaces: ReadonlySet<string>, where = ''): string | undefined {
  if (!namespace || profileNamespaces.has(namespace)) return undefined;
  return noProfileReason(namespace, where);
}

/**
 * `bindable`: the ClusterRoles an owner may bind on this cluster (bindable-roles.ts reads them: these six and every
 * ClusterRole aggregated into them); without it, these six.
 */
export function roleBindingRefusal(object: KubeObject, bindable: ReadonlySet<string> = new Set(bindableClusterRoles)): string | undefined {
  if (object.kind !== 'RoleBinding' || groupOf(object.apiVersion) !== 'rbac.authorization.k8s.io') return undefined;
  const roleRef = object.roleRef as { kind?: string; name?: string } | undefined;
  // A RoleBinding's Role is always one of its own namespace: it grants nothing beyond that namespace.
  if (roleRef?.kind === 'Role') return undefined;
  if (roleRef?.kind === 'ClusterRole' && roleRef.name && bindable.has(roleRef.name)) return undefined;
  return `${describeObject(object)} binds ${roleRef?.kind ?? 'an unknown role kind'} ${roleRef?.name ?? ''}`.trimEnd()
    + `; only ${bindableClusterRoles.join(', ')} and the ClusterRoles aggregated into them may be bound`;
}

/** the rules an object is judged by on its own: every rule but the namespace one */
export function objectRefusal(object: KubeObject, bindable?: ReadonlySet<string>): string | undefined {
  return admissionRefusal(object)
    ?? clusterScopeRefusal(object)
    ?? roleBindingRefusal(object, bindable);
}

/** the first reason the restore must not write this object into a cluster with these profile namespaces, or undefined when it may */
export function restoreRefusal(object: KubeObject, profileNamespaces: ReadonlySet<string>, bindable?: ReadonlySet<string>): string | undefined {
  const namespace = namespaceRefusal(object.metadata.namespace, profileNamespaces);
  return admissionRefusal(object)
    ?? clusterScopeRefusal(object)
    ?? (namespace && `${describeObject(object)}: ${namespace}`)
    ?? roleBindingRefusal(object, bindable);
}
