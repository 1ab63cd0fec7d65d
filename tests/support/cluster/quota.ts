// The ResourceQuota admission plugin, as kube-apiserver runs it on every create and update of a namespaced resource
// (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go: Evaluate,
// checkRequest, CheckRequest, prettyPrint), over the evaluators of quota-evaluators.ts. It reads each quota's
// status, which the quota controller (quota-controller.ts) fills, never a live count:
// - a quota applies when its status.hard names a resource the object's evaluator counts (generic.Matches; a quota
//   with scopes applies to Pods only, and only to those its scopes match);
// - `failed quota: <quota>: must specify …` when the evaluator's constraints fail (Pods without requests/limits);
// - `status unknown for quota: <quota>, resources: …` while the controller has not yet written status.used for a
//   resource the quota tracks (a quota just created);
// - `exceeded quota: <quota>, requested: …, used: …, limited: …` when the object's usage (on update, only what it
//   adds) would take status.used past status.hard; only the resources exceeded are named, sorted, each quantity
//   printed in its canonical form (quantity.ts);
// - otherwise the plugin itself writes the quota's new status.used before the object is stored, except on a dry run
//   (checkQuotas: "Don't update quota for admissionAttributes that correspond to dry-run requests").
// A quota never evicts: usage already past a hard limit refuses only what would add to it.
import type { KubeObject } from '../../../src/kube/types.ts';
import { add, compare, formatQuantity, parseQuantity, quantityOf, type Quantity } from './quantity.ts';
import { quotaEvaluator, type Usage } from './quota-evaluators.ts';

export interface QuotaAttributes {
  operation: 'CREATE' | 'UPDATE';
  group: string;
  resource: string;
  subresource: string;
  object: KubeObject;
  old: KubeObject | null;
}

export type QuotaDecision =
  | { refusal: string }
  | { refusal?: undefined; /** quotas whose status.used the request changes, as they are to be stored */ charged: KubeObject[] };

interface QuotaSpec { hard?: Record<string, string>; scopes?: string[]; scopeSelector?: { matchExpressions?: Array<{ scopeName?: string; operator?: string }> } }
interface QuotaStatus { hard?: Record<string, string>; used?: Record<string, string> }

function list(map: Map<string, Quantity>, keys: readonly string[]): string {
  return [...keys].sort().map((k) => `${k}=${formatQuantity(map.get(k) ?? quantityOf(0))}`).join(',');
}

function parsedList(record: Record<string, string> | undefined): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(record ?? {})) out.set(k, parseQuantity(v) ?? quantityOf(0));
  return out;
}

/** podMatchesScopeFunc for the scopes a quota names with `scopes` (BestEffort, NotBestEffort, Terminating, NotTerminating) */
function podInScope(scope: string, pod: KubeObject): boolean | undefined {
  const spec = (pod.spec ?? {}) as { activeDeadlineSeconds?: number; containers?: Array<{ resources?: { requests?: object; limits?: object } }>; initContainers?: Array<{ resources?: { requests?: object; limits?: object } }> };
  const bestEffort = [...(spec.containers ?? []), ...(spec.initContainers ?? [])].every((c) => Object.keys(c.resources?.requests ?? {}).length === 0 && Object.keys(c.resources?.limits ?? {}).length === 0);
  switch (scope) {
    case 'BestEffort': return bestEffort;
    case 'NotBestEffort': return !bestEffort;
    case 'Terminating': return spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds >= 0;
    case 'NotTerminating': return spec.activeDeadlineSeconds === undefined || spec.activeDeadlineSeconds < 0;
    default: return undefined;
  }
}

/** generic.Matches' scope half: no scope matches everything; Services, claims and counts match no scope at all */
export function scopesMatch(quota: KubeObject, group: string, resource: string, object: KubeObject): boolean {
  const spec = (quota.spec ?? {}) as QuotaSpec;
  const scopes = [...(spec.scopes ?? []), ...(spec.scopeSelector?.matchExpressions ?? []).map((e) => (e.operator === 'Exists' ? e.scopeName ?? '' : `${e.scopeName}:${e.operator}`))];
  if (scopes.length === 0) return true;
  if (!(group === '' && resource === 'pods')) return false;
  // a scope this simulation does not know (PriorityClass selectors, CrossNamespacePodAffinity) is taken as not matching
  return scopes.every((s) => podInScope(s, object) === true);
}

/** the quota plugin's answer to one write: a refusal, or the quotas to store with their new status.used */
export function checkQuota(quotas: readonly KubeObject[], attributes: QuotaAttributes): QuotaDecision {
  const evaluator = quotaEvaluator(attributes.group, attributes.resource);
  if (!evaluator || !evaluator.handles(attributes.operation, attributes.subresource)) return { charged: [] };
  const interesting: Array<{ quota: KubeObject; hard: Map<string, Quantity>; used: Map<string, Quantity> }> = [];
  for (const quota of [...quotas].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
    const status = (quota.status ?? {}) as QuotaStatus;
    const tracked = Object.keys(status.hard ?? {}).filter((r) => evaluator.matches(r));
    if (tracked.length === 0 || !scopesMatch(quota, attributes.group, attributes.resource, attributes.object)) continue;
    const why = evaluator.constraints(tracked, attributes.object);
    if (why) return { refusal: `failed quota: ${quota.metadata.name}: ${why}` };
    const unknown = tracked.filter((r) => status.used?.[r] === undefined);
    if (unknown.length > 0) return { refusal: `status unknown for quota: ${quota.metadata.name}, resources: ${tracked.sort().join(',')}` };
    interesting.push({ quota, hard: parsedList(status.hard), used: parsedList(status.used) });
  }
  if (interesting.length === 0) return { charged: [] };
  const usage = evaluator.usage(attributes.object);
  const negative = [...usage].filter(([, q]) => q.nano < 0n).map(([k]) => k);
  if (negative.length > 0) return { refusal: `quota usage is negative for resource(s): ${negative.sort().join(',')}` };
  // on update, charge only what the object adds (SubtractWithNonNegativeResult), when the old object was stored
  const delta: Usage = new Map(usage);
  if (attributes.operation === 'UPDATE' && attributes.old?.metadata.resourceVersion) {
    const before = evaluator.usage(attributes.old);
    for (const [k, q] of delta) {
      const nano = q.nano - (before.get(k)?.nano ?? 0n);
      delta.set(k, { ...q, nano: nano > 0n ? nano : 0n });
    }
  }
  for (const [k, q] of delta) if (q.nano === 0n) delta.delete(k);
  if (delta.size === 0) return { charged: [] };
  const charged: KubeObject[] = [];
  for (const { quota, hard, used } of interesting) {
    const requested = new Map([...delta].filter(([k]) => hard.has(k)));
    if (requested.size === 0) continue;
    const next = new Map(used);
    for (const [k, q] of requested) next.set(k, add(next.get(k) ?? quantityOf(0), q));
    if (attributes.subresource !== 'status') {
      const exceeded = [...requested.keys()].filter((k) => compare(next.get(k)!, hard.get(k)!) > 0);
      if (exceeded.length > 0) {
        return { refusal: `exceeded quota: ${quota.metadata.name}, requested: ${list(requested, exceeded)}, used: ${list(used, exceeded)}, limited: ${list(hard, exceeded)}` };
      }
    }
    const status = (quota.status ?? {}) as QuotaStatus;
    const usedText: Record<string, string> = { ...status.used };
    for (const k of requested.keys()) usedText[k] = formatQuantity(next.get(k)!);
    charged.push({ ...quota, status: { ...status, used: usedText } });
  }
  return { charged };
}
