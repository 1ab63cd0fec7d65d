// Fields an update may not change on the embedded API server (immutable.ts), with the real server's messages
// (kubernetes/kubernetes pkg/apis/core/validation/validation.go: ValidatePersistentVolumeClaimUpdate, ValidateSecretUpdate,
// ValidateConfigMapUpdate; pkg/apis/rbac/validation/validation.go: ValidateRoleBindingUpdate, ValidateClusterRoleBindingUpdate).
import { expect } from 'chai';
import type { KubeObject } from '../../../src/kube/types.ts';
import { Cluster } from './cluster.ts';

const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const SECRETS = { group: '', resource: 'secrets' };
const CONFIGMAPS = { group: '', resource: 'configmaps' };

function refused(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected the API server to refuse the update');
}

describe('embedded API server: immutable fields on update', () => {
  let cluster: Cluster;
  beforeEach(() => {
    cluster = new Cluster();
    cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  });

  const claim = (): KubeObject => cluster.create(PVCS, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'a' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const withSpec = (o: KubeObject, change: Record<string, unknown>) => ({ ...o, spec: { ...(o.spec as object), ...change } });

  it('a PVC takes a volumeName once, then refuses another, and refuses a change of its access modes', () => {
    const bound = cluster.update(PVCS, withSpec(claim(), { volumeName: 'pv-1' }));
    expect(refused(() => cluster.update(PVCS, withSpec(bound, { volumeName: 'pv-2' }))))
      .to.equal('PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims');
    expect(refused(() => cluster.update(PVCS, withSpec(bound, { accessModes: ['ReadWriteMany'] })))).to.contain('spec: Forbidden: spec is immutable after creation');
    // labels are not the spec
    expect(cluster.update(PVCS, { ...bound, metadata: { ...bound.metadata, labels: { a: 'b' } } }).metadata.labels).to.deep.equal({ a: 'b' });
  });

  it('a bound PVC may grow its storage request, never shrink it; an unbound one may not change it', () => {
    const made = claim();
    expect(refused(() => cluster.update(PVCS, withSpec(made, { resources: { requests: { storage: '2Gi' } } })))).to.contain('spec is immutable');
    const bound = cluster.updateStatus(PVCS, { ...made, status: { phase: 'Bound' } });
    const grown = cluster.update(PVCS, withSpec(bound, { resources: { requests: { storage: '2Gi' } } }));
    expect((grown.spec as { resources: unknown }).resources).to.deep.equal({ requests: { storage: '2Gi' } });
    expect(refused(() => cluster.update(PVCS, withSpec(grown, { resources: { requests: { storage: '512Mi' } } }))))
      .to.equal('PersistentVolumeClaim "data" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than previous value');
  });

  it('an immutable Secret or ConfigMap refuses a change of its data or of immutable; a Secret never changes its type', () => {
    const secret = cluster.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'a' }, type: 'Opaque', immutable: true, data: { k: 'dg==' } } as KubeObject);
    expect(refused(() => cluster.update(SECRETS, { ...secret, data: { k: 'dzI=' } } as KubeObject)))
      .to.equal('Secret "s" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    expect(refused(() => cluster.update(SECRETS, { ...secret, immutable: false } as KubeObject)))
      .to.equal('Secret "s" is invalid: immutable: Forbidden: field is immutable when `immutable` is set');
    // (a type of the user's own requires no keys, so that the type change is the only refusal: secrets.ts)
    expect(refused(() => cluster.update(SECRETS, { ...secret, type: 'example.com/custom' } as KubeObject)))
      .to.equal('Secret "s" is invalid: type: Invalid value: "example.com/custom": field is immutable');
    const map = cluster.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm', namespace: 'a' }, immutable: true, data: { k: 'v' } } as KubeObject);
    expect(refused(() => cluster.update(CONFIGMAPS, { ...map, data: { k: 'w' } } as KubeObject)))
      .to.equal('ConfigMap "m" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    // metadata stays mutable
    expect(cluster.update(CONFIGMAPS, { ...map, metadata: { ...map.metadata, labels: { x: 'y' } } }).metadata.labels).to.deep.equal({ x: 'y' });
    // a mutable one changes freely
    const plain = cluster.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', namespace: 'a' }, data: { k: 'v' } } as KubeObject);
    expect(cluster.update(CONFIGMAPS, { ...plain, data: { k: 'w' } } as KubeObject).data).to.deep.equal({ k: 'w' });
  });

  it('a RoleBinding or ClusterRoleBinding refuses a change of its roleRef, kind or name, and takes a change of its subjects', () => {
    const ROLEBINDINGS = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
    const CLUSTERROLEBINDINGS = { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' };
    const subjects = [{ kind: 'User', name: 'alice@example.com', apiGroup: 'rbac.authorization.k8s.io' }];
    const binding = cluster.create(ROLEBINDINGS, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'b', namespace: 'a' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects,
    } as KubeObject);
    expect(refused(() => cluster.update(ROLEBINDINGS, { ...binding, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } } as KubeObject)))
      .to.equal('RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}: cannot change roleRef');
    expect(refused(() => cluster.update(ROLEBINDINGS, { ...binding, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'edit' } } as KubeObject)))
      .to.equal('RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"edit"}: cannot change roleRef');
    const more = [...subjects, { kind: 'User', name: 'bob@example.com', apiGroup: 'rbac.authorization.k8s.io' }];
    expect((cluster.update(ROLEBINDINGS, { ...binding, subjects: more } as KubeObject) as unknown as { subjects: unknown[] }).subjects).to.deep.equal(more);
    cluster.create(CLUSTERROLEBINDINGS, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'c' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects,
    } as KubeObject);
    expect(refused(() => cluster.mergePatch(CLUSTERROLEBINDINGS, 'c', undefined, { roleRef: { name: 'admin' } })))
      .to.equal('ClusterRoleBinding.rbac.authorization.k8s.io "c" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"admin"}: cannot change roleRef');
  });

  it('defaults a binding\'s apiGroups and refuses a roleRef of another kind or group and a subject of no kind (ValidateRoleBinding)', () => {
    const ROLEBINDINGS = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
    const CLUSTERROLEBINDINGS = { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' };
    const made = cluster.create(ROLEBINDINGS, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'd', namespace: 'a' },
      roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'u' }, { kind: 'ServiceAccount', name: 'default' }],
    } as KubeObject) as unknown as { roleRef: unknown; subjects: unknown };
    expect(made.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
    expect(made.subjects).to.deep.equal([{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' }, { kind: 'ServiceAccount', name: 'default' }]);
    const binding = (name: string, roleRef: Record<string, string>, subjects: Array<Record<string, string>>, namespace?: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding', metadata: { name, ...(namespace ? { namespace } : {}) }, roleRef, subjects,
    } as KubeObject);
    expect(refused(() => cluster.create(ROLEBINDINGS, binding('k', { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'x' }, [], 'a'))))
      .to.equal('RoleBinding.rbac.authorization.k8s.io "k" is invalid: roleRef.kind: Unsupported value: "Group": supported values: "Role", "ClusterRole"');
    expect(refused(() => cluster.create(CLUSTERROLEBINDINGS, binding('c', { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' }, []))))
      .to.equal('ClusterRoleBinding.rbac.authorization.k8s.io "c" is invalid: roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"');
    expect(refused(() => cluster.create(ROLEBINDINGS, binding('g', { apiGroup: 'example.org', kind: 'ClusterRole', name: 'x' }, [], 'a'))))
      .to.equal('RoleBinding.rbac.authorization.k8s.io "g" is invalid: roleRef.apiGroup: Unsupported value: "example.org": supported values: "rbac.authorization.k8s.io"');
    expect(refused(() => cluster.create(ROLEBINDINGS, binding('s', { kind: 'ClusterRole', name: 'view' }, [{ kind: 'Robot', name: 'r' }], 'a'))))
      .to.equal('RoleBinding.rbac.authorization.k8s.io "s" is invalid: subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"');
    expect(refused(() => cluster.create(CLUSTERROLEBINDINGS, binding('n', { kind: 'ClusterRole', name: 'view' }, [{ kind: 'ServiceAccount', name: 'default' }]))))
      .to.equal('ClusterRoleBinding.rbac.authorization.k8s.io "n" is invalid: subjects[0].namespace: Required value');
  });
});
