// Which namespaces are profile namespaces. A namespace named after a Profile belongs to it when its `owner`
// annotation names the Profile's owner (the profile controller refuses it otherwise); a namespace without a Profile
// counts when it matches `profile-namespace-selector` and carries an owner annotation (a Profile lost or not yet restored).
import type { KubeObject } from '../kube/types.ts';
import { matchesLabelSelector, parseLabelSelector } from './label-selector.ts';

export const defaultProfileNamespaceSelector = 'app.kubernetes.io/part-of=kubeflow-profile';
export const ownerAnnotation = 'owner';

export interface NamespaceVerdict {
  profileNamespace: boolean;
  reason: string;
}

export function profileOwner(profile: KubeObject): string | undefined {
  const owner = (profile.spec as { owner?: { name?: unknown } } | undefined)?.owner?.name;
  return typeof owner === 'string' ? owner : undefined;
}

export function judgeNamespace(namespace: KubeObject, profilesByName: ReadonlyMap<string, KubeObject>, selector: string): NamespaceVerdict {
  const name = namespace.metadata.name!;
  const annotated = namespace.metadata.annotations?.[ownerAnnotation];
  const profile = profilesByName.get(name);
  if (profile) {
    const owner = profileOwner(profile);
    if (annotated !== undefined && annotated === owner) {
      return { profileNamespace: true, reason: `profile namespace of Profile/${name} (owner ${owner})` };
    }
    return {
      profileNamespace: false,
      reason: `not a profile namespace: its owner annotation ${annotated === undefined ? 'is missing' : `"${annotated}"`} and Profile/${name} is owned by "${owner ?? ''}"`,
    };
  }
  if (matchesLabelSelector(parseLabelSelector(selector), namespace.metadata.labels)) {
    if (annotated) return { profileNamespace: true, reason: `profile namespace: matches ${selector} and is owned by ${annotated} (no Profile)` };
    return { profileNamespace: false, reason: `not a profile namespace: matches ${selector} but has no owner annotation` };
  }
  return { profileNamespace: false, reason: `not a profile namespace: no Profile of that name and labels do not match ${selector}` };
}

/** the profile namespaces among `namespaces`, each with the reason it counts */
export function findProfileNamespaces(
  namespaces: readonly KubeObject[],
  profiles: readonly KubeObject[],
  selector: string = defaultProfileNamespaceSelector,
): Map<string, string> {
  parseLabelSelector(selector); // bad configuration fails before anything is judged
  const profilesByName = new Map(profiles.map((p) => [p.metadata.name!, p]));
  const found = new Map<string, string>();
  for (const namespace of namespaces) {
    const verdict = judgeNamespace(namespace, profilesByName, selector);
    if (verdict.profileNamespace) found.set(namespace.metadata.name!, verdict.reason);
  }
  return found;
}
