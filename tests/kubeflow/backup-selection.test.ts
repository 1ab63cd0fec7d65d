// backupDecision: what a backup keeps and why it leaves the rest out, one row per rule with the exact decision. It
// refuses what the restore's allow-list refuses, so that every backup is restorable.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { backupDecision, leftOutTally, type BackupDecision, type BackupScope } from '../../src/kubeflow/backup-selection.ts';
import { parseResourceFilter } from '../../src/kubeflow/resource-filters.ts';

const ONLY = 'only admin, edit, view, kubeflow-admin, kubeflow-edit, kubeflow-view and the ClusterRoles aggregated into them may be bound';
const alice: BackupScope = { namespaces: new Set(['alice']) };

const obj = (apiVersion: string, kind: string, name: string, namespace?: string, extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, ...extra });
const binding = (name: string, kind: string, role: string) =>
  obj('rbac.authorization.k8s.io/v1', 'RoleBinding', name, 'alice', { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: role } });
// Each row writes out the category and the sentence whole: the oracle is the table, not the product's rules.
const PROFILE: BackupDecision = { keep: true, category: 'profile', reason: 'state: Profile' };
const IN_ALICE = (kind: string): BackupDecision => ({ keep: true, category: 'state', reason: `state: ${kind} in profile namespace alice` });

const rows: { case: string; object: KubeObject; scope?: BackupScope; resource?: string; decision: BackupDecision }[] = [
  // RoleBindings the restore accepts are kept; those it refuses are left out with its sentence
  { case: 'a RoleBinding to admin', object: binding('admin', 'ClusterRole', 'admin'), decision: IN_ALICE('RoleBinding') },
  { case: 'a RoleBinding to edit', object: binding('edit', 'ClusterRole', 'edit'), decision: IN_ALICE('RoleBinding') },
  { case: 'a RoleBinding to view', object: binding('view', 'ClusterRole', 'view'), decision: IN_ALICE('RoleBinding') },
  { case: 'a KFAM contributor to kubeflow-edit (kfam bindings.go)', object: { ...binding('user-bob-x-io-clusterrole-edit', 'ClusterRole', 'kubeflow-edit'), metadata: { name: 'user-bob-x-io-clusterrole-edit', namespace: 'alice', annotations: { user: 'bob@x.io', role: 'edit' } } }, decision: IN_ALICE('RoleBinding') },
  { case: 'a RoleBinding to a Role', object: binding('r', 'Role', 'pod-reader'), decision: IN_ALICE('RoleBinding') },
  { case: 'a Role', object: obj('rbac.authorization.k8s.io/v1', 'Role', 'pod-reader', 'alice'), decision: IN_ALICE('Role') },
  { case: 'a RoleBinding to cluster-admin', object: binding('x', 'ClusterRole', 'cluster-admin'), decision: { keep: false, category: 'not-allowed', reason: `refused: RoleBinding/alice/x binds ClusterRole cluster-admin; ${ONLY}`, refusal: `RoleBinding/alice/x binds ClusterRole cluster-admin; ${ONLY}` } },
  { case: 'the controller\'s namespaceAdmin (profile_controller.go sets a controller reference)', object: { ...binding('namespaceAdmin', 'ClusterRole', 'kubeflow-admin'), metadata: { name: 'namespaceAdmin', namespace: 'alice', ownerReferences: [{ apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: 'alice', uid: 'u', controller: true }] } }, decision: { keep: false, category: 'generated', reason: 'generated: controller ownerReference to Profile/alice' } },
  // Profiles
  { case: 'a Profile', object: obj('kubeflow.org/v1', 'Profile', 'alice'), decision: PROFILE },
  { case: 'a Profile named after a system namespace', object: obj('kubeflow.org/v1', 'Profile', 'kube-system'), decision: { keep: false, category: 'reserved-profile', reason: 'refused: a Profile named kube-system would claim a system namespace', refusal: 'a Profile named kube-system would claim a system namespace' } },
  { case: 'a Profile named kube-anything', object: obj('kubeflow.org/v1', 'Profile', 'kube-lab'), decision: { keep: false, category: 'reserved-profile', reason: 'refused: a Profile named kube-lab would claim a system namespace', refusal: 'a Profile named kube-lab would claim a system namespace' } },
  { case: 'a Profile not asked for', object: obj('kubeflow.org/v1', 'Profile', 'bob'), scope: { ...alice, profiles: new Set(['alice']) }, decision: { keep: false, category: 'out-of-scope', reason: 'out of scope: Profile bob was not asked for' } },
  // Profiles are never filtered out: the namespaces exist only through them
  { case: 'a Profile outside include-resources', object: obj('kubeflow.org/v1', 'Profile', 'alice'), scope: { ...alice, filter: parseResourceFilter('notebooks', 'profiles') }, decision: PROFILE },
  { case: 'a Secret under exclude-resources', object: obj('v1', 'Secret', 's', 'alice'), scope: { ...alice, filter: parseResourceFilter('', 'secrets') }, resource: 'secrets', decision: { keep: false, category: 'filtered', reason: 'excluded by exclude-resources (secrets)' } },
  // scope and kinds that are never state
  { case: 'a ConfigMap outside the namespaces backed up', object: obj('v1', 'ConfigMap', 'c', 'bob'), decision: { keep: false, category: 'out-of-scope', reason: 'out of scope: namespace bob is not a profile namespace being backed up' } },
  { case: 'a ClusterRoleBinding', object: obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'x'), decision: { keep: false, category: 'cluster-scoped', reason: 'not state: ClusterRoleBinding (rbac.authorization.k8s.io/v1) is cluster-scoped, and only Profiles are state there' } },
  { case: 'a Pod', object: obj('v1', 'Pod', 'p', 'alice'), decision: { keep: false, category: 'runtime', reason: 'not state: Pods are made by the workload that owns them, which is backed up' } },
  { case: 'a Secret of type service-account-token (user-made since Kubernetes 1.24)', object: obj('v1', 'Secret', 't', 'alice', { type: 'kubernetes.io/service-account-token' }), decision: IN_ALICE('Secret') },
  // snapshot-profiles: Profiles and KFAM contributors (kfam bindings.go: the RoleBinding annotated user and role, and
  // the AuthorizationPolicy of the same name) only
  { case: 'a Profile, for snapshot-profiles', object: obj('kubeflow.org/v1', 'Profile', 'alice'), scope: { ...alice, contributorsOnly: true }, decision: PROFILE },
  { case: 'a KFAM contributor RoleBinding, for snapshot-profiles', object: { ...binding('user-bob-x-io-clusterrole-edit', 'ClusterRole', 'kubeflow-edit'), metadata: { name: 'user-bob-x-io-clusterrole-edit', namespace: 'alice', annotations: { user: 'bob@x.io', role: 'edit' } } }, scope: { ...alice, contributorsOnly: true }, decision: IN_ALICE('RoleBinding') },
  { case: 'a ConfigMap, for snapshot-profiles', object: obj('v1', 'ConfigMap', 'c', 'alice'), scope: { ...alice, contributorsOnly: true }, decision: { keep: false, category: 'not-a-contributor', reason: 'not a contributor: snapshot-profiles keeps Profiles and KFAM contributors only' } },
  { case: 'a RoleBinding to cluster-admin, for snapshot-profiles (refused before it is judged a contributor)', object: binding('x', 'ClusterRole', 'cluster-admin'), scope: { ...alice, contributorsOnly: true }, decision: { keep: false, category: 'not-allowed', reason: `refused: RoleBinding/alice/x binds ClusterRole cluster-admin; ${ONLY}`, refusal: `RoleBinding/alice/x binds ClusterRole cluster-admin; ${ONLY}` } },
  { case: 'kube-root-ca.crt', object: obj('v1', 'ConfigMap', 'kube-root-ca.crt', 'alice'), decision: { keep: false, category: 'generated', reason: 'generated: ConfigMap/kube-root-ca.crt is made by Kubernetes in every namespace' } },
];

describe('kubeflow/backup-selection: backupDecision', () => {
  for (const row of rows) {
    it(`${row.case} → ${row.decision.keep ? 'kept' : 'left out'} (${row.decision.category})`, () => expect(backupDecision(row.object, row.scope ?? alice, row.resource)).to.deep.equal(row.decision));
  }
});

// The words a backup counts what it left out under (its results' skippedBy and the archive's `skipped`): the refusals
// of both kinds together, and the kinds that are never state together.
describe('kubeflow/backup-selection: leftOutTally', () => {
  it('counts each left-out category under its word', () => {
    expect(leftOutTally).to.deep.equal({
      'cluster-scoped': 'not state',
      runtime: 'not state',
      filtered: 'filtered',
      'out-of-scope': 'out of scope',
      'reserved-profile': 'refused',
      'not-allowed': 'refused',
      generated: 'generated',
      'not-a-contributor': 'not a contributor',
    });
  });
});
