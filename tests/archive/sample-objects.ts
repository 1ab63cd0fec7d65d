// Kubeflow-like objects and the API resources they are listed through, as archive and store tests write them (the
// shapes a Kubernetes 1.30 API server returns: kubernetes/kubernetes api/discovery; Kubeflow's Profile and Notebook
// kinds: kubeflow/kubeflow components/profile-controller, components/notebook-controller). Starts nothing.
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import type { VeleroItem } from '../support/velero/archive.ts';

const resource = (group: string, version: string, plural: string, kind: string, namespaced = true): ApiResource => ({
  group, version, resource: plural, kind, namespaced, verbs: ['list', 'get', 'create'], preferredVersion: version, versions: [version],
});

export const NOTEBOOKS = resource('kubeflow.org', 'v1', 'notebooks', 'Notebook');
export const PROFILES = resource('kubeflow.org', 'v1', 'profiles', 'Profile', false);
export const SECRETS = resource('', 'v1', 'secrets', 'Secret');
export const CONFIGMAPS = resource('', 'v1', 'configmaps', 'ConfigMap');
export const PVCS = resource('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim');
export const ROLES = resource('rbac.authorization.k8s.io', 'v1', 'roles', 'Role');
export const ROLEBINDINGS = resource('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding');

/** A PVC as a live cluster returns it once bound: the PV's name and the binding annotations are set. */
export function boundPvc(namespace: string, name: string): KubeObject {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name, namespace, annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes', note: 'kept' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: `pvc-${name}-0b7e`, storageClassName: 'standard' },
  };
}

/** A Role and its RoleBinding named as OpenShift names its image-puller binding: RBAC names may hold ':'. */
export function colonRbac(namespace: string): { role: KubeObject; binding: KubeObject } {
  return {
    role: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'system:image-puller', namespace },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    },
    binding: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'system:image-pullers', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'system:image-puller' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `system:serviceaccounts:${namespace}` }],
    },
  };
}

export function notebook(namespace: string, name: string, padBytes = 0): KubeObject {
  return {
    apiVersion: 'kubeflow.org/v1',
    kind: 'Notebook',
    metadata: { name, namespace, labels: { app: name }, annotations: { note: 'x'.repeat(padBytes) } },
    spec: { template: { spec: { containers: [{ name, image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
  };
}

export function profile(name: string): KubeObject {
  return { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: `${name}@example.com` } } };
}

export function secret(namespace: string, name: string, values: Record<string, string>, stringData?: Record<string, string>): KubeObject {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) data[k] = Buffer.from(v).toString('base64');
  return {
    apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', data,
    ...(stringData ? { stringData } : {}),
  };
}

/** Incompressible-ish text so gzip cannot hide how much data went through. */
export function noise(bytes: number, seed: number): string {
  let x = seed >>> 0 || 1;
  const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let out = '';
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out += chars[x % chars.length];
  }
  return out;
}

/** A profile namespace as a stock Velero backup of it holds it, with other versions for EnableAPIGroupVersions. */
export function veleroProfileNamespace(namespace: string): VeleroItem[] {
  const nb = notebook(namespace, 'analysis');
  const rbac = colonRbac(namespace);
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace }, data: { a: 'b' } };
  return [
    { resource: 'profiles', group: 'kubeflow.org', object: profile(namespace), otherVersions: [{ ...profile(namespace), apiVersion: 'kubeflow.org/v1beta1' }] },
    { resource: 'namespaces', group: '', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } },
    { resource: 'notebooks', group: 'kubeflow.org', object: nb, otherVersions: [{ ...nb, apiVersion: 'kubeflow.org/v1beta1' }, { ...nb, apiVersion: 'kubeflow.org/v1alpha1' }] },
    { resource: 'roles', group: 'rbac.authorization.k8s.io', object: rbac.role },
    { resource: 'rolebindings', group: 'rbac.authorization.k8s.io', object: rbac.binding },
    { resource: 'configmaps', group: '', object: cm },
  ];
}
