// PodDefaults that controllers make late. The KFP profile controller's access-ml-pipeline and the objects of
// Canonical's resource-dispatcher come through metacontroller on its resync (60 s and 10 s), well after the
// namespace, and a PodDefault changes only Pods created after it (kubeflow/kubeflow components/admission-webhook
// mutates Pods on CREATE only). A backup records their names per namespace; a restore waits for them before any
// workload, so that a restored Notebook's Pod gets the credentials it got on the source.
import type { KubeObject } from '../kube/types.ts';
import { generatedReason } from './generated.ts';
import { groupOf } from './identity.ts';

/** the manifest's extras key: namespace → names of the controller-made PodDefaults there */
export const controllerPodDefaultsExtra = 'controllerPodDefaults' as const;

export function isControllerMadePodDefault(object: KubeObject): boolean {
  return object.kind === 'PodDefault' && groupOf(object.apiVersion) === 'kubeflow.org' && generatedReason(object) !== undefined;
}

/** reads the extras section back (the manifest's schema has checked it; a malformed one reads as nothing recorded) */
export function recordedPodDefaults(extras: { controllerPodDefaults?: Record<string, string[]> | undefined } | undefined): Map<string, string[]> {
  return new Map(Object.entries(extras?.controllerPodDefaults ?? {}));
}
