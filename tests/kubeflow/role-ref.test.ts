// roleRefChange: whether conflict-policy=update may send an archived binding over its live namesake. A real server
// refuses any change of a binding's roleRef (kubernetes pkg/apis/rbac/validation/validation.go,
// ValidateRoleBindingUpdate), so only a change of the role itself counts; subjects and labels are updates like any.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { roleRefChange } from '../../src/kubeflow/role-ref.ts';

const RBAC = 'rbac.authorization.k8s.io';
const bindingOf = (kind: string, roleKind: string, role: string, users = ['a@example.com']): KubeObject => ({
  apiVersion: `${RBAC}/v1`, kind, metadata: { name: 'b', namespace: 'alice' },
  roleRef: { apiGroup: RBAC, kind: roleKind, name: role }, subjects: users.map((name) => ({ kind: 'User', name, apiGroup: RBAC })),
} as KubeObject);

describe('roleRefChange', () => {
  const rows: Array<[string, KubeObject, KubeObject, string | undefined]> = [
    ['same role, other subjects: an ordinary update', bindingOf('RoleBinding', 'ClusterRole', 'edit', ['x@example.com']), bindingOf('RoleBinding', 'ClusterRole', 'edit'), undefined],
    ['another ClusterRole', bindingOf('RoleBinding', 'ClusterRole', 'view'), bindingOf('RoleBinding', 'ClusterRole', 'edit'),
      "the target's binds ClusterRole edit and the backup's ClusterRole view, and a binding's roleRef cannot change"],
    ['a Role of the same name as the ClusterRole', bindingOf('RoleBinding', 'Role', 'edit'), bindingOf('RoleBinding', 'ClusterRole', 'edit'),
      "the target's binds ClusterRole edit and the backup's Role edit, and a binding's roleRef cannot change"],
    ['a ClusterRoleBinding too', bindingOf('ClusterRoleBinding', 'ClusterRole', 'view'), bindingOf('ClusterRoleBinding', 'ClusterRole', 'admin'),
      "the target's binds ClusterRole admin and the backup's ClusterRole view, and a binding's roleRef cannot change"],
    ['no binding: never judged', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm' }, data: { a: '1' } } as KubeObject,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm' }, data: { a: '2' } } as KubeObject, undefined],
  ];
  for (const [name, wanted, live, expected] of rows) {
    it(name, () => expect(roleRefChange(wanted, live)).to.equal(expected));
  }
});
