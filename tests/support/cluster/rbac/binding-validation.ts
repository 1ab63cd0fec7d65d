// Defaulting and validation of RoleBindings and ClusterRoleBindings, as kube-apiserver runs them:
// - defaults (kubernetes/kubernetes pkg/apis/rbac/v1/defaults.go): roleRef.apiGroup rbac.authorization.k8s.io, a
//   User's or Group's subject apiGroup the same, a ServiceAccount's none;
// - ValidateRoleBinding / ValidateClusterRoleBinding (pkg/apis/rbac/validation/validation.go): roleRef.apiGroup
//   rbac.authorization.k8s.io, roleRef.kind Role or ClusterRole (ClusterRole only for a ClusterRoleBinding), a
//   roleRef.name; each subject a ServiceAccount, User or Group with a name, a ServiceAccount of a ClusterRoleBinding
//   with its namespace; the values listed in the order the validator lists them;
// - ValidateRoleBindingUpdate and ValidateClusterRoleBindingUpdate: a binding's roleRef never changes, so that a grant cannot be turned into another
// one by whoever may update bindings; a different role means a new binding. The value in the sentence is the new
// roleRef as Go's %#v prints the internal rbac.RoleRef struct (apimachinery pkg/util/validation/field/errors.go,
// ErrorBody's default case).
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { FieldError } from '../errors.ts';

interface RoleRef { apiGroup?: string; kind?: string; name?: string }
interface Subject { kind?: string; name?: string; namespace?: string; apiGroup?: string }

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** SetDefaults_RoleBinding, SetDefaults_ClusterRoleBinding and SetDefaults_Subject, in place */
export function defaultBinding(binding: KubeObject): void {
  const b = binding as { roleRef?: RoleRef; subjects?: Subject[] };
  if (b.roleRef && !b.roleRef.apiGroup) b.roleRef = { ...b.roleRef, apiGroup: RBAC_GROUP };
  if (b.subjects)
    b.subjects = b.subjects.map((s) => (!s.apiGroup && (s.kind === 'User' || s.kind === 'Group') ? { ...s, apiGroup: RBAC_GROUP } : s));
}

const notSupported = (field: string, value: string | undefined, values: string[]): FieldError =>
  ({ field, type: 'FieldValueNotSupported', text: `Unsupported value: ${JSON.stringify(value ?? '')}: supported values: ${values.map((v) => JSON.stringify(v)).join(', ')}` });
const requiredAt = (field: string): FieldError => ({ field, type: 'FieldValueRequired', text: 'Required value' });

/** ValidateRoleBinding (`namespaced`) or ValidateClusterRoleBinding, on a defaulted binding (the name rules aside) */
export function validateBinding(binding: KubeObject, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const ref = (binding as { roleRef?: RoleRef }).roleRef ?? {};
  if (ref.apiGroup !== RBAC_GROUP) errors.push(notSupported('roleRef.apiGroup', ref.apiGroup, [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) errors.push(notSupported('roleRef.kind', ref.kind, kinds));
  if (!ref.name) errors.push(requiredAt('roleRef.name'));
  for (const [i, s] of ((binding as { subjects?: Subject[] }).subjects ?? []).entries()) {
    const at = `subjects[${i}]`;
    if (!s.name) errors.push(requiredAt(`${at}.name`));
    if (s.kind === 'ServiceAccount') {
      if (s.apiGroup) errors.push(notSupported(`${at}.apiGroup`, s.apiGroup, ['']));
      if (!namespaced && !s.namespace) errors.push(requiredAt(`${at}.namespace`));
    } else if (s.kind === 'User' || s.kind === 'Group') {
      if (!s.name) errors.push({ field: `${at}.name`, type: 'FieldValueInvalid', text: `Invalid value: "": ${s.kind === 'User' ? 'user' : 'group'} name cannot be empty` });
      if (s.apiGroup !== RBAC_GROUP) errors.push(notSupported(`${at}.apiGroup`, s.apiGroup, [RBAC_GROUP]));
    } else errors.push(notSupported(`${at}.kind`, s.kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errors;
}

function roleRefOf(o: KubeObject): Required<RoleRef> {
  const r = (o as { roleRef?: RoleRef }).roleRef ?? {};
  return { apiGroup: r.apiGroup ?? '', kind: r.kind ?? '', name: r.name ?? '' };
}

/** Go's %#v of a rbac.RoleRef */
function goRoleRef(r: Required<RoleRef>): string {
  return `rbac.RoleRef{APIGroup:${JSON.stringify(r.apiGroup)}, Kind:${JSON.stringify(r.kind)}, Name:${JSON.stringify(r.name)}}`;
}

export function validateBindingUpdate(next: KubeObject, old: KubeObject, namespaced: boolean): FieldError[] {
  const errors = validateBinding(next, namespaced);
  const after = roleRefOf(next);
  const before = roleRefOf(old);
  if (after.apiGroup === before.apiGroup && after.kind === before.kind && after.name === before.name) return errors;
  return [...errors, { field: 'roleRef', type: 'FieldValueInvalid', text: `Invalid value: ${goRoleRef(after)}: cannot change roleRef` }];
}
