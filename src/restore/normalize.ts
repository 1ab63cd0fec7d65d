// What a restore writes for an archived object: server fields stripped (src/kubeflow/strip.ts), then what the
// kind's row of the restore-changes table (src/kubeflow/restore-changes.ts) clears or rewrites: the fields that only
// meant something in the source cluster (a Service's addresses, a Job's controller-uid, a PVC's binding, a token
// Secret's data, …), each following the Velero RestoreItemAction or Kubernetes code the row names.
import type { KubeObject } from '../kube/types.ts';
import { reconcileRequestAnnotation } from '../kubeflow/profile-namespaces.ts';
import { applyRestoreChange } from '../kubeflow/restore-changes.ts';
import { stripServerMetadata } from '../kubeflow/strip.ts';

export { serviceAccountTokenType } from '../kubeflow/restore-changes.ts';

/** a copy of `object` fit to be written into another cluster (owner references still carry the source uids) */
export function restorable(object: KubeObject): KubeObject {
  return structuredClone(restorableView(object));
}

/**
 * What `restorable` returns, without copying what it keeps: the result shares spec, data and every other body
 * field with `object` (only metadata, and what the kind's restore change rewrites, are new). For serializing at once (the restore spool) —
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
  applyRestoreChange(view, object);
  return view;
}
