// What a backup from a snapshot creates is named and marked so that a rerun finds what a dead run left, and removes it
// only once it proves the run made it: the names are keyed with the movers' name key (../labels.ts moverNameKey,
// derived from the bucket's secret key, which no profile user holds), so an object is ours only when its name is the
// keyed name of the backup id, namespace and PVC its own labels and annotation give. A label alone proves nothing:
// anyone who may create a VolumeSnapshot in their namespace can set it.
import { createHmac } from 'node:crypto';
import type { KubeObject } from '../../kube/types.ts';
import { LABEL_BACKUP_ID, LABEL_COMPONENT, LABEL_MANAGED_BY, MANAGED_BY } from '../labels.ts';

export const SNAPSHOT_COMPONENT = 'volume-snapshot';
/** `<namespace>/<pvc>` of the user's claim an object was made for */
export const ANNOTATION_SOURCE = 'kubeflow-upgrader/snapshot-of';

/** One PVC's snapshot hand-over: the names of every object it makes, in the PVC's namespace and the model's. */
export interface ExposurePlan {
  backupId: string;
  source: { namespace: string; pvc: string };
  /** the product's own namespace, where the exposed snapshot, its claim and the mover live */
  namespace: string;
  /** the VolumeSnapshot of the user's PVC (in its namespace) and the exposed one (in `namespace`) */
  snapshot: string;
  /** the static VolumeSnapshotContent of the exposed snapshot (cluster-scoped) */
  content: string;
  /** the claim provisioned from the exposed snapshot, which the mover mounts (in `namespace`) */
  claim: string;
}

function keyed(key: Buffer, backupId: string, namespace: string, pvc: string): string {
  return createHmac('sha256', key).update(`snapshot/${backupId}/${namespace}/${pvc}`).digest('hex').slice(0, 20);
}

export function exposurePlan(key: Buffer, backupId: string, namespace: string, pvc: string, modelNamespace: string): ExposurePlan {
  const hash = keyed(key, backupId, namespace, pvc);
  return {
    backupId, source: { namespace, pvc }, namespace: modelNamespace,
    snapshot: `kfu-snap-${hash}`, content: `kfu-snapcontent-${hash}`, claim: `kfu-snap-${hash}`,
  };
}

export function snapshotSelector(): string {
  return `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_COMPONENT}=${SNAPSHOT_COMPONENT}`;
}

/** The labels and annotation of every object a plan makes. */
export function exposureMetadata(plan: ExposurePlan): { labels: Record<string, string>; annotations: Record<string, string> } {
  return {
    labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_COMPONENT]: SNAPSHOT_COMPONENT, [LABEL_BACKUP_ID]: plan.backupId },
    annotations: { [ANNOTATION_SOURCE]: `${plan.source.namespace}/${plan.source.pvc}` },
  };
}

/**
 * The plan an object was made under, when it proves it: its labels and annotation name a backup id and a PVC, and its
 * name is the keyed name of those (the snapshot's, the claim's or the content's). Anything else: undefined.
 */
export function provenPlan(object: KubeObject, key: Buffer, modelNamespace: string): ExposurePlan | undefined {
  const backupId = object.metadata.labels?.[LABEL_BACKUP_ID];
  const source = object.metadata.annotations?.[ANNOTATION_SOURCE];
  if (!backupId || !source || object.metadata.labels?.[LABEL_COMPONENT] !== SNAPSHOT_COMPONENT) return undefined;
  const slash = source.indexOf('/');
  if (slash <= 0) return undefined;
  const plan = exposurePlan(key, backupId, source.slice(0, slash), source.slice(slash + 1), modelNamespace);
  const name = object.metadata.name;
  return name === plan.snapshot || name === plan.content || name === plan.claim ? plan : undefined;
}
