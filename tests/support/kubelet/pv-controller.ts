// The PersistentVolume controller's binder: which claim a volume belongs to, and what becomes of a volume whose claim
// is gone. Upstream: kubernetes/kubernetes pkg/controller/volume/persistentvolume/pv_controller.go, whose three sync
// functions this follows branch by branch:
// - syncUnboundClaim (a claim without pv.kubernetes.io/bind-completed): without spec.volumeName the best Available
//   volume is bound (findBestMatchForClaim: class, access modes, size, spec.selector against the volume's labels), or
//   the claim is provisioned (provisionClaim; a claim with a selector is not: sig-storage-lib-external-provisioner
//   controller.go, "claim Selector is not supported"), or it stays Pending. With spec.volumeName it binds only that
//   volume, and only when the volume's claimRef is empty or names this claim (isVolumeBoundToClaim: namespace, name,
//   and the uid when the claimRef has one); a volume claimed by another stays where it is and the claim Pending;
// - syncBoundClaim (bind-completed): a volume that came unbound is bound again; a claim whose volume is gone, or
//   whose volume names another claim, is Lost (ClaimLost, ClaimMisbound);
// - syncVolume: no claimRef, or a claimRef without uid (pre-bound), is Available; a claimRef whose claim is missing,
//   or is another claim of the same name (another uid), is Released and reclaimed: Retain keeps it, Delete deletes it
//   and, as the provisioner's Delete does, its data (reclaimVolume, deleteVolumeOperation); a volume whose claim is
//   bound elsewhere is released and deleted when it was provisioned with Delete, else unbound (unbindVolume).
// bind (bindVolumeToClaim, bindClaimToVolume, updateClaimStatus) writes the volume's claimRef with the claim's uid
// (pv.kubernetes.io/bound-by-controller on the volume when the controller chose it), the volume's phase Bound, the
// claim's volumeName (bound-by-controller on the claim when the controller set it), bind-completed, and the claim's
// status: Bound, the volume's access modes and capacity.
// Read at kubernetes/kubernetes 0097adc1 (the only stored version of pv_controller.go; the full repository was too large
// to fetch). Later releases move isVolumeBoundToClaim to util.go and, for a claim naming a volume, also check that the
// volume satisfies it (checkVolumeSatisfyClaim: class, size, volume mode); that check is not simulated.
// Not simulated: the periodic resync (a sync runs on every change of a claim or volume instead), volume modes, node
// affinity in the matching, the Recycle policy, Failed phases, finalizers (kubernetes.io/pv-protection).
import { existsSync, rmSync } from 'node:fs';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { quantity } from '../cluster/quantity.ts';
import { warningRecorder } from './events.ts';
import { PVCS, PVS } from './refs.ts';

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
const COMPONENT = 'persistentvolume-controller';

interface ClaimRef { apiVersion?: string; kind?: string; namespace?: string; name?: string; uid?: string }
interface PvSpec {
  claimRef?: ClaimRef | null;
  persistentVolumeReclaimPolicy?: string;
  storageClassName?: string;
  accessModes?: string[];
  capacity?: { storage?: string };
  hostPath?: { path?: string };
}
interface PvcSpec {
  volumeName?: string;
  storageClassName?: string;
  accessModes?: string[];
  resources?: { requests?: { storage?: string } };
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };
}

const pvSpec = (pv: KubeObject) => (pv.spec ?? {}) as PvSpec;
const pvcSpec = (pvc: KubeObject) => (pvc.spec ?? {}) as PvcSpec;
const phaseOf = (o: KubeObject) => (o.status as { phase?: string } | undefined)?.phase;
const has = (o: KubeObject, annotation: string) => o.metadata.annotations?.[annotation] !== undefined;

/** isVolumeBoundToClaim (pv_controller.go; util.go in later releases): same namespace and name, and uid when set. */
export function isVolumeBoundToClaim(pv: KubeObject, claim: KubeObject): boolean {
  const ref = pvSpec(pv).claimRef;
  if (!ref) return false;
  if (ref.name !== claim.metadata.name || ref.namespace !== claim.metadata.namespace) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
}

/** The label selector of a claim against a volume's labels (metav1.LabelSelectorAsSelector). */
function selects(selector: PvcSpec['selector'], labels: Record<string, string> = {}): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const value = labels[e.key];
    if (e.operator === 'In' && !(value !== undefined && (e.values ?? []).includes(value))) return false;
    if (e.operator === 'NotIn' && value !== undefined && (e.values ?? []).includes(value)) return false;
    if (e.operator === 'Exists' && value === undefined) return false;
    if (e.operator === 'DoesNotExist' && value !== undefined) return false;
  }
  return true;
}

export interface PvController {
  syncClaim(namespace: string, name: string): void;
  syncVolume(name: string): void;
  /** the volumes whose claimRef names `namespace/name`, for a claim's deletion */
  volumesNaming(namespace: string, name: string): string[];
}

/**
 * The binder. `provision` makes a volume for a claim that no existing volume satisfies (storage.ts, the hostPath
 * provisioner) and returns it, or undefined when the claim waits (WaitForFirstConsumer, no provisioner). `folderOf`:
 * the folder holding a volume's data, which its deletion removes (its hostPath unless told otherwise; storage.ts
 * knows where a CSI volume of the simulated driver keeps it).
 */
export function pvController(
  api: InProcessApi, provision: (claim: KubeObject) => KubeObject | undefined,
  folderOf: (pv: KubeObject) => string | undefined = (pv) => pvSpec(pv).hostPath?.path,
): PvController {
  const warn = warningRecorder(api);
  const getPv = (name: string) => { try { return api.get(PVS, name); } catch { return undefined; } };

  function updateVolumePhase(pv: KubeObject, phase: string): KubeObject {
    if (phaseOf(pv) === phase) return pv;
    return api.updateStatus(PVS, { ...pv, status: { ...(pv.status ?? {}), phase } });
  }

  function updateClaimStatus(claim: KubeObject, phase: string, pv: KubeObject | undefined): KubeObject {
    const status = pv
      ? { phase, accessModes: pvSpec(pv).accessModes, capacity: pvSpec(pv).capacity }
      : { phase };
    const current = (claim.status ?? {}) as Record<string, unknown>;
    if (JSON.stringify({ phase: current.phase, accessModes: current.accessModes, capacity: current.capacity }) === JSON.stringify({ accessModes: undefined, capacity: undefined, ...status })) return claim;
    return api.updateStatus(PVCS, { ...claim, status });
  }

  /** bind: bindVolumeToClaim, updateVolumePhase(Bound), bindClaimToVolume, updateClaimStatus(Bound). */
  function bind(pv: KubeObject, claim: KubeObject): void {
    const ref = pvSpec(pv).claimRef;
    const byController = !isVolumeBoundToClaim(pv, claim);
    if (!ref || ref.name !== claim.metadata.name || ref.namespace !== claim.metadata.namespace || ref.uid !== claim.metadata.uid || (byController && !has(pv, ANN_BOUND_BY_CONTROLLER))) {
      pv = api.mergePatch(PVS, pv.metadata.name ?? '', undefined, {
        ...(byController ? { metadata: { annotations: { [ANN_BOUND_BY_CONTROLLER]: 'yes' } } } : {}),
        spec: { claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion } },
      });
    }
    pv = updateVolumePhase(pv, 'Bound');
    const setName = pvcSpec(claim).volumeName !== pv.metadata.name;
    if (setName || !has(claim, ANN_BIND_COMPLETED)) {
      const annotations: Record<string, string> = { [ANN_BIND_COMPLETED]: 'yes' };
      if (setName) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
      claim = api.mergePatch(PVCS, claim.metadata.name ?? '', claim.metadata.namespace, {
        metadata: { annotations }, ...(setName ? { spec: { volumeName: pv.metadata.name } } : {}),
      });
    }
    updateClaimStatus(claim, 'Bound', pv);
  }

  /** findBestMatchForClaim: the smallest Available volume the claim fits on (pre-bound to it, or to nobody). */
  function findBestMatch(claim: KubeObject): KubeObject | undefined {
    const spec = pvcSpec(claim);
    const wanted = quantity(spec.resources?.requests?.storage ?? '0');
    let best: KubeObject | undefined;
    for (const pv of api.list(PVS)) {
      const s = pvSpec(pv);
      if (pv.metadata.deletionTimestamp) continue;
      if (s.claimRef && !isVolumeBoundToClaim(pv, claim)) continue;
      if (!s.claimRef && phaseOf(pv) !== 'Available' && phaseOf(pv) !== 'Pending') continue;
      if ((s.storageClassName ?? '') !== (spec.storageClassName ?? '')) continue;
      if (!(spec.accessModes ?? []).every((m) => (s.accessModes ?? []).includes(m))) continue;
      if (!selects(spec.selector, pv.metadata.labels)) continue;
      const size = quantity(s.capacity?.storage ?? '0');
      if (size < wanted) continue;
      if (s.claimRef) return pv; // pre-bound to this claim: chosen before any other (findMatchingVolume)
      if (!best || size < quantity(pvSpec(best).capacity?.storage ?? '0')) best = pv;
    }
    return best;
  }

  function syncUnboundClaim(claim: KubeObject): void {
    const volumeName = pvcSpec(claim).volumeName;
    if (!volumeName) {
      const pv = findBestMatch(claim);
      if (pv) return bind(pv, claim);
      if (pvcSpec(claim).selector) {
        // sig-storage-lib-external-provisioner controller.go (provisionClaimOperation): "claim Selector is not supported"
        warn(claim, 'ProvisioningFailed', 'claim Selector is not supported', COMPONENT);
        updateClaimStatus(claim, 'Pending', undefined);
        return;
      }
      const made = provision(claim);
      if (made) return bind(made, claim);
      return; // Pending: waits for a consumer, or for a volume that matches
    }
    const pv = getPv(volumeName);
    if (!pv) {
      updateClaimStatus(claim, 'Pending', undefined); // asked for a volume that does not exist; retried later
      return;
    }
    if (!pvSpec(pv).claimRef || isVolumeBoundToClaim(pv, claim)) return bind(pv, claim);
    // claimed by someone else: the claim waits (pv_controller.go: "volume already bound to different claim by user")
    updateClaimStatus(claim, 'Pending', undefined);
  }

  function syncBoundClaim(claim: KubeObject): void {
    const volumeName = pvcSpec(claim).volumeName;
    const lost = (reason: string, message: string) => {
      if (phaseOf(claim) === 'Lost') return;
      updateClaimStatus(claim, 'Lost', undefined);
      warn(claim, reason, message, COMPONENT);
    };
    if (!volumeName) return lost('ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
    const pv = getPv(volumeName);
    if (!pv) return lost('ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
    const ref = pvSpec(pv).claimRef;
    if (!ref || isVolumeBoundToClaim(pv, claim)) return bind(pv, claim);
    return lost('ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
  }

  function reclaim(pv: KubeObject): void {
    if (pvSpec(pv).persistentVolumeReclaimPolicy !== 'Delete') return; // Retain: the volume and its data stay, Released
    // deleteVolumeOperation: the provisioner deletes the storage asset, then the controller the PersistentVolume
    const path = folderOf(pv);
    if (path && existsSync(path)) rmSync(path, { recursive: true, force: true });
    try {
      api.delete(PVS, pv.metadata.name ?? '');
    } catch (error) {
      if ((error as { status?: number }).status !== 404) throw error;
    }
  }

  function release(pv: KubeObject): void {
    if (phaseOf(pv) !== 'Released' && phaseOf(pv) !== 'Failed') pv = updateVolumePhase(pv, 'Released');
    reclaim(pv);
  }

  function syncVolume(pv: KubeObject): void {
    const ref = pvSpec(pv).claimRef;
    if (!ref || !ref.uid) {
      updateVolumePhase(pv, 'Available'); // unused, or pre-bound to a claim whose sync will bind it
      return;
    }
    let claim = api.get(PVCS, ref.name ?? '', ref.namespace);
    if (claim && claim.metadata.uid !== ref.uid) claim = undefined; // deleted, and another made under its name
    if (!claim) return release(pv);
    const volumeName = pvcSpec(claim).volumeName;
    if (!volumeName) {
      syncClaim(claim.metadata.namespace ?? '', claim.metadata.name ?? ''); // the claim's sync finishes the binding
      return;
    }
    if (volumeName === pv.metadata.name) {
      updateVolumePhase(pv, 'Bound');
      return;
    }
    // the claim is bound elsewhere
    if (has(pv, ANN_PROVISIONED_BY) && pvSpec(pv).persistentVolumeReclaimPolicy === 'Delete') return release(pv);
    // unbindVolume: the controller's binding is undone; a user's pre-binding keeps its claimRef without the uid
    const unbound = has(pv, ANN_BOUND_BY_CONTROLLER)
      ? api.mergePatch(PVS, pv.metadata.name ?? '', undefined, { metadata: { annotations: { [ANN_BOUND_BY_CONTROLLER]: null } }, spec: { claimRef: null } })
      : api.mergePatch(PVS, pv.metadata.name ?? '', undefined, { spec: { claimRef: { uid: null, resourceVersion: null } } });
    updateVolumePhase(unbound, 'Available');
  }

  function syncClaim(namespace: string, name: string): void {
    const claim = api.get(PVCS, name, namespace);
    if (!claim || claim.metadata.deletionTimestamp) return;
    if (has(claim, ANN_BIND_COMPLETED)) syncBoundClaim(claim);
    else syncUnboundClaim(claim);
  }

  return {
    syncClaim,
    syncVolume(name) {
      const pv = getPv(name);
      if (pv && !pv.metadata.deletionTimestamp) syncVolume(pv);
    },
    volumesNaming(namespace, name) {
      try {
        return api.list(PVS).filter((pv) => pvSpec(pv).claimRef?.namespace === namespace && pvSpec(pv).claimRef?.name === name).map((pv) => pv.metadata.name ?? '');
      } catch {
        return [];
      }
    },
  };
}
