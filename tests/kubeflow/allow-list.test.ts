// restoreRefusal: what a restore may write, whatever the archive says, one row per rule with the exact sentence. The
// rules apply in order: admission configuration, cluster scope, the namespace, then the RoleBinding's roleRef.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { restoreRefusal, roleBindingRefusal } from '../../src/kubeflow/allow-list.ts';
import { bindableRolesOf } from '../../src/kubeflow/bindable-roles.ts';

const profileNamespaces = new Set(['alice']);
const ONLY = 'only admin, edit, view, kubeflow-admin, kubeflow-edit, kubeflow-view and the ClusterRoles aggregated into them may be bound';

const obj = (apiVersion: string, kind: string, name: string, namespace?: string, extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, ...extra });
const binding = (roleRef: Record<string, string> | undefined, namespace = 'alice', apiVersion = 'rbac.authorization.k8s.io/v1') =>
  obj(apiVersion, 'RoleBinding', 'b', namespace, roleRef ? { roleRef } : {});
const toClusterRole = (name: string) => binding({ kind: 'ClusterRole', name });

const rows: { case: string; object: KubeObject; refusal: string | undefined }[] = [
  // cluster scope: a Profile of kubeflow.org, nothing else
  { case: 'a Profile', object: obj('kubeflow.org/v1', 'Profile', 'alice'), refusal: undefined },
  { case: 'a Namespace (the profile controller makes it from the Profile)', object: obj('v1', 'Namespace', 'alice'), refusal: 'Namespace/alice is cluster-scoped and only Profiles are restored at cluster scope' },
  { case: 'a ClusterRoleBinding', object: obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'x'), refusal: 'ClusterRoleBinding/x is cluster-scoped and only Profiles are restored at cluster scope' },
  { case: 'a ClusterRole', object: obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'kubeflow-edit'), refusal: 'ClusterRole/kubeflow-edit is cluster-scoped and only Profiles are restored at cluster scope' },
  { case: 'a CustomResourceDefinition', object: obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'notebooks.kubeflow.org'), refusal: 'CustomResourceDefinition/notebooks.kubeflow.org is cluster-scoped and only Profiles are restored at cluster scope' },
  { case: 'a PersistentVolume', object: obj('v1', 'PersistentVolume', 'pv-1'), refusal: 'PersistentVolume/pv-1 is cluster-scoped and only Profiles are restored at cluster scope' },
  { case: 'a Profile kind of another group', object: obj('example.com/v1', 'Profile', 'alice'), refusal: 'Profile/alice is cluster-scoped and only Profiles are restored at cluster scope' },
  // admission configuration, whatever its scope or name, checked first
  { case: 'a ValidatingWebhookConfiguration', object: obj('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'w'), refusal: 'ValidatingWebhookConfiguration/w is admission configuration, which a restore never writes' },
  { case: 'a MutatingWebhookConfiguration', object: obj('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'w'), refusal: 'MutatingWebhookConfiguration/w is admission configuration, which a restore never writes' },
  { case: 'a ValidatingAdmissionPolicyBinding', object: obj('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', 'p'), refusal: 'ValidatingAdmissionPolicyBinding/p is admission configuration, which a restore never writes' },
  { case: 'an admission kind under another group, even in a profile namespace', object: obj('example.com/v1', 'MutatingWebhookConfiguration', 'w', 'alice'), refusal: 'MutatingWebhookConfiguration/alice/w is admission configuration, which a restore never writes' },
  // namespaces: profile namespaces only
  { case: 'a ConfigMap in kube-system', object: obj('v1', 'ConfigMap', 'c', 'kube-system'), refusal: 'ConfigMap/kube-system/c: namespace kube-system has no Profile kube-system; only the profile controller makes profile namespaces, from their Profile' },
  { case: 'a Secret in kubeflow', object: obj('v1', 'Secret', 's', 'kubeflow'), refusal: 'Secret/kubeflow/s: namespace kubeflow has no Profile kubeflow; only the profile controller makes profile namespaces, from their Profile' },
  { case: 'a bindable RoleBinding outside profile namespaces: the namespace is named first', object: binding({ kind: 'ClusterRole', name: 'cluster-admin' }, 'kube-system'), refusal: 'RoleBinding/kube-system/b: namespace kube-system has no Profile kube-system; only the profile controller makes profile namespaces, from their Profile' },
  { case: 'a Secret of type service-account-token in a profile namespace', object: obj('v1', 'Secret', 't', 'alice', { type: 'kubernetes.io/service-account-token' }), refusal: undefined },
  { case: 'a Role in a profile namespace', object: obj('rbac.authorization.k8s.io/v1', 'Role', 'pod-reader', 'alice'), refusal: undefined },
  // RoleBindings: a Role of the namespace, or a ClusterRole a profile owner holds (profile_controller.go: namespaceAdmin
  // binds kubeflow-admin, which aggregates admin, edit and view)
  { case: 'a RoleBinding to a Role of its namespace', object: binding({ kind: 'Role', name: 'my-role' }), refusal: undefined },
  { case: 'namespaceAdmin\'s roleRef kubeflow-admin (profile_controller.go)', object: toClusterRole('kubeflow-admin'), refusal: undefined },
  { case: 'default-editor\'s and a KFAM edit contributor\'s roleRef kubeflow-edit', object: toClusterRole('kubeflow-edit'), refusal: undefined },
  { case: 'default-viewer\'s and a KFAM view contributor\'s roleRef kubeflow-view', object: toClusterRole('kubeflow-view'), refusal: undefined },
  { case: 'Kubernetes\' admin, aggregated by kubeflow-admin', object: toClusterRole('admin'), refusal: undefined },
  { case: 'Kubernetes\' edit, aggregated by admin', object: toClusterRole('edit'), refusal: undefined },
  { case: 'Kubernetes\' view, aggregated by edit', object: toClusterRole('view'), refusal: undefined },
  { case: 'cluster-admin', object: toClusterRole('cluster-admin'), refusal: `RoleBinding/alice/b binds ClusterRole cluster-admin; ${ONLY}` },
  { case: 'an aggregation label role such as system:aggregate-to-admin', object: toClusterRole('system:aggregate-to-admin'), refusal: `RoleBinding/alice/b binds ClusterRole system:aggregate-to-admin; ${ONLY}` },
  { case: 'a role name differing only in case (RBAC names are case-sensitive)', object: toClusterRole('Admin'), refusal: `RoleBinding/alice/b binds ClusterRole Admin; ${ONLY}` },
  { case: 'a ClusterRole roleRef without a name', object: binding({ kind: 'ClusterRole' }), refusal: `RoleBinding/alice/b binds ClusterRole; ${ONLY}` },
  { case: 'a RoleBinding without a roleRef', object: binding(undefined), refusal: `RoleBinding/alice/b binds an unknown role kind; ${ONLY}` },
  { case: 'a RoleBinding kind of another group grants nothing through RBAC', object: binding({ kind: 'ClusterRole', name: 'cluster-admin' }, 'alice', 'example.com/v1'), refusal: undefined },
];

describe('kubeflow/allow-list: restoreRefusal', () => {
  for (const row of rows) it(`${row.case} → ${row.refusal === undefined ? 'restored' : 'refused'}`, () => expect(restoreRefusal(row.object, profileNamespaces)).to.equal(row.refusal));
});

describe('kubeflow/bindable-roles: what an owner may bind, read from the aggregation of ClusterRoles', () => {
  const role = (name: string, labels: Record<string, string> = {}, aggregates?: Record<string, string>): KubeObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels },
    ...(aggregates ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: aggregates }] } } : {}),
  });
  it('adds every ClusterRole aggregated into kubeflow-admin, -edit or -view, through other aggregated roles too', () => {
    const roles = [
      role('kubeflow-edit', { 'rbac.authorization.kubeflow.org/aggregate-to-kubeflow-admin': 'true' }, { 'rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit': 'true' }),
      // KFP's own aggregated role, itself aggregated into kubeflow-edit (kubeflow/pipelines manifests, cluster-scoped-resources)
      role('kubeflow-pipelines-edit', { 'rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit': 'true' }, { 'rbac.authorization.kubeflow.org/aggregate-to-kubeflow-pipelines-edit': 'true' }),
      role('aggregate-to-kubeflow-pipelines-edit', { 'rbac.authorization.kubeflow.org/aggregate-to-kubeflow-pipelines-edit': 'true' }),
      role('cluster-admin'),
      role('unrelated', { 'rbac.authorization.k8s.io/aggregate-to-cluster-reader': 'true' }),
    ];
    const bindable = bindableRolesOf(roles);
    expect([...bindable].sort()).to.deep.equal(['admin', 'aggregate-to-kubeflow-pipelines-edit', 'edit', 'kubeflow-admin', 'kubeflow-edit', 'kubeflow-pipelines-edit', 'kubeflow-view', 'view']);
    const binding = (name: string): KubeObject => ({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'b', namespace: 'alice' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    });
    expect(roleBindingRefusal(binding('kubeflow-pipelines-edit'), bindable)).to.equal(undefined);
    expect(roleBindingRefusal(binding('kubeflow-pipelines-edit'))).to.match(/^RoleBinding\/alice\/b binds ClusterRole /);
    expect(roleBindingRefusal(binding('cluster-admin'), bindable)).to.match(/^RoleBinding\/alice\/b binds ClusterRole /);
  });
});
