// A PVC's binding to a PersistentVolume of its source cluster: the volume's name and the annotations the PV
// controller and the provisioner set while binding. Anywhere else they name a volume (or node) that is not there.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

export const pvcBindingAnnotations: readonly string[] = [
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.kubernetes.io/selected-node',
  'volume.beta.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/storage-provisioner',
];

export function isPvc(object: KubeObject): boolean {
  return object.kind === 'PersistentVolumeClaim' && groupOf(object.apiVersion) === '';
}

/**
 * A copy of a PVC without `spec.volumeName` and the binding annotations; the input is left untouched, and only
 * metadata, annotations and spec are new objects.
 */
export function withoutVolumeBinding(pvc: KubeObject): KubeObject {
  const copy: KubeObject = { ...pvc, metadata: { ...pvc.metadata } };
  if (pvc.spec && typeof pvc.spec === 'object') {
    const { volumeName: _volumeName, ...spec } = pvc.spec as Record<string, unknown>;
    copy.spec = spec;
  }
  const annotations = pvc.metadata.annotations;
  if (annotations) {
    const kept = Object.fromEntries(Object.entries(annotations).filter(([name]) => !pvcBindingAnnotations.includes(name)));
    if (Object.keys(kept).length) copy.metadata.annotations = kept;
    else delete copy.metadata.annotations;
  }
  return copy;
}
