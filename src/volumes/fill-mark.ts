// The mark a restore sets on each PVC it creates and still has to fill: a label (so a rerun finds every such PVC with one
// selected LIST) and an annotation naming the backup whose data belongs in it. It goes on with the PVC's creation and
// comes off only once the mover reports the copy complete, so a crash, a lost Job or a failed copy leaves it in place
// and the next run fills the PVC again. A PVC without the mark is never written to by a restore.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';

export const LABEL_FILL = 'kubeflow-upgrader/volume-fill';
export const FILL_PENDING = 'pending';
export const ANNOTATION_FILL_FROM = 'kubeflow-upgrader/volume-fill-from';
export const FILL_SELECTOR = `${LABEL_FILL}=${FILL_PENDING}`;

/**
 * The label a claim to be filled by a hand-over (./rebind.ts) selects its volume by. A claim with a selector is never
 * dynamically provisioned (kubernetes-sigs/sig-storage-lib-external-provisioner controller/controller.go: "claim
 * Selector is not supported"; kubernetes pkg/controller/volume/persistentvolume/pv_controller.go provisionClaim), so
 * it waits, Pending, for the volume the restore fills in its own namespace and hands over, which then carries the
 * label. Velero reserves a data-mover restore's claim so (vmware-tanzu/velero pkg/restore/actions/csi/pvc_action.go,
 * restoreFromDataUploadResult: velero.io/dynamic-pv-restore) and labels the volume so (pkg/util/kube/pvc_pv.go,
 * ResetPVBinding).
 */
export const LABEL_HANDOVER = 'kubeflow-upgrader/handover';

/** The selector value of a claim reserved for a hand-over; undefined when it is not. */
export function handoverReservation(pvc: KubeObject): string | undefined {
  return (pvc.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels?.[LABEL_HANDOVER];
}

/**
 * The PVC as it is to be created: with the mark naming `backupId`; with `handover`, also reserved for the volume a
 * hand-over brings (its selector), so that no provisioner makes it an empty volume of its own meanwhile.
 */
export function withFillMark(pvc: KubeObject, backupId: string, options: { handover?: boolean } = {}): KubeObject {
  const spec = (pvc.spec ?? {}) as { selector?: { matchLabels?: Record<string, string> } };
  const reserved = options.handover ? {
    spec: {
      ...spec,
      selector: { ...(spec.selector ?? {}), matchLabels: { ...(spec.selector?.matchLabels ?? {}), [LABEL_HANDOVER]: createHash('sha256').update(`${pvc.metadata.namespace ?? ''}/${pvc.metadata.name ?? ''}/${backupId}`).digest('hex').slice(0, 32) } },
    },
  } : {};
  return {
    ...pvc,
    ...reserved,
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
