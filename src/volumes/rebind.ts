// Restore by hand-over: a PVC's data is restored without anything of the restore in the user's namespace. A claim
// like the user's (class, size, access modes, volume mode) is made in the model's namespace, filled there by the
// engine's mover Job, and its PersistentVolume is then handed to the user's claim the way Velero's generic restore
// exposer does (vmware-tanzu/velero pkg/exposer/generic_restore.go, RebindVolume; pkg/util/kube/pvc_pv.go,
// SetPVReclaimPolicy, RebindPVC, ResetPVBinding, WaitPVCBound, DeletePVAndPVCIfAny):
//   1. the volume's reclaim policy becomes Retain, its original remembered, so that deleting the temporary claim
//      releases the volume instead of deleting it (kubernetes pv_controller.go, syncVolume, reclaimVolume);
//   2. the temporary claim is deleted; the volume is Released;
//   3. the user's claim (created by the restore reserved for this: ./fill-mark.ts, LABEL_HANDOVER) gets
//      spec.volumeName (RebindPVC), and the volume's claimRef names it (ResetPVBinding: namespace and name; here also
//      its uid, so that no other claim of that name made meanwhile can take it) without bound-by-controller, and the
//      selector's label;
//   4. once the claim is Bound (the PV controller's syncUnboundClaim binds a claim naming a volume whose claimRef
//      names it), the original reclaim policy is put back and the claim loses its fill mark.
// Crash safety: every step is recorded first in a ConfigMap of the model's namespace (the record), which only this
// product writes there; a rerun reads it and goes on from where the killed run stopped. The record is trusted, the
// user's namespace never: the user's claim is matched by the uid the record holds. From the temporary claim's
// deletion until the claim is Bound the volume's policy is Retain, so no step loses it; a record whose user claim is
// gone (or is another claim of that name) is abandoned: its temporary claim and volume are deleted
// (DeletePVAndPVCIfAny), so nothing is left behind.
import { createHmac } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';
import { FILL_MARK_REMOVAL, handoverReservation, hasFillMark, LABEL_HANDOVER } from './fill-mark.ts';
import { PVCS, type MoverResource, type VolumeKube } from './kube-port.ts';
import { LABEL_BACKUP_ID, LABEL_COMPONENT, LABEL_MANAGED_BY, MANAGED_BY } from './labels.ts';

export const PVS: MoverResource = { group: '', version: 'v1', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false };
export const CONFIGMAPS: MoverResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };

export const HANDOVER_COMPONENT = 'volume-handover';
export const HANDOVER_SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY},${LABEL_COMPONENT}=${HANDOVER_COMPONENT}`;
/** on the temporary claim: the record it belongs to */
export const ANNOTATION_RECORD = 'kubeflow-upgrader/handover-record';
const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';

/** How a PVC's data was restored: handed over from the model's namespace, or by a mover in the PVC's own namespace. */
export type RestoreWay = 'handover' | 'in-namespace';

export interface HandoverContext {
  /** the model's namespace (the charm's, the CLI's --job-namespace): never a profile's */
  namespace: string;
  /** the run's name key (labels.ts moverNameKey), so names in the model's namespace are this installation's */
  nameKey: Buffer;
  backupId: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** What the record keeps, as its ConfigMap's data. */
export interface HandoverRecord {
  namespace: string;
  pvc: string;
  claimUid: string;
  tempClaim: string;
  tempClaimUid?: string;
  volume?: string;
  volumeUid?: string;
  /** the volume's reclaim policy before the hand-over made it Retain */
  reclaimPolicy?: string;
  /** the fill's result, once the mover finished: JSON of files, bytes, checksumVerified and the engine's fields */
  filled?: string;
}

const keyed = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest('hex').slice(0, 16);
export const recordName = (key: Buffer, namespace: string, pvc: string) => `kfu-handover-${keyed(key, `${namespace}/${pvc}`)}`;
export const tempClaimName = (key: Buffer, namespace: string, pvc: string) => `kfu-fill-${keyed(key, `${namespace}/${pvc}`)}`;

const phaseOf = (o: KubeObject | undefined) => (o?.status as { phase?: string } | undefined)?.phase;
const volumeNameOf = (o: KubeObject | undefined) => (o?.spec as { volumeName?: string } | undefined)?.volumeName;
const policyOf = (pv: KubeObject) => (pv.spec as { persistentVolumeReclaimPolicy?: string } | undefined)?.persistentVolumeReclaimPolicy ?? 'Delete';
const claimRefOf = (pv: KubeObject) => (pv.spec as { claimRef?: { namespace?: string; name?: string; uid?: string } } | undefined)?.claimRef;

/** Whether the user's claim is to be filled by a hand-over: reserved for it when the restore created it, and unbound. */
export function handsOver(pvc: KubeObject): boolean {
  return handoverReservation(pvc) !== undefined;
}

function readRecord(cm: KubeObject | undefined): HandoverRecord | undefined {
  if (!cm || cm.metadata.labels?.[LABEL_COMPONENT] !== HANDOVER_COMPONENT || cm.metadata.labels?.[LABEL_MANAGED_BY] !== MANAGED_BY) return undefined;
  const data = (cm as { data?: Record<string, string> }).data ?? {};
  if (!data.namespace || !data.pvc || !data.claimUid || !data.tempClaim) return undefined;
  return data as unknown as HandoverRecord;
}

async function patchRecord(kube: VolumeKube, context: HandoverContext, name: string, data: Partial<HandoverRecord>): Promise<HandoverRecord> {
  const patched = await kube.mergePatch(CONFIGMAPS, context.namespace, name, { data });
  const record = readRecord(patched);
  if (!record) throw new Error(`the hand-over record ${context.namespace}/${name} is not this product's`);
  return record;
}

/** The temporary claim: like the user's in class, size, access modes and volume mode, in the model's namespace. */
function tempClaim(context: HandoverContext, user: KubeObject, name: string, record: string): KubeObject {
  const spec = (user.spec ?? {}) as { storageClassName?: string; accessModes?: string[]; volumeMode?: string; resources?: unknown };
  const node = user.metadata.annotations?.[ANN_SELECTED_NODE];
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: {
      name, namespace: context.namespace,
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_COMPONENT]: HANDOVER_COMPONENT, [LABEL_BACKUP_ID]: context.backupId },
      // Velero's createRestorePVC carries the target's selected node over, so the volume is made where it is wanted
      annotations: { [ANNOTATION_RECORD]: record, ...(node ? { [ANN_SELECTED_NODE]: node } : {}) },
    },
    spec: {
      ...(spec.storageClassName !== undefined ? { storageClassName: spec.storageClassName } : {}),
      accessModes: spec.accessModes ?? ['ReadWriteOnce'],
      ...(spec.volumeMode ? { volumeMode: spec.volumeMode } : {}),
      resources: spec.resources ?? { requests: { storage: '1Gi' } },
    },
  };
}

/** One PVC's hand-over in progress: the record, the temporary claim to fill (unless filled), the fill's result if any. */
export interface HandoverPlan {
  recordName: string;
  record: HandoverRecord;
  /** the temporary claim the mover fills; undefined once filled */
  temp?: KubeObject;
  filled?: Record<string, unknown>;
}

/**
 * Finds (a rerun) or makes the record and the temporary claim of the user's claim `user`. A record of another claim of
 * that name (another uid: the user's claim was deleted and made again) is abandoned first.
 */
export async function prepareHandover(kube: VolumeKube, context: HandoverContext, user: KubeObject): Promise<HandoverPlan> {
  const namespace = user.metadata.namespace ?? '';
  const pvc = user.metadata.name ?? '';
  const name = recordName(context.nameKey, namespace, pvc);
  const temp = tempClaimName(context.nameKey, namespace, pvc);
  let record = readRecord(await kube.get(CONFIGMAPS, context.namespace, name));
  if (record && record.claimUid !== user.metadata.uid) {
    await abandon(kube, context, name, record);
    record = undefined;
  }
  if (record?.filled && record.volume && !(await kube.get(PVS, '', record.volume))) {
    // the filled volume is gone (deleted by hand): fill again
    await abandon(kube, context, name, record);
    record = undefined;
  }
  if (!record) {
    const made = await kube.create(CONFIGMAPS, {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name, namespace: context.namespace, labels: { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_COMPONENT]: HANDOVER_COMPONENT, [LABEL_BACKUP_ID]: context.backupId } },
      data: { namespace, pvc, claimUid: user.metadata.uid ?? '', tempClaim: temp },
    }).catch(async (error: unknown) => {
      // a create resent after a lost answer: the record is there, and says whose it is
      if ((error as { status?: number }).status !== 409) throw error;
      const found = await kube.get(CONFIGMAPS, context.namespace, name);
      if (!readRecord(found) || readRecord(found)?.claimUid !== user.metadata.uid) throw error;
      return found!;
    });
    record = readRecord(made)!;
  }
  if (record.filled) return { recordName: name, record, filled: JSON.parse(record.filled) as Record<string, unknown> };
  let claim = await kube.get(PVCS, context.namespace, temp);
  if (claim && (claim.metadata.annotations?.[ANNOTATION_RECORD] !== name || (record.tempClaimUid && claim.metadata.uid !== record.tempClaimUid) || claim.metadata.deletionTimestamp)) {
    // a temporary claim of an abandoned record, or one going away: it goes, with its volume
    await deleteClaimAndVolume(kube, context, claim);
    claim = undefined;
  }
  if (!claim) {
    claim = await kube.create(PVCS, tempClaim(context, user, temp, name));
    record = await patchRecord(kube, context, name, { tempClaimUid: claim.metadata.uid ?? '' });
  }
  return { recordName: name, record, temp: claim };
}

/**
 * The fill is done: its result and the volume are recorded, then the volume is made Retain (the original policy
 * recorded before, once), so that the temporary claim's deletion releases it.
 */
export async function recordFilled(kube: VolumeKube, context: HandoverContext, plan: HandoverPlan, result: Record<string, unknown>): Promise<HandoverPlan> {
  const claim = await kube.get(PVCS, context.namespace, plan.record.tempClaim);
  const volumeName = volumeNameOf(claim);
  if (!claim || !volumeName || claim.metadata.uid !== plan.record.tempClaimUid) throw new Error(`its filled claim ${context.namespace}/${plan.record.tempClaim} is gone or not bound`);
  const volume = await kube.get(PVS, '', volumeName);
  if (!volume) throw new Error(`the volume ${volumeName} of its filled claim is gone`);
  let record = await patchRecord(kube, context, plan.recordName, {
    volume: volumeName, volumeUid: volume.metadata.uid ?? '', ...(plan.record.reclaimPolicy ? {} : { reclaimPolicy: policyOf(volume) }),
  });
  await retain(kube, volume);
  record = await patchRecord(kube, context, plan.recordName, { filled: JSON.stringify(result) });
  return { recordName: plan.recordName, record, filled: result };
}

async function retain(kube: VolumeKube, volume: KubeObject): Promise<void> {
  if (policyOf(volume) !== 'Retain') await kube.mergePatch(PVS, '', volume.metadata.name ?? '', { spec: { persistentVolumeReclaimPolicy: 'Retain' } });
}

/**
 * Hands the filled volume to the user's claim (RebindVolume's steps after the fill) and ends the record. Every step
 * is safe to run again: a rerun after a kill anywhere goes on from the state it finds.
 */
export async function handOver(kube: VolumeKube, context: HandoverContext, plan: HandoverPlan, user: KubeObject): Promise<string> {
  const { record } = plan;
  const namespace = user.metadata.namespace ?? '';
  const name = user.metadata.name ?? '';
  if (!record.volume || !record.reclaimPolicy) throw new Error('its hand-over record names no filled volume');
  let volume = await kube.get(PVS, '', record.volume);
  if (!volume || volume.metadata.uid !== record.volumeUid) throw new Error(`its filled volume ${record.volume} is gone`);
  // 1. Retain while in flight (SetPVReclaimPolicy)
  await retain(kube, volume);
  // 2. the temporary claim goes (EnsureDeletePVC); the volume is Released, not deleted
  const temp = await kube.get(PVCS, context.namespace, record.tempClaim);
  if (temp && temp.metadata.uid === record.tempClaimUid) {
    await kube.delete(PVCS, context.namespace, record.tempClaim);
    await kube.waitFor(PVCS, context.namespace, record.tempClaim, (o) => o === undefined || o.metadata.uid !== record.tempClaimUid, { timeoutMs: context.timeoutMs, signal: context.signal });
  }
  // 3. the user's claim names the volume (RebindPVC: allowed once, while spec.volumeName is empty)
  const current = await kube.get(PVCS, namespace, name);
  if (!current || current.metadata.uid !== record.claimUid) throw new Error('the PersistentVolumeClaim was deleted during its hand-over');
  const named = volumeNameOf(current);
  if (named && named !== record.volume) throw new Error(`the PersistentVolumeClaim is bound to another volume (${named}); its data was left in volume ${record.volume}`);
  if (!named) {
    await kube.mergePatch(PVCS, namespace, name, {
      metadata: { annotations: { [ANN_BIND_COMPLETED]: null, [ANN_BOUND_BY_CONTROLLER]: null } }, spec: { volumeName: record.volume },
    });
  }
  // ...and the volume names the claim (ResetPVBinding), with the label its selector asks for
  volume = (await kube.get(PVS, '', record.volume))!;
  const ref = claimRefOf(volume);
  if (!(ref?.namespace === namespace && ref.name === name && ref.uid === record.claimUid)) {
    const reservation = handoverReservation(current);
    await kube.mergePatch(PVS, '', record.volume, {
      metadata: { annotations: { [ANN_BOUND_BY_CONTROLLER]: null }, ...(reservation ? { labels: { [LABEL_HANDOVER]: reservation } } : {}) },
      spec: { claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name, uid: record.claimUid, resourceVersion: null, fieldPath: null } },
    });
  }
  // 4. the claim is Bound to it (WaitPVCBound), the original policy is back, the mark and the record go
  const bound = await kube.waitFor(PVCS, namespace, name, (o) => o === undefined || (phaseOf(o) === 'Bound' && volumeNameOf(o) === record.volume), { timeoutMs: context.timeoutMs, signal: context.signal })
    .catch((error: unknown) => { throw new Error(`its claim did not become Bound to the restored volume ${record.volume} (${(error as Error).message}); a rerun goes on`); });
  if (!bound || bound.metadata.uid !== record.claimUid) throw new Error('the PersistentVolumeClaim was deleted during its hand-over');
  await finish(kube, context, plan.recordName, record, bound);
  return record.volume;
}

/**
 * The end of a hand-over whose claim is Bound to its volume: the original policy back, the record gone, then the mark
 * off. A kill between the last two leaves a marked claim Bound to a volume carrying its reservation, which
 * finishedHandover recognises on the rerun.
 */
async function finish(kube: VolumeKube, context: HandoverContext, name: string, record: HandoverRecord, user: KubeObject): Promise<void> {
  const volume = await kube.get(PVS, '', record.volume ?? '');
  if (volume && record.reclaimPolicy && policyOf(volume) !== record.reclaimPolicy) {
    await kube.mergePatch(PVS, '', record.volume ?? '', { spec: { persistentVolumeReclaimPolicy: record.reclaimPolicy } });
  }
  await kube.delete(CONFIGMAPS, context.namespace, name);
  if (hasFillMark(user)) await kube.mergePatch(PVCS, user.metadata.namespace ?? '', user.metadata.name ?? '', FILL_MARK_REMOVAL);
}

/**
 * A reserved, still marked claim already Bound: if its volume is the one a hand-over gave it (the volume carries the
 * claim's reservation label and names it by uid), the hand-over is finished (policy back from the record if one is
 * left, mark off) and the volume's name returned; otherwise undefined.
 */
export async function finishedHandover(kube: VolumeKube, context: HandoverContext, user: KubeObject): Promise<string | undefined> {
  const volumeName = volumeNameOf(user) ?? '';
  const volume = await kube.get(PVS, '', volumeName);
  const reservation = handoverReservation(user);
  const ref = volume ? claimRefOf(volume) : undefined;
  if (!volume || !reservation || phaseOf(user) !== 'Bound' || volume.metadata.labels?.[LABEL_HANDOVER] !== reservation || ref?.uid !== user.metadata.uid) return undefined;
  const name = recordName(context.nameKey, user.metadata.namespace ?? '', user.metadata.name ?? '');
  const record = readRecord(await kube.get(CONFIGMAPS, context.namespace, name));
  if (record && record.claimUid === user.metadata.uid) await finish(kube, context, name, record, user);
  else if (hasFillMark(user)) await kube.mergePatch(PVCS, user.metadata.namespace ?? '', user.metadata.name ?? '', FILL_MARK_REMOVAL);
  return volumeName;
}

/** The volume the record of this claim (by uid) has filled for it, if any: a claim naming it is mid-hand-over. */
export async function recordedVolume(kube: VolumeKube, context: HandoverContext, user: KubeObject): Promise<string | undefined> {
  const record = readRecord(await kube.get(CONFIGMAPS, context.namespace, recordName(context.nameKey, user.metadata.namespace ?? '', user.metadata.name ?? '')));
  return record && record.claimUid === user.metadata.uid && record.filled ? record.volume : undefined;
}

/** A temporary claim and its volume go (DeletePVAndPVCIfAny): the volume made Delete first, so its data goes with it. */
async function deleteClaimAndVolume(kube: VolumeKube, context: HandoverContext, claim: KubeObject): Promise<void> {
  const volumeName = volumeNameOf(claim);
  const volume = volumeName ? await kube.get(PVS, '', volumeName) : undefined;
  if (volume && policyOf(volume) !== 'Delete') await kube.mergePatch(PVS, '', volumeName!, { spec: { persistentVolumeReclaimPolicy: 'Delete' } });
  await kube.delete(PVCS, context.namespace, claim.metadata.name ?? '');
  await kube.waitFor(PVCS, context.namespace, claim.metadata.name ?? '', (o) => o === undefined || o.metadata.uid !== claim.metadata.uid, { timeoutMs: context.timeoutMs, signal: context.signal });
}

/**
 * A record whose user claim is gone: its temporary claim and volume are deleted, unless the volume is Bound to a live
 * claim of the uid the record names (then it is that claim's, and only the record goes).
 */
async function abandon(kube: VolumeKube, context: HandoverContext, name: string, record: HandoverRecord): Promise<void> {
  const temp = await kube.get(PVCS, context.namespace, record.tempClaim);
  if (temp && temp.metadata.annotations?.[ANNOTATION_RECORD] === name) await deleteClaimAndVolume(kube, context, temp);
  const volume = record.volume ? await kube.get(PVS, '', record.volume) : undefined;
  if (volume && volume.metadata.uid === record.volumeUid) {
    const ref = claimRefOf(volume);
    const holder = ref?.name ? await kube.get(PVCS, ref.namespace ?? '', ref.name) : undefined;
    const held = holder && holder.metadata.uid === ref?.uid && volumeNameOf(holder) === record.volume && holder.metadata.uid !== record.claimUid && holder.metadata.uid !== record.tempClaimUid;
    if (!held) {
      // Released (or about to be): Delete makes the PV controller reclaim it, data and all
      await kube.mergePatch(PVS, '', record.volume!, { spec: { persistentVolumeReclaimPolicy: 'Delete' } });
      if (ref?.uid === undefined || ref.uid === '') await kube.delete(PVS, '', record.volume!);
    }
  }
  await kube.delete(CONFIGMAPS, context.namespace, name);
}

/**
 * Converges every record a killed run left in the model's namespace whose user claim this run does not fill: a claim
 * already Bound to its volume is finished (policy back, mark off); a claim that is gone, or is another of that name,
 * has its record abandoned. Returns how many records it settled.
 */
export async function settleLeftovers(kube: VolumeKube, context: HandoverContext, filling: ReadonlySet<string>): Promise<number> {
  let settled = 0;
  for (const cm of await kube.list(CONFIGMAPS, context.namespace, HANDOVER_SELECTOR)) {
    const record = readRecord(cm);
    const name = cm.metadata.name ?? '';
    if (!record) continue;
    if (filling.has(`${record.namespace}/${record.pvc}`)) continue;
    const user = await kube.get(PVCS, record.namespace, record.pvc);
    if (!user || user.metadata.uid !== record.claimUid) {
      await abandon(kube, context, name, record);
      settled++;
    } else if (record.volume && phaseOf(user) === 'Bound' && volumeNameOf(user) === record.volume) {
      await finish(kube, context, name, record, user);
      settled++;
    }
  }
  return settled;
}
