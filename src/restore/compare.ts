// Comparing state: "does the live object already hold what the archive sets?" for the restore (a rerun writes
// nothing), and "do two clusters hold the same user state?" for the round-trip check of tests and the demo.
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import { backupDecision } from '../kubeflow/backup-selection.ts';
import { readBindableRoles } from '../kubeflow/bindable-roles.ts';
import { groupOf } from '../kubeflow/identity.ts';
import { stateResources } from '../kubeflow/kinds.ts';
import { asRestoredForStatus } from '../kubeflow/status-kinds.ts';
import { findProfileNamespaces } from '../kubeflow/profile-namespaces.ts';
import { restorable } from './normalize.ts';

/**
 * The paths (`spec.template.image`) where `live` does not hold what `wanted` sets. Only what `wanted` sets is
 * compared: fields the server or a controller added (defaults, extra labels) are not differences. Arrays must
 * have the same length, and each element is compared the same way (servers default fields inside list items).
 */
export function unmetFields(wanted: unknown, live: unknown, path = ''): string[] {
  if (wanted === null || typeof wanted !== 'object') {
    return wanted === live ? [] : [path || '(object)'];
  }
  if (Array.isArray(wanted)) {
    if (!Array.isArray(live) || live.length !== wanted.length) return [path || '(object)'];
    return wanted.flatMap((item, index) => unmetFields(item, live[index], `${path}[${index}]`));
  }
  if (live === null || typeof live !== 'object' || Array.isArray(live)) return [path || '(object)'];
  const out: string[] = [];
  for (const [key, value] of Object.entries(wanted)) {
    out.push(...unmetFields(value, (live as Record<string, unknown>)[key], path ? `${path}.${key}` : key));
  }
  return out;
}

/** how an object is named across clusters: group/Kind/namespace/name */
export function identityOf(object: KubeObject): string {
  return `${groupOf(object.apiVersion)}/${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

/**
 * the state of an object that must match across clusters: restorable fields, owners named by kind and name, not uid;
 * a finished Experiment as the restore writes it (pinned so that Katib keeps it finished: src/kubeflow/status-kinds.ts)
 */
export function comparable(object: KubeObject): KubeObject {
  const copy = restorable(asRestoredForStatus(object));
  if (copy.metadata.ownerReferences) {
    copy.metadata.ownerReferences = copy.metadata.ownerReferences.map(({ uid: _uid, ...owner }) => owner as typeof owner & { uid: string });
  }
  return copy;
}

export interface StateDifference {
  object: string;
  /** `skipped`: missing, as expected, because the restore named it skipped (not a difference; `reason` says why) */
  problem: 'missing' | 'extra' | 'different' | 'skipped';
  /** for `different`: the paths that differ */
  fields?: string[];
  /** for `skipped`: the restore's reason */
  reason?: string;
}

/** An object the restore named as skipped, with its reason (the restore-state results' `skipped-objects`). */
export interface NamedSkip {
  kind: string;
  /** '' for a cluster-scoped object */
  namespace: string;
  name: string;
  reason: string;
}

/**
 * Every difference between the user state of `expected` and `actual`: objects missing from `actual`, extra in it,
 * and fields that differ (compared both ways after `comparable`, so a field dropped or added counts). An object
 * missing from `actual` that the restore named in `skips` is reported as `skipped` with the restore's reason: expected,
 * but never silent. A named object that is there after all is compared like any other.
 */
export function compareStates(expected: readonly KubeObject[], actual: readonly KubeObject[], skips: readonly NamedSkip[] = []): StateDifference[] {
  const byId = (objects: readonly KubeObject[]) => new Map(objects.map((o) => [identityOf(o), comparable(o)]));
  const left = byId(expected);
  const right = byId(actual);
  // the restore names objects by kind, namespace and name; two groups' kinds of one name in one namespace never
  // both hold user state, so the group is not needed to match them
  const skipReasons = new Map(skips.map((s) => [`${s.kind}/${s.namespace}/${s.name}`, s.reason]));
  const differences: StateDifference[] = [];
  for (const [id, want] of left) {
    const have = right.get(id);
    if (!have) {
      const reason = skipReasons.get(`${want.kind}/${want.metadata.namespace ?? ''}/${want.metadata.name ?? ''}`);
      differences.push(reason === undefined ? { object: id, problem: 'missing' } : { object: id, problem: 'skipped', reason });
      continue;
    }
    const fields = [...new Set([...unmetFields(want, have), ...unmetFields(have, want)])].sort();
    if (fields.length) differences.push({ object: id, problem: 'different', fields });
  }
  for (const id of right.keys()) if (!left.has(id)) differences.push({ object: id, problem: 'extra' });
  return differences.sort((a, b) => a.object.localeCompare(b.object));
}

/** whether a comparison's entry is a real difference (a named skip is expected) */
export function isDifference(difference: StateDifference): boolean {
  return difference.problem !== 'skipped';
}

/**
 * The restore-state results' `skipped-objects` sentences (`Kind/namespace/name: reason`, `Kind/name: reason` for a
 * cluster-scoped object) as named skips; a line of another shape (the "and N more" of a capped list) names nothing.
 */
export function parseNamedSkips(lines: readonly string[]): NamedSkip[] {
  const out: NamedSkip[] = [];
  for (const line of lines) {
    const colon = line.indexOf(': ');
    if (colon < 0) continue;
    const parts = line.slice(0, colon).split('/');
    const reason = line.slice(colon + 2);
    if (parts.length === 3) out.push({ kind: parts[0]!, namespace: parts[1]!, name: parts[2]!, reason });
    else if (parts.length === 2) out.push({ kind: parts[0]!, namespace: '', name: parts[1]!, reason });
  }
  return out;
}

/** The user state of a cluster, as a backup would keep it: Profiles and what no controller made in profile namespaces. */
export async function collectUserState(kube: KubeClient, options: { profileNamespaceSelector?: string } = {}): Promise<KubeObject[]> {
  const profilesResource = await kube.findByResource('kubeflow.org', 'profiles');
  const namespacesResource = await kube.findByResource('', 'namespaces');
  const profiles = profilesResource ? (await kube.listAll(profilesResource)).items : [];
  const namespaces = namespacesResource ? (await kube.listAll(namespacesResource)).items : [];
  const profileNamespaces = new Set(findProfileNamespaces(namespaces, profiles, options.profileNamespaceSelector).keys());
  const bindableRoles = await readBindableRoles(kube);
  const out: KubeObject[] = [];
  for (const resource of stateResources(await kube.discover())) {
    for (const object of (await kube.listAll(resource)).items) {
      if (backupDecision(object, { namespaces: profileNamespaces, bindableRoles }, resource.resource).keep) out.push(object);
    }
  }
  return out;
}

/** One line per difference, for test failures and the demo. */
export function describeDifferences(differences: readonly StateDifference[]): string[] {
  return differences.map((d) => (d.problem === 'different' ? `${d.object}: different ${d.fields!.join(', ')}`
    : d.problem === 'skipped' ? `${d.object}: skipped by the restore: ${d.reason}` : `${d.object}: ${d.problem}`));
}

