// Which ClusterRoles a profile owner may bind in their namespace, read from the cluster. The profile controller binds
// the owner to kubeflow-admin (kubeflow/kubeflow components/profile-controller/controllers/profile_controller.go,
// RoleBinding namespaceAdmin), and Kubernetes lets a user bind a ClusterRole whose permissions they hold
// (kubernetes pkg/registry/rbac/escalation_check.go, pkg/apis/rbac/validation). kubeflow-admin is an aggregated
// ClusterRole: it holds every ClusterRole labelled rbac.authorization.kubeflow.org/aggregate-to-kubeflow-admin, among
// them kubeflow-edit, which holds those labelled aggregate-to-kubeflow-edit (kubeflow-pipelines-edit, Katib's and
// KServe's edit roles, …), and so on down (kubernetes pkg/controller/clusterroleaggregation: an aggregated role's
// rules are the union of the roles its aggregationRule selects). So every ClusterRole aggregated, directly or through
// others, into kubeflow-admin, kubeflow-edit or kubeflow-view is one an owner may bind, as are the fixed ones of
// allow-list.ts. Which those are depends on the charms installed, so they are read, not listed.
import type { KubeObject } from '../kube/types.ts';
import { bindableClusterRoles } from './allow-list.ts';

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

function selects(selector: Selector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = key in labels;
    if (operator === 'In' && !(has && values.includes(labels[key]!))) return false;
    if (operator === 'NotIn' && has && values.includes(labels[key]!)) return false;
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
  }
  // an empty selector selects nothing in aggregation (clusterroleaggregation skips it)
  return Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0;
}

/** the fixed bindable roles plus every ClusterRole `clusterRoles` aggregates into one of them, transitively */
export function bindableRolesOf(clusterRoles: readonly KubeObject[]): Set<string> {
  const bindable = new Set(bindableClusterRoles);
  const byName = new Map(clusterRoles.map((role) => [role.metadata.name!, role]));
  const queue = [...bindable];
  while (queue.length) {
    const name = queue.shift()!;
    const selectors = ((byName.get(name) as { aggregationRule?: { clusterRoleSelectors?: Selector[] } } | undefined)?.aggregationRule?.clusterRoleSelectors) ?? [];
    for (const role of clusterRoles) {
      const roleName = role.metadata.name!;
      if (bindable.has(roleName)) continue;
      if (selectors.some((s) => selects(s, role.metadata.labels ?? {}))) {
        bindable.add(roleName);
        queue.push(roleName);
      }
    }
  }
  return bindable;
}

/** reads the cluster's ClusterRoles (a cluster that does not serve them, or will not list them to us, gives the fixed ones) */
export async function readBindableRoles(kube: {
  findByResource(group: string, resource: string): Promise<import('../kube/types.ts').ApiResource | undefined>;
  listAll(resource: import('../kube/types.ts').ApiResource): Promise<{ items: KubeObject[] }>;
}): Promise<Set<string>> {
  const resource = await kube.findByResource('rbac.authorization.k8s.io', 'clusterroles');
  if (!resource) return new Set(bindableClusterRoles);
  try {
    return bindableRolesOf((await kube.listAll(resource)).items);
  } catch {
    // not allowed to list them: the fixed six, which only ever refuses more, never less
    return new Set(bindableClusterRoles);
  }
}
