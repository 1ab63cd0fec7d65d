// The KFP profile controller (a metacontroller decorator over namespaces labelled pipelines.kubeflow.org/enabled=true),
// simulated: per namespace the launcher and metadata ConfigMaps, the visualization server and UI artifact
// Deployments and Services, the access-ml-pipeline PodDefault, two AuthorizationPolicies and the MinIO Secret,
// each controlled by the Namespace as metacontroller sets it.
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

function desiredObjects(namespace: string): Array<[ResourceRef, KubeObject]> {
  const [vizDeployment, vizService] = deployment(namespace, 'ml-pipeline-visualizationserver', 'charmedkubeflow/visualization-server:2.5.0', 8888);
  const [uiDeployment, uiService] = deployment(namespace, 'ml-pipeline-ui-artifact', 'charmedkubeflow/frontend:2.5.0', 3000);
  const meta = (name: string) => ({ name, namespace });
  return [
    [refs.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('kfp-launcher'), data: { defaultPipelineRoot: 'minio://mlpipeline/v2/artifacts' } }],
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

function reconcileNamespace(api: InProcessApi, name: string): void {
  const namespace = api.get(refs.namespaces, name);
  if (!namespace || namespace.metadata.deletionTimestamp) return;
  if (namespace.metadata.labels?.[kfpEnabledLabel] !== 'true') return;
  const owner = [controllerReference(namespace)];
  for (const [ref, desired] of desiredObjects(name)) {
    desired.metadata.ownerReferences = owner;
    ensure(api, ref, desired, desired.kind === 'ConfigMap' || desired.kind === 'Secret' ? ['data'] : ['spec']);
  }
}

export function kfpProfileController() {
  const ownedByNamespace = (o: KubeObject, type: string) =>
    type === 'DELETED' && o.metadata.ownerReferences?.some((r) => r.controller && r.kind === 'Namespace') ? [o.metadata.namespace!] : [];
  return reconciler({
    name: 'kfp-profile-controller',
    delayMs: 10,
    watches: [
      { ref: refs.namespaces, keys: (o, type) => (type === 'DELETED' ? [] : [o.metadata.name!]) },
      ...[refs.configMaps, refs.deployments, refs.services, refs.podDefaults, refs.authorizationPolicies, refs.secrets]
        .map((ref) => ({ ref, keys: ownedByNamespace })),
    ],
    reconcile: reconcileNamespace,
  });
}
