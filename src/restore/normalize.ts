// What a restore writes for an archived object: server fields stripped (src/kubeflow/strip.ts), plus the fields that
// only meant something in the source cluster. A PVC's binding names a PersistentVolume of the source cluster; written
// into another cluster it would wait forever for a volume that is not there, and in the same cluster the live PVC
// keeps its own binding, so both are left to the target.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from '../kubeflow/identity.ts';
import { stripServerFields } from '../kubeflow/strip.ts';

const pvcBindingAnnotations = [
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.kubernetes.io/selected-node',
  'volume.beta.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/storage-provisioner',
];

/** a copy of `object` fit to be written into another cluster (owner references still carry the source uids) */
export function restorable(object: KubeObject): KubeObject {
  const copy = stripServerFields(object);
  delete copy.metadata.generateName;
  if (copy.kind === 'PersistentVolumeClaim' && groupOf(copy.apiVersion) === '') {
    const spec = copy.spec as Record<string, unknown> | undefined;
    if (spec) delete spec.volumeName;
    const annotations = copy.metadata.annotations;
    if (annotations) {
      for (const name of pvcBindingAnnotations) delete annotations[name];
      if (Object.keys(annotations).length === 0) delete copy.metadata.annotations;
    }
  }
  return copy;
}
