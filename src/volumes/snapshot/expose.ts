// A PVC's data the way Velero's CSI data mover reads it (vmware-tanzu/velero pkg/exposer/csi_snapshot.go Expose and
// CleanUp): a VolumeSnapshot of the user's PVC, waited for until readyToUse, is handed over to the product's own
// namespace as a static VolumeSnapshotContent with the same snapshotHandle and a VolumeSnapshot bound to it; the
// original snapshot and content are then deleted (the content retained first, so the provider's snapshot stays), and a
// PVC provisioned from the exposed snapshot is what the mover mounts. Nothing of the copy runs in the profile namespace.
//
// Unlike Velero, whose exposed content is created with deletionPolicy Delete while the original still is Delete too,
// here at no moment do two contents with deletionPolicy Delete hold the same handle: the exposed content is created
// Retain, the original is made Retain before it goes, and only then is the exposed one made Delete, the one owner of the
// provider's snapshot, which deleting the exposed VolumeSnapshot finally removes. A crash at any step leaves objects
// that removeExposure, run by the next backup before anything else, takes apart in the same order: whichever content
// still holds the handle alone is made Delete and goes with its snapshot; one that shares it is made Retain first.
import type { KubeObject } from '../../kube/types.ts';
import { PVCS, type VolumeKube } from '../kube-port.ts';
import { VOLUME_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS, type ContentSpec, type ContentStatus, type SnapshotStatus } from './kinds.ts';
import { exposureMetadata, type ExposurePlan } from './names.ts';

export interface ExposeOptions {
  /** how long one object may take to become ready or go */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface Exposed {
  /** the claim in the plan's namespace the mover mounts */
  claim: string;
  /** when the provider took the snapshot (the VolumeSnapshot's status.creationTime) */
  takenAt: string;
  volumeSnapshotClass: string;
}

const statusOf = <T>(o: KubeObject | undefined): T => (o?.status ?? {}) as T;
const specOf = <T>(o: KubeObject | undefined): T => (o?.spec ?? {}) as T;

function isTaken(error: unknown): boolean {
  return (error as { status?: unknown } | undefined)?.status === 409;
}

async function createOnce(kube: VolumeKube, resource: Parameters<VolumeKube['create']>[0], object: KubeObject): Promise<void> {
  try {
    await kube.create(resource, object);
  } catch (error) {
    if (!isTaken(error)) throw error;
  }
}

async function readyToUse(kube: VolumeKube, namespace: string, name: string, what: string, options: ExposeOptions): Promise<KubeObject> {
  let last: KubeObject | undefined;
  try {
    const found = await kube.waitFor(VOLUME_SNAPSHOTS, namespace, name, (o) => {
      last = o;
      return o === undefined || statusOf<SnapshotStatus>(o).readyToUse === true;
    }, options);
    if (!found) throw new Error(`${what} ${namespace}/${name} was deleted before it was ready`);
    return found;
  } catch (error) {
    const why = statusOf<SnapshotStatus>(last).error?.message;
    if (why && !options.signal?.aborted) throw new Error(`${what} ${namespace}/${name} did not become ready to use: ${why}`);
    throw error;
  }
}

async function gone(kube: VolumeKube, resource: Parameters<VolumeKube['create']>[0], namespace: string, name: string, options: ExposeOptions): Promise<void> {
  await kube.delete(resource, namespace, name);
  await kube.waitFor(resource, namespace, name, (o) => o === undefined, options);
}

/** the dynamic content of the user's snapshot: named by its status, else found by the reference back to it */
async function originalContent(kube: VolumeKube, plan: ExposurePlan, snapshot: KubeObject | undefined): Promise<KubeObject | undefined> {
  const bound = statusOf<SnapshotStatus>(snapshot).boundVolumeSnapshotContentName;
  if (bound) return kube.get(VOLUME_SNAPSHOT_CONTENTS, '', bound);
  const contents = await kube.list(VOLUME_SNAPSHOT_CONTENTS, '');
  return contents.find((c) => {
    const ref = specOf<ContentSpec>(c).volumeSnapshotRef;
    return ref?.namespace === plan.source.namespace && ref.name === plan.snapshot && c.metadata.name !== plan.content;
  });
}

async function setPolicy(kube: VolumeKube, content: KubeObject, policy: 'Delete' | 'Retain'): Promise<void> {
  if (specOf<ContentSpec>(content).deletionPolicy === policy) return;
  await kube.mergePatch(VOLUME_SNAPSHOT_CONTENTS, '', content.metadata.name ?? '', { spec: { deletionPolicy: policy } });
}

/**
 * Takes the user's PVC's snapshot and exposes it in the plan's namespace as a claim the mover can mount. Whatever an
 * earlier run of the same plan left is removed first, so the copy always starts from a snapshot of this run.
 */
export async function exposeSnapshot(kube: VolumeKube, plan: ExposurePlan, choice: { className: string; storageClass: string }, pvc: KubeObject, options: ExposeOptions): Promise<Exposed> {
  await removeExposure(kube, plan, options);
  const { labels, annotations } = exposureMetadata(plan);
  const metadata = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), labels, annotations });
  await createOnce(kube, VOLUME_SNAPSHOTS, {
    apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: metadata(plan.snapshot, plan.source.namespace),
    spec: { source: { persistentVolumeClaimName: plan.source.pvc }, volumeSnapshotClassName: choice.className },
  } as KubeObject);
  const taken = await readyToUse(kube, plan.source.namespace, plan.snapshot, 'the VolumeSnapshot of the PVC', options);
  const takenStatus = statusOf<SnapshotStatus>(taken);
  const original = await originalContent(kube, plan, taken);
  const handle = statusOf<ContentStatus>(original).snapshotHandle;
  if (!original || !handle) throw new Error(`the VolumeSnapshot ${plan.source.namespace}/${plan.snapshot} is ready but its content names no snapshot handle`);

  // the hand-over: the exposed snapshot and its static content (Retain while the original still holds the handle)
  await createOnce(kube, VOLUME_SNAPSHOTS, {
    apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: metadata(plan.snapshot, plan.namespace),
    spec: { source: { volumeSnapshotContentName: plan.content }, volumeSnapshotClassName: choice.className },
  } as KubeObject);
  await createOnce(kube, VOLUME_SNAPSHOT_CONTENTS, {
    apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', metadata: metadata(plan.content),
    spec: {
      volumeSnapshotRef: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', name: plan.snapshot, namespace: plan.namespace },
      source: { snapshotHandle: handle },
      driver: specOf<ContentSpec>(original).driver,
      deletionPolicy: 'Retain',
      volumeSnapshotClassName: choice.className,
    },
  } as KubeObject);
  const exposed = await readyToUse(kube, plan.namespace, plan.snapshot, 'the exposed VolumeSnapshot', options);
  // the original goes, retained so that the provider's snapshot stays; then the exposed content alone owns it
  await setPolicy(kube, original, 'Retain');
  await gone(kube, VOLUME_SNAPSHOTS, plan.source.namespace, plan.snapshot, options);
  await gone(kube, VOLUME_SNAPSHOT_CONTENTS, '', original.metadata.name ?? '', options);
  const content = await kube.get(VOLUME_SNAPSHOT_CONTENTS, '', plan.content);
  if (content) await setPolicy(kube, content, 'Delete');

  const spec = specOf<{ resources?: { requests?: { storage?: string } } }>(pvc);
  const size = statusOf<SnapshotStatus>(exposed).restoreSize;
  const requested = spec.resources?.requests?.storage;
  await createOnce(kube, PVCS, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: metadata(plan.claim, plan.namespace),
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: choice.storageClass,
      dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: plan.snapshot },
      // the source's request: a restored volume may not be smaller than the snapshot's source (Velero uses restoreSize
      // when set, else the volume's size; a bare byte count here may fall below the requested capacity)
      resources: { requests: { storage: requested ?? size ?? '1Gi' } },
    },
  } as KubeObject);
  return { claim: plan.claim, takenAt: takenStatus.creationTime ?? new Date().toISOString(), volumeSnapshotClass: choice.className };
}

/**
 * Removes every object of the plan, in an order that neither leaks nor deletes too early the provider's snapshot: the
 * claim first (a snapshot a Pending claim is provisioned from cannot go), then the user's snapshot and its content,
 * then the exposed snapshot and its content, whose deletionPolicy Delete frees the provider's snapshot. Safe to run at
 * any point of exposeSnapshot, and again.
 */
export async function removeExposure(kube: VolumeKube, plan: ExposurePlan, options: ExposeOptions): Promise<void> {
  await gone(kube, PVCS, plan.namespace, plan.claim, options);
  const userSnapshot = await kube.get(VOLUME_SNAPSHOTS, plan.source.namespace, plan.snapshot);
  const original = await originalContent(kube, plan, userSnapshot);
  const exposedContent = await kube.get(VOLUME_SNAPSHOT_CONTENTS, '', plan.content);
  // the original's handle is either shared with the exposed content (which keeps it) or its own (which then goes)
  if (original) await setPolicy(kube, original, exposedContent ? 'Retain' : 'Delete');
  if (userSnapshot) await gone(kube, VOLUME_SNAPSHOTS, plan.source.namespace, plan.snapshot, options);
  if (original) await gone(kube, VOLUME_SNAPSHOT_CONTENTS, '', original.metadata.name ?? '', options);
  // a snapshot deleted before its status named its content may still have had one made for it: found by its reference
  const late = original ? undefined : await originalContent(kube, plan, undefined);
  if (late) {
    await setPolicy(kube, late, exposedContent ? 'Retain' : 'Delete');
    await gone(kube, VOLUME_SNAPSHOT_CONTENTS, '', late.metadata.name ?? '', options);
  }
  if (exposedContent) await setPolicy(kube, exposedContent, 'Delete');
  await gone(kube, VOLUME_SNAPSHOTS, plan.namespace, plan.snapshot, options);
  if (exposedContent) await gone(kube, VOLUME_SNAPSHOT_CONTENTS, '', plan.content, options);
}
