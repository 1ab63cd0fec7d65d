// KServe's validators of its other kinds, as canonical/kserve-operators ships them (charms/kserve-controller/src/
// templates/webhook_manifests.yaml.j2: inferencegraph and trainedmodel .kserve-webhook-server.validator on every track;
// servingruntime and clusterservingruntime from track 0.14, i.e. Charmed Kubeflow 1.10), each a plain error answered
// with controller-runtime's Denied (403), after kserve/kserve:
// - pkg/apis/serving/v1alpha1/inference_graph_validation.go (same sentences 0.11–0.15): the name, a node named root,
//   step names unique per node, exactly one target per step, a splitter's weights given and summing to 100;
// - pkg/apis/serving/v1alpha1/trainedmodel_webhook.go: the name, storageUri's prefix (pkg/agent/storage/provider.go
//   SupportedProtocols), memory unchanged on update (compared as written, not as parsed quantities);
// - pkg/webhook/admission/servingruntime/servingruntime_webhook.go (0.14 on): one priority per model format within a
//   runtime, and no two runtimes of the namespace (or two cluster runtimes) with a shared protocol giving one
//   auto-selected model format the same priority.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { WebhookAnswer, WebhookRequest } from '../webhooks.ts';

const deny = (message: string | undefined): WebhookAnswer => (message ? { allowed: false, code: 403, reason: 'Forbidden', message } : { allowed: true });

interface GraphStep { name?: string; nodeName?: string; serviceName?: string; serviceUrl?: string; weight?: number }
interface GraphNode { routerType?: string; steps?: GraphStep[] }

export function validateInferenceGraph(request: WebhookRequest): WebhookAnswer {
  const name = request.object.metadata.name ?? '';
  const format = '[a-z]([-a-z0-9]*[a-z0-9])?';
  if (!new RegExp(`^${format}$`).test(name))
    return deny(`The InferenceGraph "${name}" is invalid: a InferenceGraph name must consist of lower case alphanumeric characters or '-', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used for validation is '${format}')`);
  const nodes = Object.entries(((request.object.spec ?? {}) as { nodes?: Record<string, GraphNode> }).nodes ?? {});
  if (!nodes.some(([node]) => node === 'root')) return deny("root node not found, InferenceGraph needs a node with name 'root' as the root node of the graph");
  for (const [node, { steps = [] }] of nodes) {
    const seen = new Set<string>();
    for (const step of steps) {
      if (!step.name) continue;
      if (seen.has(step.name)) return deny(`Node "${node}" of InferenceGraph "${name}" contains more than one step with name "${step.name}"`);
      seen.add(step.name);
    }
  }
  for (const [node, { steps = [] }] of nodes) {
    for (const [i, step] of steps.entries()) {
      const targets = [step.nodeName, step.serviceName, step.serviceUrl].filter((t) => t).length;
      if (targets === 0) return deny(`Step ${i} ("${step.name ?? ''}") in node "${node}" of InferenceGraph "${name}" does not specify an inference target`);
      if (targets > 1) return deny(`Step ${i} ("${step.name ?? ''}") in node "${node}" of InferenceGraph "${name}" specifies more than one of nodeName, serviceName, serviceUrl`);
    }
  }
  for (const [node, { routerType, steps = [] }] of nodes) {
    if (routerType !== 'Splitter') continue;
    let total = 0;
    for (const step of steps) {
      if (step.weight === undefined) return deny(`InferenceGraph[${name}] Node[${node}] Route[${step.serviceName ?? ''}] missing the 'Weight'`);
      total += step.weight;
    }
    if (total !== 100) return deny(`InferenceGraph[${name}] Node[${node}] splitter node: the sum of traffic weights for all routing targets should be 100`);
  }
  return { allowed: true };
}

const STORAGE_PROTOCOLS = ['s3://', 'gs://', 'https://', 'http://'];

export function validateTrainedModel(request: WebhookRequest): WebhookAnswer {
  const name = request.object.metadata.name ?? '';
  const model = ((request.object.spec ?? {}) as { model?: { storageUri?: string; memory?: string | number } }).model ?? {};
  if (!/^[a-zA-Z0-9_-]+$/.test(name))
    return deny(`the Trained Model "${name}" is invalid: a Trained Model name must consist of alphanumeric characters, '_', or '-'. (e.g. "my-Name" or "abc_123", regex used for validation is '^[a-zA-Z0-9_-]+$')`);
  const uri = model.storageUri ?? '';
  if (!STORAGE_PROTOCOLS.some((p) => uri.startsWith(p)))
    return deny(`the Trained Model "${name}" storageUri field is invalid. The storage uri must start with one of the prefixes: ${STORAGE_PROTOCOLS.join(', ')}. (the storage uri given is "${uri}")`);
  if (request.oldObject) {
    const before = ((request.oldObject.spec ?? {}) as { model?: { memory?: string | number } }).model?.memory;
    if (String(before ?? '0') !== String(model.memory ?? '0'))
      return deny(`the Trained Model "${name}" memory field is immutable. The memory was "${before ?? '0'}" but it is updated to "${model.memory ?? '0'}"`);
  }
  return { allowed: true };
}

interface ModelFormat { name: string; version?: string; autoSelect?: boolean; priority?: number }
interface RuntimeSpec { disabled?: boolean; multiModel?: boolean; protocolVersions?: string[]; supportedModelFormats?: ModelFormat[] }

/** ServingRuntimeValidator.Handle (namespaced) and ClusterServingRuntimeValidator.Handle */
export function servingRuntimeValidator(clusterScoped: boolean): (request: WebhookRequest) => WebhookAnswer {
  return (request) => {
    const runtime = request.object;
    const spec = (runtime.spec ?? {}) as RuntimeSpec;
    const resource = clusterScoped ? 'clusterservingruntimes' : 'servingruntimes';
    const existing = request.cluster.list({ group: 'serving.kserve.io', resource }, clusterScoped ? {} : { namespace: request.namespace });
    if (spec.disabled) return { allowed: true };
    const name = runtime.metadata.name ?? '';
    for (const other of existing) {
      const same = formatWithTwoPriorities(spec);
      if (same) return deny(`different priorities assigned for the model format ${same} under the ${clusterScoped ? 'clusterservingruntime' : 'servingruntime'} ${name}`);
      const clash = samePriority(spec, other, name);
      if (clash) {
        return deny(clusterScoped
          ? `same priority assigned for the model format ${clash} in the clusterservingruntimes ${other.metadata.name} and ${name}`
          : `same priority assigned for the model format ${clash} in the servingruntimes ${other.metadata.name} and ${name} in namespace ${request.namespace}`);
      }
    }
    return { allowed: true };
  };
}

/** validateModelFormatPrioritySame */
function formatWithTwoPriorities(spec: RuntimeSpec): string | undefined {
  const priorities = new Map<string, number | undefined>();
  for (const format of spec.supportedModelFormats ?? []) {
    if (format.autoSelect !== true) continue;
    if (!priorities.has(format.name)) priorities.set(format.name, format.priority);
    else if (priorities.get(format.name) !== undefined && format.priority !== undefined && priorities.get(format.name) !== format.priority) return format.name;
  }
  return undefined;
}

/** validateServingRuntimePriority */
function samePriority(spec: RuntimeSpec, other: KubeObject, name: string): string | undefined {
  const existing = (other.spec ?? {}) as RuntimeSpec;
  if (Boolean(spec.multiModel) !== Boolean(existing.multiModel) || existing.disabled || other.metadata.name === name) return undefined;
  if (!(existing.protocolVersions ?? []).some((p) => (spec.protocolVersions ?? []).includes(p))) return undefined;
  for (const old of existing.supportedModelFormats ?? []) {
    for (const format of spec.supportedModelFormats ?? []) {
      const sameFormat = old.name.toLowerCase() === format.name.toLowerCase() && (old.version ?? null) === (format.version ?? null);
      if (old.autoSelect === true && format.autoSelect === true && sameFormat && old.priority !== undefined && format.priority !== undefined && old.priority === format.priority) return format.name;
    }
  }
  return undefined;
}
