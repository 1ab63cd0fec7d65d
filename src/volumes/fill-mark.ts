// The mark a restore sets on each PVC it creates and still has to fill: a label (so a rerun finds every such PVC with one
// selected LIST) and an annotation naming the backup whose data belongs in it. It goes on with the PVC's creation and
// comes off only once the mover reports the copy complete, so a crash, a lost Job or a failed copy leaves it in place
// and the next run fills the PVC again. A PVC without the mark is never written to by a restore.
import type { KubeObject } from '../kube/types.ts';

export const LABEL_FILL = 'kubeflow-upgrader/volume-fill';
export const FILL_PENDING = 'pending';
export const ANNOTATION_FILL_FROM = 'kubeflow-upgrader/volume-fill-from';
export const FILL_SELECTOR = `${LABEL_FILL}=${FILL_PENDING}`;

/** The PVC as it is to be created: with the mark naming `backupId`. */
export function withFillMark(pvc: KubeObject, backupId: string): KubeObject {
  return {
    ...pvc,
    metadata: {
      ...pvc.metadata,
      labels: { ...(pvc.metadata.labels ?? {}), [LABEL_FILL]: FILL_PENDING },
      annotations: { ...(pvc.metadata.annotations ?? {}), [ANNOTATION_FILL_FROM]: backupId },
    },
  };
}

export function hasFillMark(pvc: KubeObject): boolean {
  return pvc.metadata.labels?.[LABEL_FILL] === FILL_PENDING;
}

/** The backup a marked PVC waits for; undefined when it carries no mark. */
export function fillSource(pvc: KubeObject): string | undefined {
  return hasFillMark(pvc) ? (pvc.metadata.annotations?.[ANNOTATION_FILL_FROM] ?? '') : undefined;
}

/** A JSON merge patch that takes the mark off (null deletes a key). */
export const FILL_MARK_REMOVAL = { metadata: { labels: { [LABEL_FILL]: null }, annotations: { [ANNOTATION_FILL_FROM]: null } } } as const;
