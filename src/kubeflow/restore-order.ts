import { knownKind, knownKinds } from './known-kinds.ts';

// The restore order as data, like Velero's restore priorities: Profiles first (phase 1, then wait for each
// namespace), then namespaced objects by priority (phase 2): identities and credentials before what uses them,
// storage before workloads, RBAC and policies before the workloads users reach through them. Kinds not listed here
// (users' Deployments, CronJobs, Argo templates, whatever a cluster serves) come after every listed one, in a stable
// order, as Velero does; they too are workloads that must find the namespace's PodDefaults and limits in place.
export interface RestoreStep {
  phase: 1 | 2;
  group: string;
  resource: string;
  kind: string;
}

/** the kinds the product names, in the order of the one kinds table (known-kinds.ts) */
export const restoreOrder: readonly RestoreStep[] = knownKinds.map(({ phase, group, resource, kind }) => ({ phase, group, resource, kind }));

const rank = new Map(restoreOrder.map((s, index) => [`${s.resource}.${s.group}`, index]));

/** position in the restore order; resources not listed come after every listed one */
export function restorePriority(group: string, resource: string): number {
  return rank.get(`${resource}.${group}`) ?? restoreOrder.length;
}

const podDefaultRank = rank.get('poddefaults.kubeflow.org')!;

/**
 * true for what makes Pods, or may: everything ordered after the PodDefaults, unknown kinds included. A PodDefault
 * changes only Pods created after it (kubeflow/kubeflow components/admission-webhook), so these wait for the
 * namespace's PodDefaults.
 */
export function isWorkloadStep(group: string, resource: string): boolean {
  return restorePriority(group, resource) > podDefaultRank;
}

/** true for what the restore writes before it fills new PVCs with their data (known-kinds.ts, beforeVolumeFill) */
export function isBeforeVolumeFill(group: string, resource: string): boolean {
  return knownKind(group, resource)?.beforeVolumeFill === true;
}

/** orders resources for restore: by priority, then (for unlisted ones) alphabetically as Velero does */
export function compareForRestore(a: { group: string; resource: string }, b: { group: string; resource: string }): number {
  const byPriority = restorePriority(a.group, a.resource) - restorePriority(b.group, b.resource);
  if (byPriority !== 0) return byPriority;
  return `${a.resource}.${a.group}`.localeCompare(`${b.resource}.${b.group}`);
}
