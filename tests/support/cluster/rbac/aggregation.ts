// The ClusterRole aggregation controller, after kubernetes/kubernetes pkg/controller/clusterroleaggregation/
// clusterroleaggregation_controller.go: any change of any ClusterRole queues every ClusterRole that has an
// aggregationRule (enqueue); each one's rules become the rules of the ClusterRoles its selectors pick
// (metav1.LabelSelectorAsSelector: matchLabels and matchExpressions, an empty selector picks every role), role by role in
// name order, itself left out, each rule once (ruleExists); the role is written only when that differs (Semantic
// DeepEqual, for which an absent and an empty list are the same).
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Controller } from '../contract.ts';
import { reconciler } from '../kubeflow/reconciler.ts';
import { RBAC_REFS } from './authorizer.ts';
import type { PolicyRule } from './rules.ts';

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

type ClusterRole = KubeObject & { aggregationRule?: { clusterRoleSelectors?: LabelSelector[] }; rules?: PolicyRule[] | null };

/** labels.Selector of metav1.LabelSelectorAsSelector */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const present = Object.prototype.hasOwnProperty.call(labels, key);
    if (operator === 'In' && !(present && values.includes(labels[key]!))) return false;
    if (operator === 'NotIn' && present && values.includes(labels[key]!)) return false;
    if (operator === 'Exists' && !present) return false;
    if (operator === 'DoesNotExist' && present) return false;
  }
  return true;
}

/** the rules syncClusterRole computes for `role` from `all` */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  const byName = [...all].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    for (const other of byName) {
      if (other.metadata.name === role.metadata.name || !selectorMatches(selector, other.metadata.labels ?? {})) continue;
      for (const rule of other.rules ?? []) {
        const key = canonical(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(rule);
      }
    }
  }
  return rules;
}

/** a rule's identity for Semantic.DeepEqual: absent and empty lists alike */
function canonical(rule: PolicyRule): string {
  const list = (l: string[] | undefined) => (l && l.length ? l : []);
  return JSON.stringify([list(rule.verbs), list(rule.apiGroups), list(rule.resources), list(rule.resourceNames), list(rule.nonResourceURLs)]);
}

export function clusterRoleAggregationController(): Controller {
  return reconciler({
    name: 'clusterrole-aggregation-controller',
    delayMs: 1,
    watches: [{
      ref: RBAC_REFS.clusterRoles,
      // enqueue(): every aggregated role, whichever role changed (read when the event comes)
      keys: () => [AGGREGATED],
    }],
    initialKeys: [AGGREGATED],
    reconcile(api) {
      const all = api.list(RBAC_REFS.clusterRoles) as ClusterRole[];
      for (const role of all) {
        if (!role.aggregationRule) continue;
        const rules = aggregatedRules(role, all);
        const current = role.rules ?? [];
        if (rules.length === current.length && rules.every((r, i) => canonical(r) === canonical(current[i]!))) continue;
        api.update(RBAC_REFS.clusterRoles, { ...role, rules } as KubeObject);
        return 0; // one write changes what the others aggregate: read them all again
      }
    },
  });
}

/** the one queue key: the controller recomputes every aggregated role, which is what enqueue() asks for */
const AGGREGATED = 'aggregated-cluster-roles';
