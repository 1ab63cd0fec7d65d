// What the API server does to a new Pod's resources before the ResourceQuota check, in its order:
// 1. defaulting on decode (kubernetes/kubernetes pkg/apis/core/v1/defaults.go, SetDefaults_Pod): a container that sets a limit
//    and no request for a resource requests its limit;
// 2. the LimitRanger admission plugin, a mutating plugin that runs before the validating ResourceQuota plugin
//    (kubernetes/kubernetes plugin/pkg/admission/limitranger/admission.go, PodMutateLimitFunc / mergePodResourceRequirements):
//    each container (and init container) that does not set a request or limit gets the `defaultRequest` and
//    `default` of every LimitRange item of type Container in its namespace. A LimitRange item is itself defaulted
//    when stored (defaults.go, SetDefaults_LimitRangeItem): `default` from `max`, `defaultRequest` from `default`, then
//    from `min`; the same is applied here when it is read, which gives the same values.
// Only then does the ResourceQuota plugin (quota.ts) require and count requests and limits.
import type { KubeObject } from '../../../src/kube/types.ts';
import { canonical, compare, quantity, quantityOf } from './quantity.ts';

interface Resources { requests?: Record<string, string>; limits?: Record<string, string> }
interface Container { resources?: Resources }
interface LimitRangeItem { type?: string; default?: Record<string, string>; defaultRequest?: Record<string, string>; max?: Record<string, string>; min?: Record<string, string> }

/** SetDefaults_LimitRangeItem for a Container item: the defaults it stands for */
function containerDefaults(item: LimitRangeItem): { limits: Record<string, string>; requests: Record<string, string> } {
  const limits = { ...(item.default ?? {}) };
  for (const [k, v] of Object.entries(item.max ?? {})) limits[k] ??= v;
  const requests = { ...(item.defaultRequest ?? {}) };
  for (const [k, v] of Object.entries(limits)) requests[k] ??= v;
  for (const [k, v] of Object.entries(item.min ?? {})) requests[k] ??= v;
  return { limits, requests };
}

function containersOf(pod: KubeObject): Container[] {
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  return [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
}

/** SetDefaults_Pod's rule for requests: a limit with no request requests the limit */
export function defaultRequestsFromLimits(pod: KubeObject): void {
  for (const c of containersOf(pod)) {
    const limits = c.resources?.limits;
    if (!limits) continue;
    const requests = (c.resources!.requests ??= {});
    for (const [k, v] of Object.entries(limits)) requests[k] ??= v;
  }
}

/** LimitRanger's defaults, applied in place to a new Pod from the LimitRanges of its namespace */
export function applyLimitRangeDefaults(pod: KubeObject, limitRanges: readonly KubeObject[]): void {
  const defaults = { limits: {} as Record<string, string>, requests: {} as Record<string, string> };
  for (const range of limitRanges) {
    for (const item of ((range.spec as { limits?: LimitRangeItem[] } | undefined)?.limits ?? [])) {
      if (item.type !== 'Container') continue;
      const d = containerDefaults(item);
      Object.assign(defaults.limits, d.limits);
      Object.assign(defaults.requests, d.requests);
    }
  }
  if (Object.keys(defaults.limits).length === 0 && Object.keys(defaults.requests).length === 0) return;
  for (const c of containersOf(pod)) {
    const resources = (c.resources ??= {});
    for (const [k, v] of Object.entries(defaults.limits)) {
      if (resources.limits?.[k] === undefined) (resources.limits ??= {})[k] = v;
    }
    for (const [k, v] of Object.entries(defaults.requests)) {
      if (resources.requests?.[k] === undefined) (resources.requests ??= {})[k] = v;
    }
  }
}

// 3. LimitRanger's validation of the new Pod, after the defaults (admission.go, PodValidateLimitFunc with
//    minConstraint, maxConstraint and limitRequestRatioConstraint), on create only (SupportsAttributes: a Pod's
//    resources cannot change on update). Container items bind each container and init container; Pod items bind the
//    Pod's totals (the sum of its containers, or the largest init container where that is larger). Every broken rule of
//    every LimitRange is named, joined as utilerrors.NewAggregate joins them, and the Pod is refused with 403
//    Forbidden. Quantities print as written, which is the server's canonical form for canonical input ("500m", "1Gi").
interface ValidatedItem extends LimitRangeItem { maxLimitRequestRatio?: Record<string, string> }
interface Observed { requests: Record<string, string>; limits: Record<string, string> }

function minProblem(type: string, resource: string, enforced: string, on: Observed): string | undefined {
  const request = on.requests[resource];
  const limit = on.limits[resource];
  if (request === undefined) return `minimum ${resource} usage per ${type} is ${enforced}.  No request is specified`;
  if (quantity(request) < quantity(enforced)) return `minimum ${resource} usage per ${type} is ${enforced}, but request is ${request}`;
  if (limit !== undefined && quantity(limit) < quantity(enforced)) return `minimum ${resource} usage per ${type} is ${enforced}, but limit is ${limit}`;
  return undefined;
}

function maxProblem(type: string, resource: string, enforced: string, on: Observed): string | undefined {
  const request = on.requests[resource];
  const limit = on.limits[resource];
  if (limit === undefined) return `maximum ${resource} usage per ${type} is ${enforced}.  No limit is specified`;
  if (quantity(limit) > quantity(enforced)) return `maximum ${resource} usage per ${type} is ${enforced}, but limit is ${limit}`;
  if (request !== undefined && quantity(request) > quantity(enforced)) return `maximum ${resource} usage per ${type} is ${enforced}, but request is ${request}`;
  return undefined;
}

function ratioProblem(type: string, resource: string, enforced: string, on: Observed): string | undefined {
  const request = quantity(on.requests[resource]);
  const limit = quantity(on.limits[resource]);
  if (on.requests[resource] === undefined || request === 0) return `${resource} max limit to request ratio per ${type} is ${enforced}, but no request is specified or request is 0`;
  if (on.limits[resource] === undefined || limit === 0) return `${resource} max limit to request ratio per ${type} is ${enforced}, but no limit is specified or limit is 0`;
  const ratio = limit / request;
  // Go compares in milli-units, so a ratio equal to the maximum passes whatever the rounding of the division
  if (Math.round(ratio * 1000) > Math.round(quantity(enforced) * 1000)) return `${resource} max limit to request ratio per ${type} is ${enforced}, but provided ratio is ${ratio.toFixed(6)}`;
  return undefined;
}

function checks(type: string, item: ValidatedItem, on: Observed): string[] {
  const out: string[] = [];
  const sorted = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [k, v] of sorted(item.min)) out.push(minProblem(type, k, v, on) ?? '');
  for (const [k, v] of sorted(item.max)) out.push(maxProblem(type, k, v, on) ?? '');
  for (const [k, v] of sorted(item.maxLimitRequestRatio)) out.push(ratioProblem(type, k, v, on) ?? '');
  return out.filter(Boolean);
}

/** the Pod's totals per resource: the sum over its containers, or the largest init container's where larger */
function podTotals(pod: KubeObject, which: 'requests' | 'limits'): Record<string, string> {
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  const sums = new Map<string, number>();
  for (const c of spec.containers ?? []) for (const [k, v] of Object.entries(c.resources?.[which] ?? {})) sums.set(k, (sums.get(k) ?? 0) + quantity(v));
  for (const c of spec.initContainers ?? []) for (const [k, v] of Object.entries(c.resources?.[which] ?? {})) sums.set(k, Math.max(sums.get(k) ?? 0, quantity(v)));
  return Object.fromEntries([...sums].map(([k, v]) => [k, String(v)]));
}

/** why LimitRanger refuses the (defaulted) Pod, or undefined */
export function limitRangeRefusal(pod: KubeObject, limitRanges: readonly KubeObject[]): string | undefined {
  const problems: string[] = [];
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  for (const range of limitRanges) {
    for (const item of ((range.spec as { limits?: ValidatedItem[] } | undefined)?.limits ?? [])) {
      if (item.type === 'Container') {
        for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])])
          problems.push(...checks('Container', item, { requests: c.resources?.requests ?? {}, limits: c.resources?.limits ?? {} }));
      } else if (item.type === 'Pod') {
        problems.push(...checks('Pod', item, { requests: podTotals(pod, 'requests'), limits: podTotals(pod, 'limits') }));
      }
    }
  }
  const unique = [...new Set(problems)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}

// 4. LimitRanger's validation of a PersistentVolumeClaim, on create and on update (admission.go,
//    PersistentVolumeClaimValidateLimitFunc; SupportsAttributes takes PVCs on both): each PersistentVolumeClaim item
//    binds spec.resources.requests, `min` with minConstraint (limits are not user input for a claim) and `max` with
//    maxRequestConstraint, compared at milli precision. runLimitFunc refuses on the first LimitRange with a broken
//    rule, its errors joined as utilerrors.NewAggregate joins them; quantities print in canonical form.
function pvcItemProblems(item: LimitRangeItem, requests: Record<string, string>): string[] {
  const out: string[] = [];
  const sorted = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [resource, enforced] of sorted(item.min)) {
    const request = requests[resource];
    if (request === undefined) out.push(`minimum ${resource} usage per PersistentVolumeClaim is ${canonical(enforced)}.  No request is specified`);
    else if (compare(quantityOf(request), quantityOf(enforced)) < 0) out.push(`minimum ${resource} usage per PersistentVolumeClaim is ${canonical(enforced)}, but request is ${canonical(request)}`);
  }
  for (const [resource, enforced] of sorted(item.max)) {
    const request = requests[resource];
    if (request === undefined) out.push(`maximum ${resource} usage per PersistentVolumeClaim is ${canonical(enforced)}.  No request is specified`);
    else if (compare(quantityOf(request), quantityOf(enforced)) > 0) out.push(`maximum ${resource} usage per PersistentVolumeClaim is ${canonical(enforced)}, but request is ${canonical(request)}`);
  }
  return out;
}

/** why LimitRanger refuses the claim, or undefined */
export function pvcLimitRangeRefusal(pvc: KubeObject, limitRanges: readonly KubeObject[]): string | undefined {
  const requests = ((pvc.spec as { resources?: { requests?: Record<string, string> } } | undefined)?.resources?.requests) ?? {};
  for (const range of limitRanges) {
    const items = ((range.spec as { limits?: LimitRangeItem[] } | undefined)?.limits ?? []).filter((i) => i.type === 'PersistentVolumeClaim');
    const problems = items.flatMap((item) => pvcItemProblems(item, requests));
    if (problems.length > 0) return problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`;
  }
  return undefined;
}
