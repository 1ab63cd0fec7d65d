// What a ResourceQuota counts of each object, as kube-apiserver's quota registry measures it: one evaluator per
// group-resource, shared by the admission plugin (quota.ts) and the quota controller (quota-controller.ts), as
// upstream shares them (kubernetes/kubernetes pkg/quota/v1/install/registry.go).
// - Pods (pkg/quota/v1/evaluator/core/pods.go): `count/pods` for every Pod; `pods`, cpu, memory and ephemeral-storage
//   requests and limits and extended resources' requests (`requests.nvidia.com/gpu`) only for a Pod that has not
//   finished (QuotaV1Pod); a quota on cpu or memory requires every container to set it (podConstraints).
// - PersistentVolumeClaims (persistent_volume_claims.go): `persistentvolumeclaims`, `count/persistentvolumeclaims`,
//   `requests.storage` (rounded up to a whole byte, or status.allocatedResources when larger), and the same per
//   storage class as `<class>.storageclass.storage.k8s.io/persistentvolumeclaims` and `…/requests.storage`.
// - Services (services.go): `services`, `count/services`, `services.nodeports` (a NodePort or LoadBalancer
//   Service's ports; a LoadBalancer with allocateLoadBalancerNodePorts false only the ports that name one) and
//   `services.loadbalancers`.
// - Every other resource (staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go, objectCountEvaluator):
//   `count/<resource>[.<group>]`, on CREATE only; configmaps, secrets, resourcequotas and replicationcontrollers also
//   under their legacy names (core/registry.go, legacyObjectCountAliases).
// - Events, bindings and the review kinds are never counted (pkg/quota/v1/install/registry.go, ignoredResources).
import type { KubeObject } from '../../../src/kube/types.ts';
import { add, quantityOf, type Quantity } from './quantity.ts';

export type Usage = Map<string, Quantity>;

export interface QuotaEvaluator {
  /** MatchingResources for one resource name of a quota's hard list */
  matches(resourceName: string): boolean;
  /** Handles: whether this write can change what a quota counts */
  handles(operation: 'CREATE' | 'UPDATE', subresource: string): boolean;
  usage(object: KubeObject): Usage;
  /** Constraints: why the object cannot be charged to a quota that tracks `required`, or undefined */
  constraints(required: readonly string[], object: KubeObject): string | undefined;
}

const ONE: Quantity = { nano: 1_000_000_000n, format: 'DecimalSI' };
const ZERO_SI: Quantity = { nano: 0n, format: 'DecimalSI' };

/** ObjectCountQuotaResourceNameFor */
export function objectCountName(group: string, resource: string): string {
  return group === '' ? `count/${resource}` : `count/${resource}.${group}`;
}

const IGNORED = new Set([
  '/bindings', '/componentstatuses', '/events', 'events.k8s.io/events',
  'authentication.k8s.io/tokenreviews', 'authentication.k8s.io/selfsubjectreviews',
  'authorization.k8s.io/subjectaccessreviews', 'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews', 'authorization.k8s.io/selfsubjectrulesreviews',
]);

const LEGACY: Record<string, string> = { configmaps: 'configmaps', secrets: 'secrets', resourcequotas: 'resourcequotas', replicationcontrollers: 'replicationcontrollers' };

function objectCount(group: string, resource: string): QuotaEvaluator {
  const names = [objectCountName(group, resource), ...(group === '' && LEGACY[resource] ? [LEGACY[resource]!] : [])];
  return {
    matches: (name) => names.includes(name),
    handles: (operation) => operation === 'CREATE',
    usage: () => new Map(names.map((n) => [n, ONE])),
    constraints: () => undefined,
  };
}

// ---- Pods ----------------------------------------------------------------------------------------------------

interface Container { name?: string; resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }
const POD_COMPUTE = ['cpu', 'memory', 'ephemeral-storage'] as const;
const POD_NAMES = new Set(['pods', 'count/pods', 'cpu', 'memory', 'ephemeral-storage', ...POD_COMPUTE.flatMap((r) => [`requests.${r}`, `limits.${r}`])]);
/** podConstraints' validation set: the compute resources a quota makes every container name */
const REQUIRED_PER_CONTAINER = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

function containersOf(pod: KubeObject): { main: Container[]; init: Container[] } {
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  return { main: spec.containers ?? [], init: spec.initContainers ?? [] };
}

/** QuotaV1Pod: a Pod that has finished is no longer charged for its compute resources */
function podIsLive(pod: KubeObject): boolean {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

/** PodRequests / PodLimits: the sum over containers, or the largest init container's where larger */
function podTotal(pod: KubeObject, which: 'requests' | 'limits', resource: string): Quantity {
  const { main, init } = containersOf(pod);
  let sum = ZERO_SI;
  for (const c of main) sum = add(sum, quantityOf(c.resources?.[which]?.[resource]));
  for (const c of init) {
    const q = quantityOf(c.resources?.[which]?.[resource]);
    if (q.nano > sum.nano) sum = q;
  }
  return sum;
}

/**
 * IsExtendedResourceName (pkg/apis/core/v1/helper/helpers.go): a resource outside the kubernetes.io domain, such as
 * `nvidia.com/gpu`; quota counts its requests as `requests.<name>` (podComputeUsageHelper), which Kubeflow profiles'
 * resourceQuotaSpec often names.
 */
function isExtended(resource: string): boolean {
  return resource.includes('/') && !resource.startsWith('requests.') && !resource.split('/')[0]!.endsWith('kubernetes.io');
}

function extendedRequests(pod: KubeObject): Set<string> {
  const { main, init } = containersOf(pod);
  return new Set([...main, ...init].flatMap((c) => Object.keys(c.resources?.requests ?? {})).filter(isExtended));
}

const pods: QuotaEvaluator = {
  matches: (name) => POD_NAMES.has(name) || (name.startsWith('requests.') && isExtended(name.slice('requests.'.length))),
  handles: (operation) => operation === 'CREATE',
  usage(pod) {
    const usage: Usage = new Map([['count/pods', ONE]]);
    if (!podIsLive(pod)) return usage;
    usage.set('pods', ONE);
    for (const r of POD_COMPUTE) {
      const requests = podTotal(pod, 'requests', r);
      const limits = podTotal(pod, 'limits', r);
      if (requests.nano !== 0n) usage.set(`requests.${r}`, requests).set(r, requests);
      if (limits.nano !== 0n) usage.set(`limits.${r}`, limits);
    }
    for (const r of extendedRequests(pod)) usage.set(`requests.${r}`, podTotal(pod, 'requests', r));
    return usage;
  },
  constraints(required, pod) {
    const wanted = required.filter((r) => REQUIRED_PER_CONTAINER.includes(r));
    if (wanted.length === 0) return undefined;
    const { main, init } = containersOf(pod);
    const missing = new Map<string, Set<string>>();
    for (const c of [...main, ...init]) {
      const has = (r: string) => {
        const [which, resource] = r.includes('.') ? (r.split('.') as ['requests' | 'limits', string]) : (['requests', r] as const);
        return c.resources?.[which]?.[resource] !== undefined;
      };
      for (const r of wanted) if (!has(r)) missing.set(r, (missing.get(r) ?? new Set()).add(c.name ?? ''));
    }
    if (missing.size === 0) return undefined;
    return `must specify ${[...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`).join('; ')}`;
  },
};

// ---- PersistentVolumeClaims ----------------------------------------------------------------------------------

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

function claimClass(pvc: KubeObject): string {
  const spec = (pvc.spec ?? {}) as { storageClassName?: string };
  // GetPersistentVolumeClaimClass: the field, else the beta annotation
  return spec.storageClassName ?? pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '';
}

function claimStorage(pvc: KubeObject): Quantity | undefined {
  const requested = ((pvc.spec as { resources?: { requests?: Record<string, string> } } | undefined)?.resources?.requests ?? {}).storage;
  if (requested === undefined) return undefined;
  const round = (q: Quantity): Quantity => ({ ...q, nano: ((q.nano + 999_999_999n) / 1_000_000_000n) * 1_000_000_000n });
  const request = round(quantityOf(requested));
  const allocated = ((pvc.status as { allocatedResources?: Record<string, string> } | undefined)?.allocatedResources ?? {}).storage;
  if (allocated === undefined) return request;
  const a = round(quantityOf(allocated));
  return a.nano > request.nano ? a : request;
}

const persistentVolumeClaims: QuotaEvaluator = {
  matches: (name) =>
    ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'].includes(name) ||
    name.endsWith(`${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`) || name.endsWith(`${STORAGE_CLASS_SUFFIX}requests.storage`),
  // the status subresource counts only when allocatedResources changes (RequiresQuotaReplenish); that is the
  // resize controller's write, which nothing here makes
  handles: (operation, subresource) => subresource === '' && (operation === 'CREATE' || operation === 'UPDATE'),
  usage(pvc) {
    const usage: Usage = new Map([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]]);
    const storageClass = claimClass(pvc);
    if (storageClass) usage.set(`${storageClass}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, ONE);
    const storage = claimStorage(pvc);
    if (storage) {
      usage.set('requests.storage', storage);
      if (storageClass) usage.set(`${storageClass}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
    }
    return usage;
  },
  constraints: () => undefined,
};

// ---- Services ------------------------------------------------------------------------------------------------

const SERVICE_NAMES = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

const services: QuotaEvaluator = {
  matches: (name) => SERVICE_NAMES.includes(name),
  // create and update: a Service's type can change
  handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
  usage(service) {
    const spec = (service.spec ?? {}) as { type?: string; ports?: Array<{ nodePort?: number }>; allocateLoadBalancerNodePorts?: boolean };
    const ports = spec.ports ?? [];
    const count = (n: number): Quantity => ({ nano: BigInt(n) * 1_000_000_000n, format: 'DecimalSI' });
    const usage: Usage = new Map([['count/services', ONE], ['services', ONE], ['services.loadbalancers', ZERO_SI], ['services.nodeports', ZERO_SI]]);
    if (spec.type === 'NodePort') usage.set('services.nodeports', count(ports.length));
    if (spec.type === 'LoadBalancer') {
      const nodePorts = spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => p.nodePort).length : ports.length;
      usage.set('services.nodeports', count(nodePorts)).set('services.loadbalancers', ONE);
    }
    return usage;
  },
  constraints: () => undefined,
};

/** the registry: the evaluator quota uses for a group-resource, or undefined for a resource quota ignores */
export function quotaEvaluator(group: string, resource: string): QuotaEvaluator | undefined {
  if (IGNORED.has(`${group}/${resource}`)) return undefined;
  if (group === '' && resource === 'pods') return pods;
  if (group === '' && resource === 'persistentvolumeclaims') return persistentVolumeClaims;
  if (group === '' && resource === 'services') return services;
  return objectCount(group, resource);
}
