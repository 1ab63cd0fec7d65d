// What kube-apiserver's admission counts and limits of the objects a restore writes, as data the dry run predicts
// from (src/restore/admission-forecast.ts). Each rule follows its upstream file (kubernetes/kubernetes, 1.30):
// - what a ResourceQuota counts of an object (pkg/quota/v1/evaluator/core/persistent_volume_claims.go, services.go,
//   registry.go; staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go for `count/<resource>.<group>`);
// - the refusal sentence (staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go, CheckRequest
//   and prettyPrint) and LimitRanger's on a claim (plugin/pkg/admission/limitranger/admission.go,
//   PersistentVolumeClaimValidateLimitFunc, minConstraint, maxRequestConstraint);
// - which quota the profile controller makes (kubeflow/kubeflow components/profile-controller/controllers/
//   profile_controller.go: `kf-resource-quota`, spec = the Profile's resourceQuotaSpec, when its hard list is not empty).
// Pods are not here: a restore never writes one (runtime-kinds.ts); the Pods controllers make later are charged by
// the server when they are made, which no dry run of the restore can ask.
import type { KubeObject } from '../kube/types.ts';
import { addQuantities, compareQuantities, formatQuantity, parseQuantity, zeroQuantity, type Quantity } from '../kube/quantity.ts';

export type Usage = Map<string, Quantity>;

/** the name of the quota the profile controller makes from a Profile's resourceQuotaSpec */
export const PROFILE_QUOTA_NAME = 'kf-resource-quota';

const ONE: Quantity = { nano: 1_000_000_000n, format: 'DecimalSI' };
const count = (n: number): Quantity => ({ nano: BigInt(n) * 1_000_000_000n, format: 'DecimalSI' });
const STORAGE_CLASS = '.storageclass.storage.k8s.io/';
/** core kinds quota also counts under their pre-`count/` names (registry.go, legacyObjectCountAliases) */
const LEGACY_NAMES = new Set(['configmaps', 'secrets', 'resourcequotas', 'replicationcontrollers']);
/** kinds quota never counts (pkg/quota/v1/install/registry.go, ignoredResources); none of them is restored */
const IGNORED = new Set(['/events', 'events.k8s.io/events', '/bindings']);

/** ObjectCountQuotaResourceNameFor: `count/<resource>` for the core group, else `count/<resource>.<group>` */
export function objectCountName(group: string, resource: string): string {
  return group === '' ? `count/${resource}` : `count/${resource}.${group}`;
}

function claimUsage(claim: KubeObject): Usage {
  const usage: Usage = new Map([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]]);
  const spec = (claim.spec ?? {}) as { storageClassName?: string; resources?: { requests?: Record<string, string> } };
  const storageClass = spec.storageClassName ?? claim.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '';
  if (storageClass) usage.set(`${storageClass}${STORAGE_CLASS}persistentvolumeclaims`, ONE);
  const requested = spec.resources?.requests?.storage;
  const parsed = requested === undefined ? undefined : parseQuantity(requested);
  if (parsed) {
    // counted in whole bytes (getStorageUsage's RoundUp(0))
    const storage = { ...parsed, nano: ((parsed.nano + 999_999_999n) / 1_000_000_000n) * 1_000_000_000n };
    usage.set('requests.storage', storage);
    if (storageClass) usage.set(`${storageClass}${STORAGE_CLASS}requests.storage`, storage);
  }
  return usage;
}

function serviceUsage(service: KubeObject): Usage {
  const spec = (service.spec ?? {}) as { type?: string; ports?: Array<{ nodePort?: number }>; allocateLoadBalancerNodePorts?: boolean };
  const ports = spec.ports ?? [];
  const usage: Usage = new Map([['count/services', ONE], ['services', ONE]]);
  if (spec.type === 'NodePort') usage.set('services.nodeports', count(ports.length));
  if (spec.type === 'LoadBalancer') {
    usage.set('services.nodeports', count(spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => p.nodePort).length : ports.length));
    usage.set('services.loadbalancers', ONE);
  }
  return usage;
}

/** what creating `object` (of `group`/`resource`) charges to a quota, by resource name; empty for what quota ignores */
export function quotaUsage(group: string, resource: string, object: KubeObject): Usage {
  if (IGNORED.has(`${group}/${resource}`)) return new Map();
  if (group === '' && resource === 'persistentvolumeclaims') return claimUsage(object);
  if (group === '' && resource === 'services') return serviceUsage(object);
  const usage: Usage = new Map([[objectCountName(group, resource), ONE]]);
  if (group === '' && LEGACY_NAMES.has(resource)) usage.set(resource, ONE);
  return usage;
}

/** MatchingResources: whether a quota's resource name counts objects of `group`/`resource` */
export function quotaCounts(group: string, resource: string, name: string): boolean {
  if (IGNORED.has(`${group}/${resource}`)) return false;
  if (group === '' && resource === 'persistentvolumeclaims') {
    return ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'].includes(name) ||
      (name.includes(STORAGE_CLASS) && (name.endsWith('/persistentvolumeclaims') || name.endsWith('/requests.storage')));
  }
  if (group === '' && resource === 'services') return ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'].includes(name);
  return name === objectCountName(group, resource) || (group === '' && LEGACY_NAMES.has(resource) && name === resource);
}

/** the hard lists of the quotas a namespace will have: its Profile's resourceQuotaSpec and the backup's quotas */
export function namespaceQuotaLimits(profile: KubeObject | undefined, archivedQuotas: readonly KubeObject[]): Array<Record<string, unknown>> {
  const hardOf = (spec: unknown) => (spec as { hard?: Record<string, unknown> } | undefined)?.hard ?? {};
  return [hardOf((profile?.spec as { resourceQuotaSpec?: unknown } | undefined)?.resourceQuotaSpec), ...archivedQuotas.map((q) => hardOf(q.spec))]
    .filter((hard) => Object.keys(hard).length > 0);
}

/**
 * Whether the objects of one kind a restore writes in a namespace, all together, pass a hard limit of its quotas:
 * only then does the order they reach the server decide which are refused.
 */
export function mayExceedQuota(limits: ReadonlyArray<Record<string, unknown>>, group: string, resource: string, objects: readonly KubeObject[]): boolean {
  const counted = limits.filter((hard) => Object.keys(hard).some((name) => quotaCounts(group, resource, name)));
  if (counted.length === 0) return false;
  const total: Usage = new Map();
  for (const object of objects) for (const [name, q] of quotaUsage(group, resource, object)) total.set(name, addQuantities(total.get(name) ?? zeroQuantity, q));
  return counted.some((hard) => {
    const parsed = parseHard(hard);
    // a hard list the server would not read is no reason to write one object at a time
    return parsed !== undefined && [...parsed].some(([name, limit]) => total.has(name) && compareQuantities(total.get(name)!, limit) > 0);
  });
}

/** a quota's hard list as the server reads it, or undefined when a value is no quantity (the server refuses that quota) */
export function parseHard(hard: Record<string, unknown> | undefined): Map<string, Quantity> | undefined {
  const out = new Map<string, Quantity>();
  for (const [name, value] of Object.entries(hard ?? {})) {
    const q = typeof value === 'string' || typeof value === 'number' ? parseQuantity(value) : undefined;
    if (!q) return undefined;
    out.set(name, q);
  }
  return out;
}

const listed = (map: ReadonlyMap<string, Quantity>, names: readonly string[]) =>
  names.map((n) => `${n}=${formatQuantity(map.get(n) ?? zeroQuantity)}`).join(',');

/**
 * CheckRequest for one quota: the refusal sentence when `requested` (what the object adds) takes `used` past `hard`
 * for any resource the quota tracks, naming only those, sorted; undefined when it fits.
 */
export function exceededQuota(name: string, hard: ReadonlyMap<string, Quantity>, used: ReadonlyMap<string, Quantity>, requested: Usage): string | undefined {
  const exceeded = [...requested.keys()]
    .filter((r) => hard.has(r) && requested.get(r)!.nano !== 0n)
    .filter((r) => compareQuantities(addQuantities(used.get(r) ?? zeroQuantity, requested.get(r)!), hard.get(r)!) > 0)
    .sort();
  if (exceeded.length === 0) return undefined;
  return `exceeded quota: ${name}, requested: ${listed(requested, exceeded)}, used: ${listed(used, exceeded)}, limited: ${listed(hard, exceeded)}`;
}

interface LimitItem { type?: string; min?: Record<string, string>; max?: Record<string, string> }

/**
 * LimitRanger on a claim: the problems one LimitRange finds with its `PersistentVolumeClaim` items' min and max on
 * spec.resources.requests (storage, in practice), in the server's words. The server refuses on the first LimitRange
 * with any, joined as utilerrors.NewAggregate joins them (`[a, b]` for more than one).
 */
export function claimLimitProblems(limitRange: KubeObject, claim: KubeObject): string[] {
  const requests = ((claim.spec as { resources?: { requests?: Record<string, string> } } | undefined)?.resources?.requests) ?? {};
  const items = ((limitRange.spec as { limits?: LimitItem[] } | undefined)?.limits ?? []).filter((i) => i.type === 'PersistentVolumeClaim');
  const problems: string[] = [];
  const printed = (text: string) => { const q = parseQuantity(text); return q ? formatQuantity(q) : text; };
  for (const item of items) {
    for (const [resource, enforced] of Object.entries(item.min ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      const request = requests[resource];
      if (request === undefined) problems.push(`minimum ${resource} usage per PersistentVolumeClaim is ${printed(enforced)}.  No request is specified`);
      else if (compareQuantities(parseQuantity(request) ?? zeroQuantity, parseQuantity(enforced) ?? zeroQuantity) < 0) problems.push(`minimum ${resource} usage per PersistentVolumeClaim is ${printed(enforced)}, but request is ${printed(request)}`);
    }
    for (const [resource, enforced] of Object.entries(item.max ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      const request = requests[resource];
      if (request === undefined) problems.push(`maximum ${resource} usage per PersistentVolumeClaim is ${printed(enforced)}.  No request is specified`);
      else if (compareQuantities(parseQuantity(request) ?? zeroQuantity, parseQuantity(enforced) ?? zeroQuantity) > 0) problems.push(`maximum ${resource} usage per PersistentVolumeClaim is ${printed(enforced)}, but request is ${printed(request)}`);
    }
  }
  return problems;
}

/** admission.NewForbidden's message: `<resource>[.<group>] "<name>" is forbidden: <why>` */
export function forbiddenSentence(group: string, resource: string, name: string, why: string): string {
  return `${group === '' ? resource : `${resource}.${group}`} "${name}" is forbidden: ${why}`;
}
