// Kubeflow's PodDefault admission webhook, simulated after kubeflow/kubeflow components/admission-webhook (main.go and
// its MutatingWebhookConfiguration): it is called for Pod CREATE only; every PodDefault of the Pod's namespace whose
// selector matches the Pod's labels adds its env, volumes, volumeMounts, annotations and labels, and the Pod is
// annotated poddefault.admission.kubeflow.org/poddefault-<name> with the PodDefault's resourceVersion. A Pod that
// exists is never changed again: a PodDefault made after a Pod's creation does nothing to it.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Cluster } from '../cluster.ts';
import { refs } from './refs.ts';

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

/** metav1.LabelSelector semantics */
function matchesLabelSelector(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = key in labels;
    if (operator === 'In' && !(has && values.includes(labels[key]!))) return false;
    if (operator === 'NotIn' && has && values.includes(labels[key]!)) return false;
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

interface PodDefaultSpec {
  selector?: LabelSelector;
  env?: Array<{ name: string }>;
  volumes?: Array<{ name: string }>;
  volumeMounts?: Array<{ name: string; mountPath?: string }>;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

interface Container {
  env?: Array<{ name: string }>;
  volumeMounts?: Array<{ name: string }>;
}

export const podDefaultAnnotationPrefix = 'poddefault.admission.kubeflow.org/poddefault-';

function addByName<T extends { name: string }>(into: T[] | undefined, more: T[] | undefined): T[] | undefined {
  if (!more?.length) return into;
  const out = [...(into ?? [])];
  for (const item of more) if (!out.some((o) => o.name === item.name)) out.push(structuredClone(item));
  return out;
}

function apply(pod: KubeObject, podDefault: KubeObject): void {
  const spec = (podDefault.spec ?? {}) as PodDefaultSpec;
  const podSpec = (pod.spec ?? {}) as { containers?: Container[]; volumes?: Array<{ name: string }> };
  for (const container of podSpec.containers ?? []) {
    const env = addByName(container.env, spec.env);
    if (env) container.env = env;
    const mounts = addByName(container.volumeMounts, spec.volumeMounts);
    if (mounts) container.volumeMounts = mounts;
  }
  const volumes = addByName(podSpec.volumes, spec.volumes);
  if (volumes) podSpec.volumes = volumes;
  pod.spec = podSpec;
  pod.metadata.annotations = { ...spec.annotations, ...pod.metadata.annotations, [`${podDefaultAnnotationPrefix}${podDefault.metadata.name}`]: podDefault.metadata.resourceVersion ?? '' };
  if (spec.labels) pod.metadata.labels = { ...spec.labels, ...pod.metadata.labels };
}

/** installs the webhook on the cluster; returns its removal */
export function installPodDefaultWebhook(cluster: Cluster): () => void {
  return cluster.addCreateMutator(refs.pods, (pod) => {
    const namespace = pod.metadata.namespace;
    if (!namespace || !cluster.findResource(refs.podDefaults)) return;
    const labels = pod.metadata.labels ?? {};
    for (const podDefault of cluster.list(refs.podDefaults, { namespace })) {
      const selector = (podDefault.spec as PodDefaultSpec | undefined)?.selector;
      // an empty or missing selector selects nothing (the webhook skips PodDefaults without a selector match)
      if (!selector || (!selector.matchLabels && !selector.matchExpressions)) continue;
      if (matchesLabelSelector(selector, labels)) apply(pod, podDefault);
    }
  });
}
