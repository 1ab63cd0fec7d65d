// The snapshot.storage.k8s.io v1 kinds and the names upstream gives their finalizers and annotations.
// Upstream: kubernetes-csi/external-snapshotter client/config/crd/snapshot.storage.k8s.io_*.yaml (the CRDs, stored as
// fixtures in ./crds), pkg/utils/util.go (finalizers, annotations, the default-class annotation,
// GetDynamicSnapshotContentNameForSnapshot: `snapcontent-<snapshot uid>`).
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { ResourceRef } from '../../cluster/contract.ts';

export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
export const VOLUME_SNAPSHOTS: ResourceRef = { group: SNAPSHOT_GROUP, resource: 'volumesnapshots' };
export const VOLUME_SNAPSHOT_CONTENTS: ResourceRef = { group: SNAPSHOT_GROUP, resource: 'volumesnapshotcontents' };
export const VOLUME_SNAPSHOT_CLASSES: ResourceRef = { group: SNAPSHOT_GROUP, resource: 'volumesnapshotclasses' };

export const CONTENT_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection';
export const BOUND_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshot-bound-protection';
export const AS_SOURCE_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection';
export const ANN_BEING_DELETED = 'snapshot.storage.kubernetes.io/volumesnapshot-being-deleted';
export const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

/** The directory of the three CRD files, as external-snapshotter ships them. */
export const SNAPSHOT_CRD_DIR = fileURLToPath(new URL('./crds', import.meta.url));

export async function snapshotCrds(): Promise<KubeObject[]> {
  const { readCrdDir } = await import('../../cluster/crd-files.ts');
  return readCrdDir(SNAPSHOT_CRD_DIR);
}

export interface SnapshotSpec {
  source?: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string };
  volumeSnapshotClassName?: string;
}
export interface SnapshotStatus {
  boundVolumeSnapshotContentName?: string;
  creationTime?: string;
  readyToUse?: boolean;
  restoreSize?: string;
  error?: { time?: string; message?: string };
}
export interface ContentSpec {
  volumeSnapshotRef: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string; resourceVersion?: string };
  source: { volumeHandle?: string; snapshotHandle?: string };
  driver: string;
  deletionPolicy: 'Delete' | 'Retain';
  volumeSnapshotClassName?: string;
}
export interface ContentStatus {
  snapshotHandle?: string;
  creationTime?: number;
  readyToUse?: boolean;
  restoreSize?: number;
  error?: { time?: string; message?: string };
}

export const specOf = <T>(o: KubeObject): T => (o.spec ?? {}) as T;
export const statusOf = <T>(o: KubeObject): T => (o.status ?? {}) as T;

/** A VolumeSnapshotClass of `driver`, for tests to create. */
export function volumeSnapshotClass(name: string, driver: string, options: { deletionPolicy?: 'Delete' | 'Retain'; isDefault?: boolean } = {}): KubeObject {
  return {
    apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshotClass',
    metadata: { name, ...(options.isDefault ? { annotations: { [DEFAULT_SNAPSHOT_CLASS_ANNOTATION]: 'true' } } : {}) },
    driver, deletionPolicy: options.deletionPolicy ?? 'Delete',
  } as KubeObject;
}
