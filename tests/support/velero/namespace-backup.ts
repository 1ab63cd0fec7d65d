// The items `velero backup create --include-namespaces <profile namespace>` writes for one Kubeflow profile
// namespace, as Velero collects them (for putVeleroBackup to write in Velero's layout):
// - vmware-tanzu/velero pkg/backup/backup.go (BackupWithResolvers, backupItem → backupCRD): every item of the
//   namespace, whatever made it (Pods, the StatefulSet a Notebook owns, ...), the Namespace itself, and, for each
//   custom resource backed up, the CustomResourceDefinition that serves it (cluster-scoped, even though the backup
//   names only namespaces);
// - pkg/backup/actions/backup_pv_action.go: the PersistentVolume bound to each PVC, as an additional item;
// - pkg/backup/item_backupper.go: each item as the API served it, metadata, ownerReferences and status included.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { VeleroItem } from './archive.ts';

const uid = (name: string) => `0e1f2a3b-${name.length.toString(16).padStart(4, '0')}-4c5d-8e9f-${Buffer.from(name).toString('hex').slice(0, 12).padEnd(12, '0')}`;

function crd(group: string, plural: string, kind: string, versions: string[], scope: 'Namespaced' | 'Cluster' = 'Namespaced'): VeleroItem {
  return {
    resource: 'customresourcedefinitions', group: 'apiextensions.k8s.io',
    object: {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}`, uid: uid(plural), resourceVersion: '1042', labels: { 'app.kubernetes.io/part-of': 'kubeflow' } },
      spec: {
        group, scope, names: { plural, kind, singular: kind.toLowerCase(), listKind: `${kind}List` },
        versions: versions.map((name, index) => ({ name, served: true, storage: index === 0, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })),
      },
      status: { acceptedNames: { plural, kind }, storedVersions: [versions[0]] },
    },
  };
}

/** What a Velero backup of profile namespace `namespace` holds: user state and everything the cluster made around it. */
export function veleroKubeflowNamespace(namespace: string): { items: VeleroItem[]; userState: string[]; leftToTheTarget: string[] } {
  const owner = (kind: string, apiVersion: string, name: string, uidOf = name) => [{ apiVersion, kind, name, uid: uid(uidOf), controller: true, blockOwnerDeletion: true }];
  const notebook: KubeObject = {
    apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'lab', namespace, uid: uid('lab'), resourceVersion: '5001', labels: { app: 'lab' } },
    spec: { template: { spec: { containers: [{ name: 'lab', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0', volumeMounts: [{ name: 'ws', mountPath: '/home/jovyan' }] }], volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'lab-workspace' } }] } } },
    status: { readyReplicas: 1 },
  };
  const pvc: KubeObject = {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: 'lab-workspace', namespace, uid: uid('lab-workspace'), annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } }, volumeName: 'pvc-4f1c2d3e', storageClassName: 'standard', volumeMode: 'Filesystem' },
    status: { phase: 'Bound', capacity: { storage: '5Gi' } },
  };
  const pv: KubeObject = {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-4f1c2d3e', uid: uid('pvc-4f1c2d3e'), annotations: { 'pv.kubernetes.io/provisioned-by': 'microk8s.io/hostpath' } },
    spec: {
      capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'standard', volumeMode: 'Filesystem',
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: 'lab-workspace', uid: uid('lab-workspace') },
      hostPath: { path: `/var/snap/microk8s/common/default-storage/${namespace}-lab-workspace-pvc-4f1c2d3e` },
    },
    status: { phase: 'Bound' },
  };
  const statefulSet: KubeObject = {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'lab', namespace, uid: uid('sts-lab'), ownerReferences: owner('Notebook', 'kubeflow.org/v1', 'lab') },
    spec: { replicas: 1, serviceName: '', selector: { matchLabels: { statefulset: 'lab' } }, template: { metadata: { labels: { statefulset: 'lab' } }, spec: { containers: [{ name: 'lab', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
  };
  const pod: KubeObject = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lab-0', namespace, uid: uid('lab-0'), labels: { statefulset: 'lab' }, ownerReferences: owner('StatefulSet', 'apps/v1', 'lab', 'sts-lab') },
    spec: { containers: [{ name: 'lab', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }], nodeName: 'node-1' },
    status: { phase: 'Running' },
  };
  const service: KubeObject = {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'lab', namespace, uid: uid('svc-lab'), ownerReferences: owner('Notebook', 'kubeflow.org/v1', 'lab') },
    spec: { type: 'ClusterIP', clusterIP: '10.152.183.77', clusterIPs: ['10.152.183.77'], ports: [{ name: 'http-lab', port: 80, targetPort: 8888, protocol: 'TCP' }], selector: { statefulset: 'lab' } },
  };
  const settings: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace, uid: uid('settings') }, data: { epochs: '3' } };
  const profile: KubeObject = {
    apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: namespace, uid: uid(namespace), finalizers: ['profile-finalizer'] },
    spec: { owner: { kind: 'User', name: `${namespace}@example.com` } },
  };
  // KFP runs as Argo executes them: one finished (the controller labelled it completed), one still running
  const workflow = (name: string, phase: string): KubeObject => ({
    apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow',
    metadata: { name, namespace, uid: uid(name), labels: { 'pipelines.kubeflow.org/v2_component': 'true', ...(phase === 'Succeeded' ? { 'workflows.argoproj.io/completed': 'true', 'workflows.argoproj.io/phase': phase } : { 'workflows.argoproj.io/phase': phase }) } },
    spec: { entrypoint: 'entrypoint', serviceAccountName: 'pipeline-runner', templates: [{ name: 'entrypoint', container: { image: 'python:3.11' } }] },
    status: { phase, startedAt: '2026-11-30T10:00:00Z', ...(phase === 'Succeeded' ? { finishedAt: '2026-11-30T10:05:00Z' } : {}) },
  });
  const items: VeleroItem[] = [
    crd('argoproj.io', 'workflows', 'Workflow', ['v1alpha1']),
    { resource: 'workflows', group: 'argoproj.io', object: workflow('run-finished', 'Succeeded') },
    { resource: 'workflows', group: 'argoproj.io', object: workflow('run-running', 'Running') },
    crd('kubeflow.org', 'profiles', 'Profile', ['v1', 'v1beta1'], 'Cluster'),
    crd('kubeflow.org', 'notebooks', 'Notebook', ['v1', 'v1beta1', 'v1alpha1']),
    { resource: 'profiles', group: 'kubeflow.org', object: profile },
    { resource: 'namespaces', group: '', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, uid: uid(`ns-${namespace}`), annotations: { owner: `${namespace}@example.com` } }, status: { phase: 'Active' } } },
    { resource: 'notebooks', group: 'kubeflow.org', object: notebook },
    { resource: 'statefulsets', group: 'apps', object: statefulSet },
    { resource: 'pods', group: '', object: pod },
    { resource: 'services', group: '', object: service },
    { resource: 'persistentvolumeclaims', group: '', object: pvc },
    { resource: 'persistentvolumes', group: '', object: pv },
    { resource: 'configmaps', group: '', object: settings },
  ];
  return {
    items,
    userState: ['Profile', 'Notebook', 'PersistentVolumeClaim', 'ConfigMap'],
    leftToTheTarget: ['CustomResourceDefinition/workflows.argoproj.io', 'Workflow/run-finished', 'Workflow/run-running', 'CustomResourceDefinition/profiles.kubeflow.org', 'CustomResourceDefinition/notebooks.kubeflow.org', 'PersistentVolume/pvc-4f1c2d3e', 'Namespace', 'StatefulSet', 'Pod', 'Service'],
  };
}
