// Update validation of RoleBindings and ClusterRoleBindings, as kube-apiserver's registry runs it
// (kubernetes/kubernetes pkg/apis/rbac/validation/validation.go, ValidateRoleBindingUpdate and
// ValidateClusterRoleBindingUpdate): a binding's roleRef never changes, so that a grant cannot be turned into another
// one by whoever may update bindings; a different role means a new binding. The value in the sentence is the new
// roleRef as Go's %#v prints the internal rbac.RoleRef struct (apimachinery pkg/util/validation/field/errors.go,
// ErrorBody's default case).
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { FieldError } from '../errors.ts';

interface RoleRef { apiGroup?: string; kind?: string; name?: string }

function roleRefOf(o: KubeObject): Required<RoleRef> {
  const r = (o as { roleRef?: RoleRef }).roleRef ?? {};
  return { apiGroup: r.apiGroup ?? '', kind: r.kind ?? '', name: r.name ?? '' };
}

/** Go's %#v of a rbac.RoleRef */
function goRoleRef(r: Required<RoleRef>): string {
  return `rbac.RoleRef{APIGroup:${JSON.stringify(r.apiGroup)}, Kind:${JSON.stringify(r.kind)}, Name:${JSON.stringify(r.name)}}`;
}

export function validateBindingUpdate(next: KubeObject, old: KubeObject): FieldError[] {
  const after = roleRefOf(next);
  const before = roleRefOf(old);
  if (after.apiGroup === before.apiGroup && after.kind === before.kind && after.name === before.name) return [];
  return [{ field: 'roleRef', type: 'FieldValueInvalid', text: `Invalid value: ${goRoleRef(after)}: cannot change roleRef` }];
}
