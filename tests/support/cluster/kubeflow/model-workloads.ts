// The Juju model's own workloads, as Juju's sidecar charms lay them out in the model namespace: one StatefulSet per
// application, labelled app.kubernetes.io/name, with the charm container beside the workload containers and their
// images, and its pod. A charm reads the model inventory (applications and images) from these. Scaling an
// application (`juju scale-application`, which sets its StatefulSet's replicas) is honoured the way the StatefulSet
// controller does it: pods come and go with spec.replicas and status.readyReplicas counts the running ones.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerReference, ensure, reconciler } from './reconciler.ts';

export const modelNamespace = 'kubeflow';
const charmBase = 'jujusolutions/charm-base:ubuntu-22.04';

/** application → workload containers (name, image) of Charmed Kubeflow 1.10 */
export const modelApplications: Readonly<Record<string, Array<[container: string, image: string]>>> = {
  'kubeflow-profiles': [['kubeflow-profiles', 'charmedkubeflow/profile-controller:1.10.0'], ['kubeflow-kfam', 'charmedkubeflow/kfam:1.10.0']],
  'kubeflow-dashboard': [['kubeflow-dashboard', 'charmedkubeflow/centraldashboard:1.10.0']],
  'jupyter-controller': [['jupyter-controller', 'charmedkubeflow/notebook-controller:1.10.0']],
  'jupyter-ui': [['jupyter-ui', 'charmedkubeflow/jupyter-web-app:1.10.0']],
  'admission-webhook': [['admission-webhook', 'charmedkubeflow/admission-webhook:1.10.0']],
  'kfp-api': [['ml-pipeline-api-server', 'charmedkubeflow/api-server:2.5.0']],
  // canonical/kfp-operators track/2.5 charms/kfp-persistence and charms/kfp-schedwf metadata.yaml
  'kfp-persistence': [['persistenceagent', 'charmedkubeflow/persistenceagent:2.5.0']],
  'kfp-schedwf': [['ml-pipeline-scheduledworkflow', 'charmedkubeflow/scheduledworkflow:2.5.0']],
  'katib-db-manager': [['katib-db-manager', 'charmedkubeflow/katib-db-manager:v0.18.0']],
  // canonical/mlmd-operator track/ckf-1.10 metadata.yaml (container mlmd-grpc-server, storage mlmd-data at /data)
  'mlmd': [['mlmd-grpc-server', 'charmedkubeflow/ml-metadata:1.17.1']],
  'kfp-metadata-writer': [['kfp-metadata-writer', 'charmedkubeflow/metadata-writer:2.5.0']],
  'kfp-profile-controller': [['kfp-profile-controller', 'python:3.12-slim']],
  'kfp-ui': [['ml-pipeline-ui', 'charmedkubeflow/frontend:2.5.0']],
  'katib-controller': [['katib-controller', 'charmedkubeflow/katib-controller:v0.18.0']],
  'kserve-controller': [['kserve-controller', 'charmedkubeflow/kserve-controller:0.15.0']],
  'training-operator': [['training-operator', 'charmedkubeflow/training-operator:v1.9.0']],
  'minio': [['minio', 'minio/minio:RELEASE.2024-10-13T13-34-11Z']],
  'kfp-db': [['mysql', 'ghcr.io/canonical/charmed-mysql:8.0.41-22.04_edge']],
  'katib-db': [['mysql', 'ghcr.io/canonical/charmed-mysql:8.0.41-22.04_edge']],
  'istio-pilot': [],
  'kubeflow-upgrader': [],
};

/** Filesystem storage of the applications that have some: application → storage name and mount point. */
const modelStorage: Readonly<Record<string, { storage: string; location: string }>> = {
  mlmd: { storage: 'mlmd-data', location: '/data' },
};

/**
 * Juju's volumeClaimTemplate for a storage: `<app>-<storage>-<app uuid>` labelled storage.juju.is/name and
 * app.kubernetes.io/managed-by (juju/juju Kubernetes provider application_test.go, TestEnsureStateful).
 */
function claimTemplate(app: string, storage: string): KubeObject {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: {
      name: `${app}-${storage}-${app}-uuid`.replace(/[^a-z0-9-]/g, '-'),
      labels: { 'storage.juju.is/name': storage, 'app.kubernetes.io/managed-by': 'juju' },
      annotations: { 'storage.juju.is/name': storage },
    },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } },
  };
}

function statefulSet(app: string, containers: Array<[string, string]>, replicas: number): KubeObject {
  const labels = { 'app.kubernetes.io/name': app };
  const storage = modelStorage[app];
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: {
      name: app, namespace: modelNamespace,
      labels: { ...labels, 'app.kubernetes.io/managed-by': 'juju' },
      annotations: { 'juju.is/version': '3.6.4', 'app.juju.is/uuid': `${app}-uuid` },
    },
    spec: {
      replicas, serviceName: `${app}-endpoints`, selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: app,
          containers: [
            { name: 'charm', image: charmBase },
            ...containers.map(([name, image]) => ({ name, image })),
          ],
        },
      },
      ...(storage ? { volumeClaimTemplates: [claimTemplate(app, storage.storage)] } : {}),
    },
  };
}

function reconcileModel(api: InProcessApi): number | void {
  const namespace = api.get(refs.namespaces, modelNamespace);
  if (!namespace) {
    api.create(refs.namespaces, {
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: modelNamespace, labels: { 'app.kubernetes.io/managed-by': 'juju', 'model.juju.is/name': modelNamespace } },
    });
    return 0;
  }
  if (namespace.metadata.deletionTimestamp) return 500;
  for (const [app, containers] of Object.entries(modelApplications)) {
    const existing = api.get(refs.statefulSets, app, modelNamespace);
    const replicas = (existing?.spec as { replicas?: number } | undefined)?.replicas ?? 1;
    const set = ensure(api, refs.statefulSets, statefulSet(app, containers, replicas));
    const podName = `${app}-0`;
    // The StatefulSet controller makes unit 0's claim from each template (`<template>-<set>-0`) and keeps it when
    // the set scales down.
    for (const template of ((set.spec as { volumeClaimTemplates?: KubeObject[] }).volumeClaimTemplates ?? [])) {
      const claim = `${template.metadata.name}-${app}-0`;
      if (!api.get(refs.persistentVolumeClaims, claim, modelNamespace)) {
        api.create(refs.persistentVolumeClaims, { ...structuredClone(template), metadata: { ...structuredClone(template.metadata), name: claim, namespace: modelNamespace } });
      }
    }
    const pod = api.get(refs.pods, podName, modelNamespace);
    const ready = replicas > 0 ? 1 : 0;
    if ((set.status as { readyReplicas?: number } | undefined)?.readyReplicas !== ready) {
      api.updateStatus(refs.statefulSets, { ...set, status: { replicas: ready, readyReplicas: ready, availableReplicas: ready } });
    }
    if (replicas === 0) {
      if (pod) api.delete(refs.pods, podName, modelNamespace);
      continue;
    }
    if (!pod) {
      const template = (set.spec as { template: { metadata: { labels: Record<string, string> }; spec: unknown } }).template;
      api.create(refs.pods, {
        apiVersion: 'v1', kind: 'Pod',
        metadata: { name: podName, namespace: modelNamespace, labels: { ...template.metadata.labels }, ownerReferences: [controllerReference(set)] },
        spec: structuredClone(template.spec),
        status: { phase: 'Running' },
      });
    }
  }
}

export function modelWorkloadsController() {
  const inModel = (o: KubeObject, type: string) => (type === 'DELETED' && o.metadata.namespace === modelNamespace ? ['model'] : []);
  return reconciler({
    name: 'juju-model-workloads',
    delayMs: 2,
    initialKeys: ['model'],
    watches: [
      { ref: refs.namespaces, keys: (o) => (o.metadata.name === modelNamespace ? ['model'] : []) },
      { ref: refs.statefulSets, keys: (o, type) => (o.metadata.namespace === modelNamespace && (type === 'DELETED' || type === 'MODIFIED') ? ['model'] : []) },
      { ref: refs.pods, keys: inModel },
    ],
    reconcile: (api) => reconcileModel(api),
  });
}
