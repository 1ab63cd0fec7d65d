// What a restore writes for an archived object: server fields stripped (src/kubeflow/strip.ts), plus the fields that
// only meant something in the source cluster. A PVC's binding names a PersistentVolume of the source cluster; written
// into another cluster it would wait forever for a volume that is not there, and in the same cluster the live PVC
// keeps its own binding, so both are left to the target.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from '../kubeflow/identity.ts';
import { reconcileRequestAnnotation } from '../kubeflow/profile-namespaces.ts';
import { pvcBindingAnnotations } from '../kubeflow/pvc-binding.ts';
import { stripServerMetadata } from '../kubeflow/strip.ts';

/** a copy of `object` fit to be written into another cluster (owner references still carry the source uids) */
export function restorable(object: KubeObject): KubeObject {
  return structuredClone(restorableView(object));
}

/**
 * What `restorable` returns, without copying what it keeps: the result shares spec, data and every other body
 * field with `object` (only metadata, and a PVC's spec, are new). For serializing at once (the restore spool) —
 * deep-copying every archived object, managedFields included, only to write it out was a visible cost at scale.
 */
export function restorableView(object: KubeObject): KubeObject {
  const { status: _status, metadata, ...body } = object;
  const stripped = stripServerMetadata(metadata);
  delete stripped.generateName;
  if (stripped.annotations && reconcileRequestAnnotation in stripped.annotations) {
    // our own nudge from an earlier restore: meaningless in another run, and a difference that is not the user's
    delete stripped.annotations[reconcileRequestAnnotation];
    if (Object.keys(stripped.annotations).length === 0) delete stripped.annotations;
  }
  const view = { ...body, metadata: stripped } as KubeObject;
  if (view.kind === 'PersistentVolumeClaim' && groupOf(view.apiVersion) === '') {
    if (view.spec && typeof view.spec === 'object') {
      const spec = { ...(view.spec as Record<string, unknown>) };
      delete spec.volumeName;
      view.spec = spec;
    }
    const annotations = stripped.annotations;
    if (annotations) {
      for (const name of pvcBindingAnnotations) delete annotations[name];
      if (Object.keys(annotations).length === 0) delete stripped.annotations;
    }
  }
  return view;
}
