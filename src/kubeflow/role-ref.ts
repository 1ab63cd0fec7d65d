// A RoleBinding's or ClusterRoleBinding's roleRef never changes: kube-apiserver refuses any update that changes it
// (kubernetes/kubernetes pkg/apis/rbac/validation/validation.go, ValidateRoleBindingUpdate: "cannot change roleRef").
// So conflict-policy=update cannot put back an archived binding whose live namesake grants another role, and sending
// the update would only earn a 422 on every run. What a restore does instead follows Velero (vmware-tanzu/velero
// pkg/restore/restore.go, processUpdateResourcePolicy): when the update cannot be made, the live object is kept and
// the restore says so; it never deletes a live object to recreate it (docs/architecture.md, "Bindings whose role
// changed").
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

interface RoleRef { apiGroup?: string; kind?: string; name?: string }

const BINDING_KINDS = new Set(['RoleBinding', 'ClusterRoleBinding']);

function roleRefOf(object: KubeObject): RoleRef {
  return (object as { roleRef?: RoleRef }).roleRef ?? {};
}

function printed(ref: RoleRef): string {
  return `${ref.kind ?? '?'} ${ref.name ?? '?'}`;
}

/**
 * Why `live` cannot be updated to `wanted` because the two bind different roles, as a clause; undefined when they
 * bind the same role or are no bindings.
 */
export function roleRefChange(wanted: KubeObject, live: KubeObject): string | undefined {
  if (!BINDING_KINDS.has(wanted.kind) || groupOf(wanted.apiVersion) !== 'rbac.authorization.k8s.io') return undefined;
  const a = roleRefOf(wanted);
  const b = roleRefOf(live);
  if ((a.apiGroup ?? '') === (b.apiGroup ?? '') && a.kind === b.kind && a.name === b.name) return undefined;
  return `the target's binds ${printed(b)} and the backup's ${printed(a)}, and a binding's roleRef cannot change`;
}
