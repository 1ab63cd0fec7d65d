// The rerun after a namespace conflict. The profile controller reconciles a Profile only on events of the Profile and
// of objects it controls (kubeflow/kubeflow v1.10.0 components/profile-controller/controllers/profile_controller.go,
// SetupWithManager), and controller-runtime resyncs every few hours. A namespace that blocked a Profile is not
// controlled by it, so fixing or deleting it wakes nothing; and a rerun finds the Profile unchanged and does not write
// it. So each Profile that already existed and whose namespace is missing or not the Profile's own gets our
// annotation set to the time of the request: a change the controller sees, which makes it look again.
import type { RestoreKube } from './kube-port.ts';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { reconcileRequestAnnotation } from '../kubeflow/profile-namespaces.ts';

/** why this live Profile needs the controller to look at it again, or undefined when its namespace is its own */
export function nudgeReason(profile: KubeObject, namespace: KubeObject | undefined): string | undefined {
  if (!namespace) return 'its namespace does not exist';
  const controlled = (namespace.metadata.ownerReferences ?? []).some((owner) =>
    owner.controller === true && owner.kind === 'Profile' && owner.uid === profile.metadata.uid);
  if (!controlled) return 'its namespace is not controlled by it';
  return undefined;
}

/** Sets the annotation on each Profile that needs it (one namespace LIST, one PATCH per such Profile); returns their names. */
export async function nudgeProfiles(
  kube: RestoreKube, profileResource: ApiResource, profiles: readonly KubeObject[], options: { fieldManager: string; now?: () => Date },
): Promise<string[]> {
  if (profiles.length === 0) return [];
  const namespaceResource = await kube.findByResource('', 'namespaces');
  if (!namespaceResource) return [];
  const namespaces = new Map((await kube.listAll(namespaceResource)).items.map((ns) => [ns.metadata.name!, ns]));
  const at = (options.now ?? (() => new Date()))().toISOString();
  const nudged: string[] = [];
  for (const profile of profiles) {
    const name = profile.metadata.name!;
    if (!nudgeReason(profile, namespaces.get(name))) continue;
    await kube.patch(profileResource, name, undefined, { metadata: { annotations: { [reconcileRequestAnnotation]: at } } }, 'merge', { fieldManager: options.fieldManager });
    nudged.push(name);
  }
  return nudged;
}
