// Which VolumeSnapshotClass takes a PVC's snapshot, if any: the class of its StorageClass's provisioner (the CSI driver
// that holds the volume). A class named by `volume-snapshot-class` (`--volume-snapshot-class`) is used when its driver
// is the PVC's; otherwise the driver's class annotated default (external-snapshotter pkg/common-controller
// SetDefaultSnapshotClass: exactly one). Velero chooses alike (vmware-tanzu/velero pkg/util/csi/volume_snapshot.go
// GetVolumeSnapshotClassForStorageClass: by driver, the labelled or the default class). Without one, the PVC is copied live.
import type { KubeObject } from '../../kube/types.ts';
import type { VolumeKube } from '../kube-port.ts';
import { DEFAULT_SNAPSHOT_CLASS_ANNOTATION, DEFAULT_STORAGE_CLASS_ANNOTATION, STORAGE_CLASSES, VOLUME_SNAPSHOT_CLASSES } from './kinds.ts';

export type ClassChoice = { className: string; driver: string; storageClass: string } | { live: string };

/**
 * The cluster's VolumeSnapshotClasses, or why there are none to read: a 404 on the list is "no snapshots here", a 403
 * a run whose identity may not read them (it then copies live and says so, rather than failing the backup).
 */
async function listClasses(kube: VolumeKube): Promise<KubeObject[] | string> {
  try {
    return await kube.list(VOLUME_SNAPSHOT_CLASSES, '');
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 404) return 'the cluster serves no VolumeSnapshotClasses';
    if (status === 403) return 'the backup may not list VolumeSnapshotClasses (forbidden)';
    throw error;
  }
}

export async function snapshotClassFor(kube: VolumeKube, pvc: KubeObject, configured: string | undefined): Promise<ClassChoice> {
  const classes = await listClasses(kube);
  if (typeof classes === 'string') return { live: classes };
  const named = (pvc.spec as { storageClassName?: string } | undefined)?.storageClassName;
  const storageClasses = await kube.list(STORAGE_CLASSES, '');
  const storageClass = named !== undefined && named !== ''
    ? storageClasses.find((c) => c.metadata.name === named)
    : storageClasses.find((c) => c.metadata.annotations?.[DEFAULT_STORAGE_CLASS_ANNOTATION] === 'true');
  if (!storageClass) return { live: named ? `its StorageClass ${named} does not exist` : 'it names no StorageClass and none is the default' };
  const driver = (storageClass as { provisioner?: string }).provisioner ?? '';
  const ofDriver = classes.filter((c) => (c as { driver?: string }).driver === driver);
  if (configured) {
    const chosen = classes.find((c) => c.metadata.name === configured);
    if (chosen && ofDriver.includes(chosen)) return { className: configured, driver, storageClass: storageClass.metadata.name ?? '' };
    if (!chosen) return { live: `the VolumeSnapshotClass ${configured} (volume-snapshot-class) does not exist` };
    // the configured class is another driver's: this PVC falls back to its driver's default, as if none were named
  }
  const defaults = ofDriver.filter((c) => c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] === 'true');
  if (defaults.length === 1) return { className: defaults[0]!.metadata.name ?? '', driver, storageClass: storageClass.metadata.name ?? '' };
  if (defaults.length > 1) return { live: `${defaults.length} VolumeSnapshotClasses of driver ${driver} are marked default; name one with volume-snapshot-class` };
  return { live: ofDriver.length > 0 ? `no VolumeSnapshotClass of driver ${driver} is marked default; name one with volume-snapshot-class` : `no VolumeSnapshotClass has driver ${driver}` };
}
