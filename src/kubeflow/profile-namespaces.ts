// Which namespaces a backup takes, and which a restore accepts: one rule for both, so that a backup never holds a
// namespace its own restore refuses. A restore cannot make a namespace itself — the profile controller makes it from
// the Profile of the same name, and refuses one that exists without the Profile owner's `owner` annotation
// (kubeflow/kubeflow v1.10.0 components/profile-controller/controllers/profile_controller.go). So a namespace's
// objects go into a backup only together with its Profile, and a restore takes a namespace only when the archive
// holds its Profile. Every other namespace that looks like a profile namespace is left out with its reason.
import type { KubeObject } from '../kube/types.ts';
import { matchesLabelSelector, parseLabelSelector } from './label-selector.ts';

export const defaultProfileNamespaceSelector = 'app.kubernetes.io/part-of=kubeflow-profile';
export const ownerAnnotation = 'owner';
/**
 * Set by a restore on a Profile whose namespace is missing or not the Profile's own, so that the profile controller
 * reconciles it again: the controller wakes only for its Profiles and the objects they control, so a Profile the
 * restore finds unchanged would otherwise never be looked at after the user fixed or deleted a conflicting namespace.
 * The value is the time of the request; a restore never writes or compares the archived value.
 */
export const reconcileRequestAnnotation = 'kubeflow-upgrader/reconcile-requested-at';

/** Namespaces no Profile may claim: restoring a Profile of that name would hand a system namespace to a user. */
export const reservedNamespaces: ReadonlySet<string> = new Set([
  'default', 'kube-system', 'kube-public', 'kube-node-lease', 'kubeflow', 'istio-system', 'knative-serving', 'cert-manager',
]);

export interface NamespaceVerdict {
  profileNamespace: boolean;
  reason: string;
}

export interface LeftOutNamespace {
  namespace: string;
  reason: string;
}

export function profileOwner(profile: KubeObject): string | undefined {
  const owner = (profile.spec as { owner?: { name?: unknown } } | undefined)?.owner?.name;
  return typeof owner === 'string' ? owner : undefined;
}

/** why no Profile of this name may be restored (a system namespace), or undefined when one may */
export function reservedProfileReason(name: string, protectedNamespaces: ReadonlySet<string> = reservedNamespaces): string | undefined {
  if (reservedNamespaces.has(name) || protectedNamespaces.has(name) || name.startsWith('kube-')) {
    return `a Profile named ${name} would claim a system namespace`;
  }
  return undefined;
}

/** why a restore cannot take the objects of this namespace: there is no Profile (`where`: in the cluster, the backup) to make it from */
export function noProfileReason(namespace: string, where = ''): string {
  return `namespace ${namespace} has no Profile ${namespace}${where}; only the profile controller makes profile namespaces, from their Profile`;
}

function controlledBy(namespace: KubeObject, profile: KubeObject): boolean {
  return (namespace.metadata.ownerReferences ?? []).some((owner) =>
    owner.controller === true && owner.kind === 'Profile' && owner.name === profile.metadata.name && owner.uid === profile.metadata.uid);
}

export function judgeNamespace(namespace: KubeObject, profilesByName: ReadonlyMap<string, KubeObject>, selector: string): NamespaceVerdict {
  const name = namespace.metadata.name!;
  const annotated = namespace.metadata.annotations?.[ownerAnnotation];
  const profile = profilesByName.get(name);
  if (profile) {
    const reserved = reservedProfileReason(name);
    if (reserved) return { profileNamespace: false, reason: `left out: ${reserved}, which a restore refuses` };
    const owner = profileOwner(profile) ?? '';
    if (annotated !== undefined && annotated === owner) {
      return { profileNamespace: true, reason: `profile namespace of Profile/${name} (owner ${owner})` };
    }
    if (controlledBy(namespace, profile)) {
      // The controller made it for an earlier owner; after spec.owner changed it refuses it here, but a restore into
      // a cluster without it makes it anew for the current owner — the user state in it is the Profile's.
      return {
        profileNamespace: true,
        reason: `profile namespace of Profile/${name}, made for an earlier owner (annotation ${annotated === undefined ? 'missing' : `"${annotated}"`}, Profile owner "${owner}"): the profile controller refuses it in this cluster until the annotation matches`,
      };
    }
    return {
      profileNamespace: false,
      reason: `left out: namespace ${name} was not made by Profile/${name} and its owner annotation ${annotated === undefined ? 'is missing' : `"${annotated}"`}, not "${owner}": the profile controller refuses it, so it holds no state of that Profile`,
    };
  }
  if (annotated !== undefined || matchesLabelSelector(parseLabelSelector(selector), namespace.metadata.labels)) {
    return { profileNamespace: false, reason: `left out: ${noProfileReason(name)}, so a restore could not recreate it` };
  }
  return { profileNamespace: false, reason: `not a profile namespace: no Profile of that name and labels do not match ${selector}` };
}

export interface ProfileNamespaces {
  /** the namespaces a backup takes, each with the reason it counts */
  taken: Map<string, string>;
  /** namespaces that look like profile namespaces (named after a Profile, the selector, an owner annotation) but are not taken */
  leftOut: LeftOutNamespace[];
}

/** judges every namespace: the ones a backup takes, and the ones that look like profile namespaces but are left out */
export function judgeProfileNamespaces(
  namespaces: readonly KubeObject[],
  profiles: readonly KubeObject[],
  selector: string = defaultProfileNamespaceSelector,
): ProfileNamespaces {
  parseLabelSelector(selector); // bad configuration fails before anything is judged
  const profilesByName = new Map(profiles.map((p) => [p.metadata.name!, p]));
  const taken = new Map<string, string>();
  const leftOut: LeftOutNamespace[] = [];
  for (const namespace of namespaces) {
    const verdict = judgeNamespace(namespace, profilesByName, selector);
    if (verdict.profileNamespace) taken.set(namespace.metadata.name!, verdict.reason);
    else if (verdict.reason.startsWith('left out: ')) leftOut.push({ namespace: namespace.metadata.name!, reason: verdict.reason.slice('left out: '.length) });
  }
  leftOut.sort((a, b) => a.namespace.localeCompare(b.namespace));
  return { taken, leftOut };
}

/** the profile namespaces among `namespaces`, each with the reason it counts */
export function findProfileNamespaces(
  namespaces: readonly KubeObject[],
  profiles: readonly KubeObject[],
  selector: string = defaultProfileNamespaceSelector,
): Map<string, string> {
  return judgeProfileNamespaces(namespaces, profiles, selector).taken;
}
