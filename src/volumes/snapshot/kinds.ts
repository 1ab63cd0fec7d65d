// The kinds a backup from a CSI snapshot reads and writes, as external-snapshotter's v1 CRDs
// (kubernetes-csi/external-snapshotter client/config/crd/snapshot.storage.k8s.io_*.yaml) and storage.k8s.io/v1 name them.
import type { MoverResource } from '../kube-port.ts';

export const VOLUME_SNAPSHOTS: MoverResource = { group: 'snapshot.storage.k8s.io', version: 'v1', resource: 'volumesnapshots', kind: 'VolumeSnapshot' };
export const VOLUME_SNAPSHOT_CONTENTS: MoverResource = {
  group: 'snapshot.storage.k8s.io', version: 'v1', resource: 'volumesnapshotcontents', kind: 'VolumeSnapshotContent', namespaced: false,
};
export const VOLUME_SNAPSHOT_CLASSES: MoverResource = {
  group: 'snapshot.storage.k8s.io', version: 'v1', resource: 'volumesnapshotclasses', kind: 'VolumeSnapshotClass', namespaced: false,
};
export const STORAGE_CLASSES: MoverResource = { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', kind: 'StorageClass', namespaced: false };

/** external-snapshotter pkg/utils/util.go IsDefaultSnapshotClassAnnotation */
export const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';
/** kubernetes pkg/apis/storage/util/helpers.go: the default StorageClass of claims that name none */
export const DEFAULT_STORAGE_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

export interface SnapshotStatus {
  boundVolumeSnapshotContentName?: string;
  creationTime?: string;
  readyToUse?: boolean;
  restoreSize?: string;
  error?: { message?: string };
}
export interface ContentSpec {
  volumeSnapshotRef?: { name?: string; namespace?: string; uid?: string };
  source?: { volumeHandle?: string; snapshotHandle?: string };
  driver?: string;
  deletionPolicy?: 'Delete' | 'Retain';
  volumeSnapshotClassName?: string;
}
export interface ContentStatus {
  snapshotHandle?: string;
  readyToUse?: boolean;
  creationTime?: number;
  restoreSize?: number;
}
