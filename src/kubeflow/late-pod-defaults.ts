// PodDefaults that controllers make late. The KFP profile controller's access-ml-pipeline and the objects of
// Canonical's resource-dispatcher come through metacontroller on its resync (60 s and 10 s), well after the
// namespace, and a PodDefault changes only Pods created after it (kubeflow/kubeflow components/admission-webhook
// mutates Pods on CREATE only). A backup records their names per namespace; a restore waits for them before any
// workload, so that a restored Notebook's Pod gets the credentials it got on the source.
import type { KubeObject } from '../kube/types.ts';
import { generatedReason } from './generated.ts';
import { groupOf } from './identity.ts';

/** the manifest's extras key: namespace → names of the controller-made PodDefaults there */
export const controllerPodDefaultsExtra = 'controllerPodDefaults';

export function isControllerMadePodDefault(object: KubeObject): boolean {
  return object.kind === 'PodDefault' && groupOf(object.apiVersion) === 'kubeflow.org' && generatedReason(object) !== undefined;
}

/** reads the extras entry back; anything malformed counts as nothing recorded */
export function recordedPodDefaults(extras: Record<string, unknown> | undefined): Map<string, string[]> {
  const recorded = extras?.[controllerPodDefaultsExtra];
  const out = new Map<string, string[]>();
  if (!recorded || typeof recorded !== 'object') return out;
  for (const [namespace, names] of Object.entries(recorded)) {
    if (Array.isArray(names)) out.set(namespace, names.filter((n): n is string => typeof n === 'string'));
  }
  return out;
}
