// The KFP profile controller (a metacontroller decorator over namespaces labelled pipelines.kubeflow.org/enabled=true),
// simulated after canonical/kfp-operators track/2.5 charms/kfp-profile-controller/files/upstream/sync.py: per
// namespace the metadata ConfigMap, the visualization server and UI artifact Deployments and Services, the
// access-ml-pipeline PodDefault, two AuthorizationPolicies and the MinIO Secret, and the kfp-launcher ConfigMap only
// when the charm's default_pipeline_root is set (empty by default: users make their own kfp-launcher, as KFP's docs
// tell them). Each child is controlled by the Namespace, as metacontroller sets it (metacontroller
// pkg/controller/common/manage_children.go), and metacontroller never adopts an object that exists already: a user's
// kfp-launcher stays the user's. The children come on metacontroller's next sync of the namespace, not with it
// (resyncPeriodSeconds in the charm's CompositeController): `delayMs` models that wait.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi, ResourceRef } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerReference, ensure, reconciler } from './reconciler.ts';

export const kfpEnabledLabel = 'pipelines.kubeflow.org/enabled';

function deployment(namespace: string, name: string, image: string, port: number): [KubeObject, KubeObject] {
  const labels = { app: name };
  return [{
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace, labels },
    spec: {
      replicas: 1, selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { serviceAccountName: 'default-editor', containers: [{ name, image, ports: [{ containerPort: port }] }] } },
    },
  }, {
    apiVersion: 'v1', kind: 'Service', metadata: { name, namespace, labels },
    spec: { selector: labels, ports: [{ name: 'http', port, targetPort: port, protocol: 'TCP' }] },
  }];
}

export interface KfpProfileControllerOptions {
  /** the charm's default_pipeline_root; unset (the charm's default) makes no kfp-launcher */
  defaultPipelineRoot?: string;
  /** how long after a namespace appears its children do (metacontroller's sync); default 10 ms */
  delayMs?: number;
}

function desiredObjects(namespace: string, options: KfpProfileControllerOptions): Array<[ResourceRef, KubeObject]> {
  const [vizDeployment, vizService] = deployment(namespace, 'ml-pipeline-visualizationserver', 'charmedkubeflow/visualization-server:2.5.0', 8888);
  const [uiDeployment, uiService] = deployment(namespace, 'ml-pipeline-ui-artifact', 'charmedkubeflow/frontend:2.5.0', 3000);
  const meta = (name: string) => ({ name, namespace });
  const launcher: Array<[ResourceRef, KubeObject]> = options.defaultPipelineRoot
    ? [[refs.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('kfp-launcher'), data: { defaultPipelineRoot: options.defaultPipelineRoot } }]]
    : [];
  return [
    ...launcher,
    [refs.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('metadata-grpc-configmap'), data: { METADATA_GRPC_SERVICE_HOST: 'mlmd.kubeflow', METADATA_GRPC_SERVICE_PORT: '8080' } }],
    [refs.deployments, vizDeployment], [refs.services, vizService],
    [refs.deployments, uiDeployment], [refs.services, uiService],
    [refs.podDefaults, {
      apiVersion: 'kubeflow.org/v1alpha1', kind: 'PodDefault', metadata: meta('access-ml-pipeline'),
      spec: {
        desc: 'Allow access to Kubeflow Pipelines',
        selector: { matchLabels: { 'access-ml-pipeline': 'true' } },
        env: [{ name: 'KF_PIPELINES_SA_TOKEN_PATH', value: '/var/run/secrets/kubeflow/pipelines/token' }],
        volumes: [{ name: 'volume-kf-pipeline-token', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 7200, audience: 'pipelines.kubeflow.org' } }] } }],
        volumeMounts: [{ mountPath: '/var/run/secrets/kubeflow/pipelines', name: 'volume-kf-pipeline-token', readOnly: true }],
      },
    }],
    [refs.authorizationPolicies, {
      apiVersion: 'security.istio.io/v1beta1', kind: 'AuthorizationPolicy', metadata: meta('ml-pipeline-visualizationserver'),
      spec: { selector: { matchLabels: { app: 'ml-pipeline-visualizationserver' } }, rules: [{ from: [{ source: { principals: ['cluster.local/ns/kubeflow/sa/kfp-api'] } }] }] },
    }],
    [refs.authorizationPolicies, {
      apiVersion: 'security.istio.io/v1beta1', kind: 'AuthorizationPolicy', metadata: meta('ns-owner-access-istio-charmed'),
      spec: { rules: [{ from: [{ source: { principals: ['cluster.local/ns/kubeflow/sa/kfp-ui'] } }] }] },
    }],
    [refs.secrets, {
      apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: meta('mlpipeline-minio-artifact'),
      data: { accesskey: Buffer.from('minio').toString('base64'), secretkey: Buffer.from('minio-secret-key-0123').toString('base64') },
    }],
  ];
}

function reconcileNamespace(api: InProcessApi, name: string, options: KfpProfileControllerOptions): void {
  const namespace = api.get(refs.namespaces, name);
  if (!namespace || namespace.metadata.deletionTimestamp) return;
  if (namespace.metadata.labels?.[kfpEnabledLabel] !== 'true') return;
  const owner = [controllerReference(namespace)];
  for (const [ref, desired] of desiredObjects(name, options)) {
    const existing = api.get(ref, desired.metadata.name!, name);
    // not adopted: an object of that name the namespace does not control is left as it is
    if (existing && !existing.metadata.ownerReferences?.some((r) => r.controller && r.uid === namespace.metadata.uid)) continue;
    desired.metadata.ownerReferences = owner;
    ensure(api, ref, desired, desired.kind === 'ConfigMap' || desired.kind === 'Secret' ? ['data'] : ['spec']);
  }
}

export function kfpProfileController(options: KfpProfileControllerOptions = {}) {
  const ownedByNamespace = (o: KubeObject, type: string) =>
    type === 'DELETED' && o.metadata.ownerReferences?.some((r) => r.controller && r.kind === 'Namespace') ? [o.metadata.namespace!] : [];
  return reconciler({
    name: 'kfp-profile-controller',
    delayMs: options.delayMs ?? 10,
    watches: [
      { ref: refs.namespaces, keys: (o, type) => (type === 'DELETED' ? [] : [o.metadata.name!]) },
      ...[refs.configMaps, refs.deployments, refs.services, refs.podDefaults, refs.authorizationPolicies, refs.secrets]
        .map((ref) => ({ ref, keys: ownedByNamespace })),
    ],
    reconcile: (api, key) => reconcileNamespace(api, key, options),
  });
}
