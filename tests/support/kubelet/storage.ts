// PVC binding as a hostPath provisioner would do it: a PVC is a folder under the kubelet's data dir. Immediate claims
// bind when they appear; WaitForFirstConsumer claims stay Pending until a Pod that mounts them is scheduled.
// Upstream: kubernetes/kubernetes pkg/controller/volume/persistentvolume/pv_controller.go (binding), and
// kubernetes-csi/external-provisioner pkg/controller/controller.go (getPVCSource, getSnapshotSource, getCloneSource):
// a claim with a data source (spec.dataSourceRef, else spec.dataSource) is provisioned as external-provisioner does: a claim
// source must exist in the claim's namespace and be bound, and the new volume starts as a copy of it; any other source
// (a populator's kind, or a VolumeSnapshot on a cluster without snapshots, whose data this provisioner does not keep) is
// not provisioned, and the claim stays Pending with a ProvisioningFailed warning, however long it waits. Retries are not
// simulated: a claim is tried when it or a volume changes and when a Pod that mounts it is scheduled. Which volume a
// claim binds, and what becomes of a volume whose claim is gone, is the PV controller's (pv-controller.ts); a volume's
// data lives in the folder its PV names (volumeFolder), so it follows the volume from claim to claim.
// With snapshots (the kubelet's `snapshots` option, ./snapshots/hostpath-driver.ts) the provisioner is the CSI hostpath
// driver: its PVs are CSI volumes (spec.csi, the handle being the volume's folder under the data dir,
// `<namespace>/<pvc>` of the claim it was provisioned for, as the snapshot controller needs them; a snapshot copies
// that folder), and a claim from a VolumeSnapshot is provisioned as external-provisioner's getSnapshotSource allows it:
// the snapshot in the claim's namespace, not being deleted, readyToUse, bound to a content of this driver whose status
// has a snapshotHandle the driver holds; the new volume's folder starts as that snapshot's copy (csi-driver-host-path
// pkg/hostpath/hostpath.go loadFromSnapshot).
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { PVCS, PVS, STORAGE_CLASSES } from './refs.ts';
import { warningRecorder } from './events.ts';
import type { SnapshotStore } from './snapshots/hostpath-driver.ts';
import { VOLUME_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS, type ContentSpec, type ContentStatus, type SnapshotStatus } from './snapshots/refs.ts';
import { ANN_BIND_COMPLETED, ANN_PROVISIONED_BY, pvController, type PvController } from './pv-controller.ts';

export const SIMULATED_PROVISIONER = 'kubelet.simulated/hostpath';
const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

/** A StorageClass served by the simulated kubelet's provisioner, for tests to create. */
export function storageClass(
  name: string,
  options: { volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer'; isDefault?: boolean } = {},
): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...(options.isDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } } : {}) },
    provisioner: SIMULATED_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: options.volumeBindingMode ?? 'Immediate',
  };
}

/** Folder of a PVC's data: `<dataDir>/<namespace>/<pvc>`. */
export function pvcFolder(dataDir: string, namespace: string, pvc: string): string {
  return join(dataDir, namespace, pvc);
}

function safeList(api: InProcessApi): KubeObject[] {
  try {
    return api.list(STORAGE_CLASSES);
  } catch {
    return []; // a server that does not serve StorageClasses: every claim binds immediately
  }
}

export function bindingMode(api: InProcessApi, pvc: KubeObject): 'Immediate' | 'WaitForFirstConsumer' {
  const wanted = (pvc.spec as { storageClassName?: string } | undefined)?.storageClassName;
  const classes = safeList(api);
  const cls = wanted !== undefined
    ? classes.find((c) => c.metadata.name === wanted)
    : classes.find((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true');
  return (cls as { volumeBindingMode?: string } | undefined)?.volumeBindingMode === 'WaitForFirstConsumer'
    ? 'WaitForFirstConsumer' : 'Immediate';
}

export function isBound(pvc: KubeObject): boolean {
  return (pvc.status as { phase?: string } | undefined)?.phase === 'Bound';
}

interface DataSource { apiGroup?: string; kind?: string; name?: string }

/**
 * Why the provisioner cannot make the claim's volume from its data source (external-provisioner's sentences), or the
 * claim whose folder the new volume starts from; nothing when the claim has no source.
 */
function dataSourceOf(api: InProcessApi, pvc: KubeObject, snapshots: SnapshotStore | undefined): { problem: string } | { clone: KubeObject } | { snapshot: string } | undefined {
  const spec = (pvc.spec ?? {}) as { dataSource?: DataSource; dataSourceRef?: DataSource };
  const source = spec.dataSourceRef ?? spec.dataSource;
  if (!source) return undefined;
  const namespace = pvc.metadata.namespace ?? '';
  const name = source.name ?? '';
  if (!source.apiGroup && source.kind === 'PersistentVolumeClaim') {
    const claim = api.get(PVCS, name, namespace);
    if (!claim) {
      return { problem: `error getting handle for DataSource Type PersistentVolumeClaim by Name ${name}: error getting PVC ${name} (namespace "${namespace}") from api server: persistentvolumeclaims "${name}" not found` };
    }
    if (!isBound(claim)) return { problem: `error getting handle for DataSource Type PersistentVolumeClaim by Name ${name}: the PVC ${name} is not yet bound to a PV` };
    return { clone: claim };
  }
  if (source.apiGroup === 'snapshot.storage.k8s.io' && source.kind === 'VolumeSnapshot' && snapshots) {
    const prefix = `error getting handle for DataSource Type VolumeSnapshot by Name ${name}`;
    const snapshot = api.get(VOLUME_SNAPSHOTS, name, namespace);
    if (!snapshot) return { problem: `${prefix}: error getting snapshot ${name} from api server: volumesnapshots.snapshot.storage.k8s.io "${name}" not found` };
    if (snapshot.metadata.deletionTimestamp) return { problem: `${prefix}: snapshot ${name} is currently being deleted` };
    const status = (snapshot.status ?? {}) as SnapshotStatus;
    if (!status.readyToUse) return { problem: `${prefix}: snapshot ${name} is not Ready` };
    const content = status.boundVolumeSnapshotContentName ? api.get(VOLUME_SNAPSHOT_CONTENTS, status.boundVolumeSnapshotContentName) : undefined;
    if (!content) return { problem: `${prefix}: error retrieving snapshot content ${status.boundVolumeSnapshotContentName ?? ''} for snapshot ${name}` };
    if ((content.spec as ContentSpec).driver !== snapshots.driver) return { problem: `${prefix}: driver ${(content.spec as ContentSpec).driver} of snapshot content ${content.metadata.name} does not match the provisioner ${snapshots.driver}` };
    const handle = ((content.status ?? {}) as ContentStatus).snapshotHandle;
    if (!handle) return { problem: `${prefix}: snapshot handle is nil for snapshot content ${content.metadata.name}` };
    if (!snapshots.folder(handle)) return { problem: `${prefix}: rpc error: code = NotFound desc = cannot find snapshot ${handle}` };
    return { snapshot: handle };
  }
  if (source.apiGroup === 'snapshot.storage.k8s.io' && source.kind === 'VolumeSnapshot') {
    return { problem: `error getting handle for DataSource Type VolumeSnapshot by Name ${name}: error getting snapshot ${name} from api server: volumesnapshots.snapshot.storage.k8s.io "${name}" not found` };
  }
  return { problem: `the data source ${source.apiGroup ? `${source.apiGroup}/` : ''}${source.kind} ${name} has no populator here: the claim waits for one` };
}

/**
 * The volume's folder: `<dataDir>/<namespace>/<pvc>`, unless a volume that outlived an earlier claim of that name
 * (Retain) still holds it; then a folder of this claim's own, so that no two volumes ever share data.
 */
function folderFor(api: InProcessApi, dataDir: string, pvc: KubeObject): string {
  const folder = pvcFolder(dataDir, pvc.metadata.namespace ?? '', pvc.metadata.name ?? '');
  if (!existsSync(folder)) return folder;
  let taken = false;
  try {
    taken = api.list(PVS).some((pv) => volumeFolder(dataDir, pv) === folder
      && (pv.spec as { claimRef?: { uid?: string } } | undefined)?.claimRef?.uid !== pvc.metadata.uid);
  } catch {
    taken = false;
  }
  return taken ? `${folder}.${(pvc.metadata.uid ?? '').slice(0, 8)}` : folder;
}

/**
 * The hostPath provisioner's Provision (kubernetes-csi/external-provisioner pkg/controller/controller.go): the
 * folder (a copy of the source claim's, for a clone) and a PV pre-bound to the claim by uid, reclaim policy Delete.
 * Safe to call twice (the PV is named after the claim's uid). Undefined when the data source cannot be provisioned
 * (a ProvisioningFailed warning says why) or the server does not serve PVs.
 */
export function provisionVolume(api: InProcessApi, dataDir: string, pvc: KubeObject, node: string | undefined, snapshots?: SnapshotStore): KubeObject | undefined {
  const namespace = pvc.metadata.namespace ?? '';
  const name = pvc.metadata.name ?? '';
  const source = dataSourceOf(api, pvc, snapshots);
  if (source && 'problem' in source) {
    warningRecorder(api)(pvc, 'ProvisioningFailed', `failed to provision volume with StorageClass "${(pvc.spec as { storageClassName?: string } | undefined)?.storageClassName ?? ''}": ${source.problem}`, SIMULATED_PROVISIONER);
    return undefined;
  }
  const volumeName = `pvc-${pvc.metadata.uid ?? name}`;
  const existing = safeGetPv(api, volumeName);
  if (existing) return existing;
  const folder = folderFor(api, dataDir, pvc);
  mkdirSync(folder, { recursive: true });
  if (source && 'clone' in source) cpSync(claimFolder(api, dataDir, source.clone), folder, { recursive: true });
  if (source && 'snapshot' in source) cpSync(snapshots!.folder(source.snapshot)!, folder, { recursive: true, verbatimSymlinks: true });
  const spec = (pvc.spec ?? {}) as { accessModes?: string[]; resources?: { requests?: { storage?: string } }; storageClassName?: string };
  const capacity = { storage: spec.resources?.requests?.storage ?? '1Gi' };
  try {
    return api.create(PVS, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: volumeName, annotations: { [ANN_PROVISIONED_BY]: snapshots?.driver ?? SIMULATED_PROVISIONER } },
      spec: {
        capacity,
        accessModes: spec.accessModes ?? ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        ...(spec.storageClassName ? { storageClassName: spec.storageClassName } : {}),
        ...(snapshots ? { csi: { driver: snapshots.driver, volumeHandle: relative(dataDir, folder) } } : { hostPath: { path: folder } }),
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name, uid: pvc.metadata.uid },
        ...(node ? {
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
        } : {}),
      },
    });
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 409) return safeGetPv(api, volumeName);
    if (status !== 404) throw error;
    return undefined; // 404: the server does not serve PVs
  }
}

function safeGetPv(api: InProcessApi, name: string): KubeObject | undefined {
  try {
    return api.get(PVS, name);
  } catch {
    return undefined;
  }
}

function servesPvs(api: InProcessApi): boolean {
  try {
    api.list(PVS);
    return true;
  } catch {
    return false;
  }
}

/**
 * The folder holding a volume's data: its hostPath, or for a CSI volume of the simulated driver (with snapshots) the
 * folder its handle names under the data dir; undefined for any other volume.
 */
export function volumeFolder(dataDir: string, pv: KubeObject): string | undefined {
  const spec = (pv.spec ?? {}) as { hostPath?: { path?: string }; csi?: { driver?: string; volumeHandle?: string } };
  if (spec.hostPath?.path) return spec.hostPath.path;
  return spec.csi?.driver === SIMULATED_PROVISIONER && spec.csi.volumeHandle ? join(dataDir, spec.csi.volumeHandle) : undefined;
}

/** The folder holding a claim's data: its bound volume's (volumeFolder); `<dataDir>/<namespace>/<pvc>` where no PV says otherwise. */
export function claimFolder(api: InProcessApi, dataDir: string, pvc: KubeObject): string {
  const volumeName = (pvc.spec as { volumeName?: string } | undefined)?.volumeName;
  const pv = volumeName ? safeGetPv(api, volumeName) : undefined;
  return (pv ? volumeFolder(dataDir, pv) : undefined) ?? pvcFolder(dataDir, pvc.metadata.namespace ?? '', pvc.metadata.name ?? '');
}

/**
 * The binder of the PV controller (pv-controller.ts) with this provisioner behind it, for the claims of `node`; with
 * `snapshots`, the provisioner is the CSI hostpath driver (CSI volumes, claims from its snapshots).
 */
export function binder(api: InProcessApi, dataDir: string, node: string | undefined, snapshots?: SnapshotStore): PvController {
  return pvController(
    api,
    (claim) => (node !== undefined || bindingMode(api, claim) === 'Immediate' ? provisionVolume(api, dataDir, claim, node, snapshots) : undefined),
    (pv) => volumeFolder(dataDir, pv),
  );
}

/**
 * Binds a claim as the PV controller does once its volume may be provisioned (Immediate, or for the node its
 * consumer was scheduled on): a claim naming a volume (spec.volumeName) or selecting one (spec.selector) is bound to
 * that volume or stays Pending; others get a provisioned volume. Returns the claim as it then is.
 */
export function bindClaim(api: InProcessApi, dataDir: string, pvc: KubeObject, node: string | undefined, snapshots?: SnapshotStore): KubeObject {
  if (isBound(pvc)) return pvc;
  const namespace = pvc.metadata.namespace ?? '';
  const name = pvc.metadata.name ?? '';
  if (!servesPvs(api)) {
    // a server without PersistentVolumes: the claim binds to its folder alone
    const source = dataSourceOf(api, pvc, snapshots);
    if (source && 'problem' in source) {
      warningRecorder(api)(pvc, 'ProvisioningFailed', `failed to provision volume with StorageClass "${(pvc.spec as { storageClassName?: string } | undefined)?.storageClassName ?? ''}": ${source.problem}`, SIMULATED_PROVISIONER);
      return pvc;
    }
    const folder = pvcFolder(dataDir, namespace, name);
    mkdirSync(folder, { recursive: true });
    if (source && 'clone' in source) cpSync(pvcFolder(dataDir, namespace, source.clone.metadata.name ?? ''), folder, { recursive: true });
    if (source && 'snapshot' in source) cpSync(snapshots!.folder(source.snapshot)!, folder, { recursive: true, verbatimSymlinks: true });
    const spec = (pvc.spec ?? {}) as { accessModes?: string[]; resources?: { requests?: { storage?: string } } };
    const patched = api.mergePatch(PVCS, name, namespace, { metadata: { annotations: { [ANN_BIND_COMPLETED]: 'yes' } }, spec: { volumeName: `pvc-${pvc.metadata.uid ?? name}` } });
    return api.updateStatus(PVCS, { ...patched, status: { phase: 'Bound', accessModes: spec.accessModes ?? ['ReadWriteOnce'], capacity: { storage: spec.resources?.requests?.storage ?? '1Gi' } } });
  }
  if (node) api.mergePatch(PVCS, name, namespace, { metadata: { annotations: { 'volume.kubernetes.io/selected-node': node } } });
  binder(api, dataDir, node, snapshots).syncClaim(namespace, name);
  return api.get(PVCS, name, namespace) ?? pvc;
}
