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
  problem: 'missing' | 'extra' | 'different';
  /** for `different`: the paths that differ */
  fields?: string[];
}

/**
 * Every difference between the user state of `expected` and `actual`: objects missing from `actual`, extra in it,
 * and fields that differ (compared both ways after `comparable`, so a field dropped or added counts).
 */
export function compareStates(expected: readonly KubeObject[], actual: readonly KubeObject[]): StateDifference[] {
  const byId = (objects: readonly KubeObject[]) => new Map(objects.map((o) => [identityOf(o), comparable(o)]));
  const left = byId(expected);
  const right = byId(actual);
  const differences: StateDifference[] = [];
  for (const [id, want] of left) {
    const have = right.get(id);
    if (!have) {
      differences.push({ object: id, problem: 'missing' });
      continue;
    }
    const fields = [...new Set([...unmetFields(want, have), ...unmetFields(have, want)])].sort();
    if (fields.length) differences.push({ object: id, problem: 'different', fields });
  }
  for (const id of right.keys()) if (!left.has(id)) differences.push({ object: id, problem: 'extra' });
  return differences.sort((a, b) => a.object.localeCompare(b.object));
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
  return differences.map((d) => (d.problem === 'different' ? `${d.object}: different ${d.fields!.join(', ')}` : `${d.object}: ${d.problem}`));
}

