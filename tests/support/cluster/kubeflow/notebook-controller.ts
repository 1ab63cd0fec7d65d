// The notebook controller, simulated: a Notebook becomes a StatefulSet (one replica, none when stopped), a Service,
// an Istio VirtualService under /notebook/<ns>/<name>/, and the StatefulSet's pod, as the StatefulSet controller
// would make it. The Notebook's status follows the pod. As upstream's generateStatefulSet does (kubeflow/kubeflow
// components/notebook-controller/controllers/notebook_controller.go), the pod carries every label of the Notebook,
// which is how the PodDefaults the user ticked (label access-ml-pipeline: "true", say) select it.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, ensure, peek, keyOf, reconciler, splitKey } from './reconciler.ts';

const stoppedAnnotation = 'kubeflow-resource-stopped';

function reconcileNotebook(api: InProcessApi, key: string): void {
  const { namespace, name } = splitKey(key);
  const notebook = peek(api, refs.notebooks, name, namespace);
  if (!notebook || notebook.metadata.deletionTimestamp) return;
  const ns = namespace!;
  const template = ((notebook.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template ?? {}) as { spec?: Record<string, unknown> };
  // read only: `notebook` is the stored object (frozen), and create and update copy what they are given
  const podSpec = template.spec ?? { containers: [] };
  const labels = { statefulset: name, 'notebook-name': name, ...notebook.metadata.labels };
  const replicas = notebook.metadata.annotations?.[stoppedAnnotation] ? 0 : 1;
  const owner = [controllerReference(notebook)];
  const statefulSet = ensure(api, refs.statefulSets, {
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: { name, namespace: ns, ownerReferences: owner },
    spec: { replicas, serviceName: '', selector: { matchLabels: { statefulset: name } }, template: { metadata: { labels }, spec: podSpec } },
  });
  ensure(api, refs.services, {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name, namespace: ns, ownerReferences: owner },
    spec: { type: 'ClusterIP', selector: { statefulset: name }, ports: [{ name: `http-${name}`.slice(0, 63), port: 80, targetPort: 8888, protocol: 'TCP' }] },
  });
  const prefix = `/notebook/${ns}/${name}/`;
  ensure(api, refs.virtualServices, {
    apiVersion: 'networking.istio.io/v1beta1', kind: 'VirtualService',
    metadata: { name: `notebook-${ns}-${name}`.slice(0, 253), namespace: ns, ownerReferences: owner },
    spec: {
      hosts: ['*'], gateways: ['kubeflow/kubeflow-gateway'],
      http: [{ match: [{ uri: { prefix } }], rewrite: { uri: prefix }, route: [{ destination: { host: `${name}.${ns}.svc.cluster.local`, port: { number: 80 } } }] }],
    },
  });
  const podName = `${name}-0`;
  const pod = peek(api, refs.pods, podName, ns);
  if (replicas === 1 && !pod) {
    api.create(refs.pods, {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: podName, namespace: ns, labels: { ...labels, 'statefulset.kubernetes.io/pod-name': podName }, ownerReferences: [controllerReference(statefulSet)] },
      spec: { ...podSpec, hostname: podName },
      status: { phase: 'Running' },
    });
  } else if (replicas === 0 && pod) {
    api.delete(refs.pods, podName, ns);
  }
  const status = { readyReplicas: replicas, containerState: replicas ? { running: { startedAt: notebook.metadata.creationTimestamp } } : {}, conditions: replicas ? [{ type: 'Ready', status: 'True' }] : [] };
  if (JSON.stringify(notebook.status) !== JSON.stringify(status)) api.updateStatus(refs.notebooks, { ...notebook, status });
}

export function notebookController() {
  const byNotebook = controllerOwnerKeys('Notebook');
  const byStatefulSet = controllerOwnerKeys('StatefulSet');
  return reconciler({
    name: 'notebook-controller',
    delayMs: 8,
    watches: [
      { ref: refs.notebooks, keys: (o) => [keyOf(o)] },
      { ref: refs.statefulSets, keys: (o, type) => (type === 'DELETED' ? byNotebook(o) : []) },
      { ref: refs.services, keys: (o, type) => (type === 'DELETED' ? byNotebook(o) : []) },
      { ref: refs.virtualServices, keys: (o, type) => (type === 'DELETED' ? byNotebook(o) : []) },
      // a deleted pod is recreated; the StatefulSet's name is the Notebook's
      { ref: refs.pods, keys: (o, type) => (type === 'DELETED' ? byStatefulSet(o) : []) },
    ],
    reconcile: reconcileNotebook,
  });
}
