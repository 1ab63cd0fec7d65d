// ResourceQuota admission for Pod creation, as the API server's ResourceQuota plugin does it
// (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go, CheckRequest)
// with the Pod evaluator (kubernetes/kubernetes pkg/quota/v1/evaluator/core/pods.go):
// - a quota that tracks cpu/memory (requests.* or limits.*) refuses a Pod any of whose containers does not set that
//   value: `failed quota: <quota>: must specify limits.cpu for: <containers>; …`;
// - otherwise the Pod's usage is added to what non-terminal Pods of the namespace use, and a quota whose hard limit
//   would be passed refuses it: `exceeded quota: <quota>, requested: …, used: …, limited: …`.
// Usage is counted live from the stored Pods here, where the real server reads the quota controller's status.used.
// The Pod it sees has already been defaulted and passed through LimitRanger (limit-ranges.ts), as on a real server.
import type { KubeObject } from '../../../src/kube/types.ts';

const COMPUTE = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'] as const;
type Compute = (typeof COMPUTE)[number];
const COUNTED = [...COMPUTE, 'pods'] as const;
type Counted = (typeof COUNTED)[number];

const SUFFIX: Record<string, number> = {
  '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A Kubernetes quantity (`500m`, `1`, `512Mi`, `1e3`) as a number in its base unit. */
export function quantity(text: string | number | undefined): number {
  if (text === undefined) return 0;
  if (typeof text === 'number') return text;
  const match = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.exec(text.trim());
  if (!match) throw new Error(`quantities must match the regular expression of a Kubernetes quantity, got "${text}"`);
  return Number(match[1]) * SUFFIX[match[2] ?? '']!;
}

/** As the API server prints quantities in its refusals: cpu in whole cores or millicores, memory in binary units. */
function print(resource: Counted, value: number): string {
  if (resource === 'pods') return String(value);
  if (resource.endsWith('cpu')) return Number.isInteger(value) ? String(value) : `${Math.round(value * 1000)}m`;
  for (const unit of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const) if (value >= SUFFIX[unit]! && value % SUFFIX[unit]! === 0) return `${value / SUFFIX[unit]!}${unit}`;
  return String(value);
}

interface Container { name?: string; resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }

function containers(pod: KubeObject): Container[] {
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  return [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
}

/** Which compute values one container sets, under the names a quota uses. */
function containerSets(c: Container): Set<Compute> {
  const set = new Set<Compute>();
  if (c.resources?.requests?.cpu !== undefined) set.add('cpu').add('requests.cpu');
  if (c.resources?.requests?.memory !== undefined) set.add('memory').add('requests.memory');
  if (c.resources?.limits?.cpu !== undefined) set.add('limits.cpu');
  if (c.resources?.limits?.memory !== undefined) set.add('limits.memory');
  return set;
}

function usage(pod: KubeObject): Record<Counted, number> {
  const out = { pods: 1 } as Record<Counted, number>;
  for (const key of COMPUTE) out[key] = 0;
  // main containers add up; an init container runs alone, so only the largest counts (the effective request)
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  const sum = (list: Container[], pick: (c: Container) => string | undefined) => list.reduce((n, c) => n + quantity(pick(c)), 0);
  const max = (list: Container[], pick: (c: Container) => string | undefined) => list.reduce((n, c) => Math.max(n, quantity(pick(c))), 0);
  const pickers: Record<Compute, (c: Container) => string | undefined> = {
    cpu: (c) => c.resources?.requests?.cpu, 'requests.cpu': (c) => c.resources?.requests?.cpu,
    memory: (c) => c.resources?.requests?.memory, 'requests.memory': (c) => c.resources?.requests?.memory,
    'limits.cpu': (c) => c.resources?.limits?.cpu, 'limits.memory': (c) => c.resources?.limits?.memory,
  };
  for (const key of COMPUTE) out[key] = Math.max(sum(spec.containers ?? [], pickers[key]), max(spec.initContainers ?? [], pickers[key]));
  return out;
}

function terminal(pod: KubeObject): boolean {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The refusal for creating `pod` next to `pods` under `quotas`, or undefined when every quota admits it. */
export function quotaRefusal(pod: KubeObject, quotas: readonly KubeObject[], pods: readonly KubeObject[]): string | undefined {
  const wanted = usage(pod);
  for (const q of quotas) {
    const hard = ((q.spec as { hard?: Record<string, string> } | undefined)?.hard ?? {}) as Record<string, string>;
    const tracked = COUNTED.filter((r) => hard[r] !== undefined);
    if (tracked.length === 0) continue;
    const required = tracked.filter((r): r is Compute => r !== 'pods');
    const missing = new Map<Compute, string[]>();
    for (const c of containers(pod)) {
      const sets = containerSets(c);
      for (const r of required) if (!sets.has(r)) missing.set(r, [...(missing.get(r) ?? []), c.name ?? '']);
    }
    if (missing.size > 0) {
      const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...new Set(missing.get(r))].sort().join(',')}`);
      return `failed quota: ${q.metadata.name}: must specify ${parts.join('; ')}`;
    }
    const used = {} as Record<Counted, number>;
    for (const r of tracked) used[r] = pods.filter((p) => !terminal(p) && !p.metadata.deletionTimestamp).reduce((n, p) => n + usage(p)[r], 0);
    const exceeded = tracked.filter((r) => wanted[r] > 0 && used[r] + wanted[r] > quantity(hard[r]) + 1e-9).sort();
    if (exceeded.length > 0) {
      const list = (value: (r: Counted) => string) => exceeded.map((r) => `${r}=${value(r)}`).join(',');
      return `exceeded quota: ${q.metadata.name}, requested: ${list((r) => print(r, wanted[r]))}, used: ${list((r) => print(r, used[r]))}, limited: ${list((r) => hard[r]!)}`;
    }
  }
  return undefined;
}
