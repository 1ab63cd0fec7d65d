// What the API server does to a new Pod's resources before the ResourceQuota check, in its order:
// 1. defaulting on decode (kubernetes pkg/apis/core/v1/defaults.go, SetDefaults_Pod): a container that sets a limit
//    and no request for a resource requests its limit;
// 2. the LimitRanger admission plugin, a mutating plugin that runs before the validating ResourceQuota plugin
//    (kubernetes plugin/pkg/admission/limitranger/admission.go, PodMutateLimitFunc / mergePodResourceRequirements):
//    each container (and init container) that does not set a request or limit gets the `defaultRequest` and
//    `default` of every LimitRange item of type Container in its namespace. A LimitRange item is itself defaulted
//    when stored (defaults.go, SetDefaults_LimitRangeItem): `default` from `max`, `defaultRequest` from `default`, then
//    from `min`; the same is applied here when it is read, which gives the same values.
// Only then does the ResourceQuota plugin (quota.ts) require and count requests and limits.
import type { KubeObject } from '../../../src/kube/types.ts';

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
