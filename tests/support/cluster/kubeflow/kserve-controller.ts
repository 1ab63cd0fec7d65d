// KServe in raw-deployment mode, simulated: an InferenceService becomes a <name>-predictor Deployment and Service and
// a VirtualService, all controlled by it; its status reports the URL and readiness.
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, ensure, keyOf, reconciler, splitKey } from './reconciler.ts';

interface Predictor {
  model?: { modelFormat?: { name?: string }; storageUri?: string; runtime?: string };
  containers?: unknown[];
}

function reconcileInferenceService(api: InProcessApi, key: string): void {
  const { namespace, name } = splitKey(key);
  const isvc = api.get(refs.inferenceServices, name, namespace);
  if (!isvc || isvc.metadata.deletionTimestamp) return;
  const ns = namespace!;
  const predictor = ((isvc.spec as { predictor?: Predictor } | undefined)?.predictor ?? {}) as Predictor;
  const format = predictor.model?.modelFormat?.name ?? 'custom';
  const predictorName = `${name}-predictor`;
  const labels = { app: predictorName, 'serving.kserve.io/inferenceservice': name, component: 'predictor' };
  const owner = [controllerReference(isvc)];
  ensure(api, refs.deployments, {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: predictorName, namespace: ns, labels, ownerReferences: owner },
    spec: {
      replicas: 1, selector: { matchLabels: { app: predictorName } },
      template: {
        metadata: { labels },
        spec: {
          containers: predictor.containers ?? [{
            name: 'kserve-container', image: `kserve/${format}server:v0.15.0`,
            args: [`--model_name=${name}`, '--model_dir=/mnt/models', '--http_port=8080'],
          }],
          initContainers: predictor.model?.storageUri
            ? [{ name: 'storage-initializer', image: 'kserve/storage-initializer:v0.15.0', args: [predictor.model.storageUri, '/mnt/models'] }] : [],
        },
      },
    },
  });
  ensure(api, refs.services, {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: predictorName, namespace: ns, labels, ownerReferences: owner },
    spec: { selector: { app: predictorName }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  const host = `${name}.${ns}.svc.cluster.local`;
  ensure(api, refs.virtualServices, {
    apiVersion: 'networking.istio.io/v1beta1', kind: 'VirtualService',
    metadata: { name, namespace: ns, ownerReferences: owner },
    spec: { hosts: [host], gateways: ['kubeflow/kubeflow-gateway', 'knative-serving/knative-local-gateway'], http: [{ route: [{ destination: { host: `${predictorName}.${ns}.svc.cluster.local`, port: { number: 80 } } }] }] },
  });
  const status = {
    url: `http://${host}`,
    address: { url: `http://${predictorName}.${ns}.svc.cluster.local` },
    conditions: [{ type: 'PredictorReady', status: 'True' }, { type: 'Ready', status: 'True' }],
  };
  if (JSON.stringify(isvc.status) !== JSON.stringify(status)) api.updateStatus(refs.inferenceServices, { ...isvc, status });
}

export function kserveController() {
  const byIsvc = controllerOwnerKeys('InferenceService');
  return reconciler({
    name: 'kserve-controller',
    delayMs: 10,
    watches: [
      { ref: refs.inferenceServices, keys: (o) => [keyOf(o)] },
      ...[refs.deployments, refs.services, refs.virtualServices].map((ref) => ({ ref, keys: (o: Parameters<typeof byIsvc>[0], type: string) => (type === 'DELETED' ? byIsvc(o) : []) })),
    ],
    reconcile: reconcileInferenceService,
  });
}
