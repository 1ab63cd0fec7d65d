// upstream repository: github.com/kubernetes-csi/external-snapshotter (v8, the v1 API).
// The snapshot controller (external-snapshotter's common controller, the cluster's `snapshot-controller` Deployment):
// it binds VolumeSnapshots and VolumeSnapshotContents both ways, creates the content of a dynamic snapshot, copies the
// content's status into the snapshot's, and runs their deletion through finalizers.
// Upstream: kubernetes-csi/external-snapshotter pkg/common-controller/snapshot_controller.go —
//   syncContent: exactly one of volumeHandle and snapshotHandle, else a ContentValidationError event and nothing more; a
//     content whose volumeSnapshotRef has no uid is pre-bound and waits for its snapshot; a bound one gets
//     CONTENT_FINALIZER; a bound one whose snapshot is being deleted gets ANN_BEING_DELETED. A content whose snapshot
//     is gone is never deleted by the controller ("to avoid data loss").
//   syncUnreadySnapshot: pre-provisioned (spec.source.volumeSnapshotContentName): the content must exist
//     ("VolumeSnapshotContent is missing") and its volumeSnapshotRef name and namespace name the snapshot
//     (checkandBindSnapshotContent sets its uid and class); dynamic (spec.source.persistentVolumeClaimName): the class
//     (named, else the one default class of the PVC's driver, SetDefaultSnapshotClass), the claim bound to a CSI PV
//     (getVolumeFromVolumeSnapshot, createSnapshotContent: `snapcontent-<uid>`, source.volumeHandle, the class's
//     driver and deletionPolicy); the snapshot's status then follows the content's (updateSnapshotStatus:
//     boundVolumeSnapshotContentName, readyToUse, creationTime, restoreSize).
//   checkandAddSnapshotFinalizers: AS_SOURCE_FINALIZER always, BOUND_FINALIZER when bound to a content whose
//     deletionPolicy is Delete.
//   processSnapshotWithDeletionTimestamp / checkandRemoveSnapshotFinalizersAndCheckandDeleteContent: blocked while a
//     Pending claim is being provisioned from the snapshot (isVolumeBeingCreatedFromSnapshot); otherwise the content
//     that points back gets ANN_BEING_DELETED, a Delete content is deleted, and the finalizers come off (the bound one
//     only once that content is gone).
// Not simulated: volume group snapshots, the PVC's pvc-as-source-protection finalizer, snapshotter secrets, the
// webhook's validation (the CRDs' CEL rules cover the immutability checks), metrics, and retries by timer: a sync that
// could not finish is tried again on the next change of any snapshot, content or claim.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { ClusterEvent, Controller, InProcessApi } from '../../cluster/contract.ts';
import { warningRecorder } from '../events.ts';
import { PVCS, PVS, sameRef } from '../refs.ts';
import {
  ANN_BEING_DELETED, AS_SOURCE_FINALIZER, BOUND_FINALIZER, CONTENT_FINALIZER, DEFAULT_SNAPSHOT_CLASS_ANNOTATION, SNAPSHOT_GROUP,
  specOf, statusOf, VOLUME_SNAPSHOT_CLASSES, VOLUME_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS,
  type ContentSpec, type ContentStatus, type SnapshotSpec, type SnapshotStatus,
} from './refs.ts';

const COMPONENT = 'snapshot-controller';

function isDeleting(o: KubeObject): boolean {
  return Boolean(o.metadata.deletionTimestamp);
}

function withoutFinalizers(o: KubeObject, drop: string[]): string[] | undefined {
  const before = o.metadata.finalizers ?? [];
  const after = before.filter((f) => !drop.includes(f));
  return after.length === before.length ? undefined : after;
}

function nanosToRfc3339(nanos: number | undefined): string | undefined {
  return nanos === undefined ? undefined : new Date(Math.floor(nanos / 1e6)).toISOString();
}

function bytesToQuantity(bytes: number | undefined): string | undefined {
  return bytes === undefined ? undefined : String(bytes);
}

export function snapshotController(): Controller {
  return {
    name: 'snapshot-controller',
    start(api: InProcessApi): () => void {
      const recordWarning = warningRecorder(api);
      let stopped = false;
      let scheduled = false;

      const pointsBack = (content: KubeObject, snapshot: KubeObject): boolean => {
        const ref = specOf<ContentSpec>(content).volumeSnapshotRef ?? {};
        return ref.name === snapshot.metadata.name && ref.namespace === snapshot.metadata.namespace && ref.uid === snapshot.metadata.uid;
      };

      const contentOf = (snapshot: KubeObject): KubeObject | undefined => {
        const spec = specOf<SnapshotSpec>(snapshot);
        const name = spec.source?.volumeSnapshotContentName ?? statusOf<SnapshotStatus>(snapshot).boundVolumeSnapshotContentName ?? `snapcontent-${snapshot.metadata.uid}`;
        return api.get(VOLUME_SNAPSHOT_CONTENTS, name);
      };

      const setSnapshotError = (snapshot: KubeObject, reason: string, message: string): void => {
        const status = statusOf<SnapshotStatus>(snapshot);
        if (status.error?.message === message) return;
        recordWarning(snapshot, reason, message, COMPONENT);
        api.updateStatus(VOLUME_SNAPSHOTS, { ...snapshot, status: { ...status, readyToUse: status.readyToUse ?? false, error: { time: new Date().toISOString(), message } } });
      };

      function syncContent(content: KubeObject): void {
        const spec = specOf<ContentSpec>(content);
        if (Boolean(spec.source?.volumeHandle) === Boolean(spec.source?.snapshotHandle)) {
          recordWarning(content, 'ContentValidationError', 'Exactly one of VolumeHandle and SnapshotHandle should be specified', COMPONENT);
          return;
        }
        if (!spec.volumeSnapshotRef?.uid) return; // pre-bound: the snapshot binds it
        if (!isDeleting(content) && !(content.metadata.finalizers ?? []).includes(CONTENT_FINALIZER)) {
          api.mergePatch(VOLUME_SNAPSHOT_CONTENTS, content.metadata.name ?? '', undefined, { metadata: { finalizers: [...(content.metadata.finalizers ?? []), CONTENT_FINALIZER] } });
          return;
        }
        let snapshot = api.get(VOLUME_SNAPSHOTS, spec.volumeSnapshotRef.name ?? '', spec.volumeSnapshotRef.namespace);
        if (snapshot && snapshot.metadata.uid !== spec.volumeSnapshotRef.uid) snapshot = undefined;
        if (snapshot && isDeleting(snapshot) && !content.metadata.annotations?.[ANN_BEING_DELETED]) {
          api.mergePatch(VOLUME_SNAPSHOT_CONTENTS, content.metadata.name ?? '', undefined, { metadata: { annotations: { [ANN_BEING_DELETED]: 'yes' } } });
        }
      }

      function beingRestoredFrom(snapshot: KubeObject): boolean {
        return api.list(PVCS, { namespace: snapshot.metadata.namespace }).some((pvc) => {
          const source = (pvc.spec as { dataSource?: { apiGroup?: string; kind?: string; name?: string } } | undefined)?.dataSource;
          return source?.name === snapshot.metadata.name && source?.kind === 'VolumeSnapshot' && source.apiGroup === SNAPSHOT_GROUP
            && ((pvc.status as { phase?: string } | undefined)?.phase ?? 'Pending') === 'Pending';
        });
      }

      function processDeletion(snapshot: KubeObject): void {
        const finalizers = snapshot.metadata.finalizers ?? [];
        if (!finalizers.includes(AS_SOURCE_FINALIZER) && !finalizers.includes(BOUND_FINALIZER)) return;
        let content = contentOf(snapshot);
        if (content && !pointsBack(content, snapshot)) content = undefined;
        if (content && beingRestoredFrom(snapshot)) {
          recordWarning(snapshot, 'SnapshotDeletePending', 'Snapshot is being used to restore a PVC', COMPONENT);
          return;
        }
        if (content && !content.metadata.annotations?.[ANN_BEING_DELETED]) {
          content = api.mergePatch(VOLUME_SNAPSHOT_CONTENTS, content.metadata.name ?? '', undefined, { metadata: { annotations: { [ANN_BEING_DELETED]: 'yes' } } });
        }
        const deleteContent = content !== undefined && specOf<ContentSpec>(content).deletionPolicy === 'Delete';
        if (content && deleteContent && !isDeleting(content)) api.delete(VOLUME_SNAPSHOT_CONTENTS, content.metadata.name ?? '');
        const drop = deleteContent ? [AS_SOURCE_FINALIZER] : [AS_SOURCE_FINALIZER, BOUND_FINALIZER];
        const left = withoutFinalizers(snapshot, drop);
        if (left) api.mergePatch(VOLUME_SNAPSHOTS, snapshot.metadata.name ?? '', snapshot.metadata.namespace, { metadata: { finalizers: left } });
      }

      function defaultClassFor(driver: string): KubeObject | string {
        const defaults = api.list(VOLUME_SNAPSHOT_CLASSES).filter((c) => (c as { driver?: string }).driver === driver
          && c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] === 'true');
        if (defaults.length === 0) return 'cannot find default snapshot class';
        if (defaults.length > 1) return `${defaults.length} default snapshot classes were found`;
        return defaults[0]!;
      }

      function createDynamicContent(snapshot: KubeObject): void {
        const spec = specOf<SnapshotSpec>(snapshot);
        const namespace = snapshot.metadata.namespace ?? '';
        const claimName = spec.source?.persistentVolumeClaimName ?? '';
        const claim = api.get(PVCS, claimName, namespace);
        if (!claim) return setSnapshotError(snapshot, 'SnapshotContentCreationFailed', `Failed to create snapshot content with error failed to get input parameters to create snapshot ${snapshot.metadata.name}: "failed to retrieve PVC ${claimName} from the lister: \\"persistentvolumeclaim \\\\\\"${claimName}\\\\\\" not found\\""`);
        const volumeName = (claim.spec as { volumeName?: string } | undefined)?.volumeName;
        if ((claim.status as { phase?: string } | undefined)?.phase !== 'Bound' || !volumeName) {
          return setSnapshotError(snapshot, 'SnapshotContentCreationFailed', `Failed to create snapshot content with error failed to get input parameters to create snapshot ${snapshot.metadata.name}: "the PVC ${claimName} is not yet bound to a PV, will not attempt to take a snapshot"`);
        }
        const volume = api.get(PVS, volumeName);
        const csi = (volume?.spec as { csi?: { driver?: string; volumeHandle?: string } } | undefined)?.csi;
        if (!csi?.driver || !csi.volumeHandle) {
          return setSnapshotError(snapshot, 'SnapshotContentCreationFailed', `Failed to create snapshot content with error cannot find CSI PersistentVolumeSource for volume ${volumeName}`);
        }
        let cls: KubeObject | string | undefined;
        if (spec.volumeSnapshotClassName) {
          cls = api.get(VOLUME_SNAPSHOT_CLASSES, spec.volumeSnapshotClassName) ?? `volumesnapshotclass.snapshot.storage.k8s.io "${spec.volumeSnapshotClassName}" not found`;
        } else {
          cls = defaultClassFor(csi.driver);
        }
        if (typeof cls === 'string') return setSnapshotError(snapshot, 'SnapshotContentCreationFailed', `Failed to create snapshot content with error failed to get input parameters to create snapshot ${snapshot.metadata.name}: "${cls}"`);
        const { driver, deletionPolicy } = cls as unknown as { driver: string; deletionPolicy: 'Delete' | 'Retain' };
        const name = `snapcontent-${snapshot.metadata.uid}`;
        try {
          api.create(VOLUME_SNAPSHOT_CONTENTS, {
            apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshotContent', metadata: { name },
            spec: {
              volumeSnapshotRef: {
                apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshot', name: snapshot.metadata.name, namespace,
                uid: snapshot.metadata.uid, resourceVersion: snapshot.metadata.resourceVersion,
              },
              source: { volumeHandle: csi.volumeHandle },
              volumeSnapshotClassName: cls.metadata.name, deletionPolicy, driver,
            },
          } as KubeObject);
        } catch (error) {
          if ((error as { status?: number }).status !== 409) throw error;
        }
        if (!spec.volumeSnapshotClassName) {
          api.mergePatch(VOLUME_SNAPSHOTS, snapshot.metadata.name ?? '', namespace, { spec: { volumeSnapshotClassName: cls.metadata.name } });
        }
        const fresh = api.get(VOLUME_SNAPSHOTS, snapshot.metadata.name ?? '', namespace);
        if (fresh) api.updateStatus(VOLUME_SNAPSHOTS, { ...fresh, status: { ...statusOf<SnapshotStatus>(fresh), boundVolumeSnapshotContentName: name, readyToUse: false } });
      }

      /** updateSnapshotStatus: the snapshot's status follows its bound content's */
      function followContent(snapshot: KubeObject, content: KubeObject): void {
        const c = statusOf<ContentStatus>(content);
        const before = statusOf<SnapshotStatus>(snapshot);
        const next: SnapshotStatus = {
          boundVolumeSnapshotContentName: content.metadata.name,
          readyToUse: c.readyToUse ?? false,
          ...(c.creationTime !== undefined ? { creationTime: nanosToRfc3339(c.creationTime) } : {}),
          ...(c.restoreSize !== undefined ? { restoreSize: bytesToQuantity(c.restoreSize) } : {}),
          ...(c.error ? { error: c.error } : {}),
        };
        if (JSON.stringify(next) === JSON.stringify(before)) return;
        api.updateStatus(VOLUME_SNAPSHOTS, { ...snapshot, status: next });
      }

      function syncSnapshot(snapshot: KubeObject): void {
        if (isDeleting(snapshot)) return processDeletion(snapshot);
        const spec = specOf<SnapshotSpec>(snapshot);
        if (Boolean(spec.source?.persistentVolumeClaimName) === Boolean(spec.source?.volumeSnapshotContentName)) {
          return setSnapshotError(snapshot, 'SnapshotValidationError', 'Exactly one of PersistentVolumeClaimName and VolumeSnapshotContentName should be specified');
        }
        // checkandAddSnapshotFinalizers
        const content = contentOf(snapshot);
        const finalizers = snapshot.metadata.finalizers ?? [];
        const wanted = [...finalizers];
        if (!wanted.includes(AS_SOURCE_FINALIZER)) wanted.push(AS_SOURCE_FINALIZER);
        const bound = statusOf<SnapshotStatus>(snapshot).boundVolumeSnapshotContentName !== undefined;
        if (content && bound && pointsBack(content, snapshot) && specOf<ContentSpec>(content).deletionPolicy === 'Delete' && !wanted.includes(BOUND_FINALIZER)) wanted.push(BOUND_FINALIZER);
        if (wanted.length !== finalizers.length) {
          api.mergePatch(VOLUME_SNAPSHOTS, snapshot.metadata.name ?? '', snapshot.metadata.namespace, { metadata: { finalizers: wanted } });
          return;
        }
        if (spec.source?.volumeSnapshotContentName) {
          if (!content) return setSnapshotError(snapshot, 'SnapshotContentMissing', 'VolumeSnapshotContent is missing');
          const ref = specOf<ContentSpec>(content).volumeSnapshotRef ?? {};
          if (ref.name !== snapshot.metadata.name || ref.namespace !== snapshot.metadata.namespace || (ref.uid && ref.uid !== snapshot.metadata.uid)) {
            return setSnapshotError(snapshot, 'SnapshotBindFailed', `Snapshot failed to bind VolumeSnapshotContent, Could not bind snapshot ${snapshot.metadata.name} and content ${content.metadata.name}, the VolumeSnapshotRef does not match`);
          }
          let bindingContent = content;
          if (!ref.uid) {
            bindingContent = api.mergePatch(VOLUME_SNAPSHOT_CONTENTS, content.metadata.name ?? '', undefined, {
              spec: { volumeSnapshotRef: { uid: snapshot.metadata.uid }, ...(spec.volumeSnapshotClassName ? { volumeSnapshotClassName: spec.volumeSnapshotClassName } : {}) },
            });
          }
          return followContent(snapshot, bindingContent);
        }
        if (!content) return createDynamicContent(snapshot);
        if (pointsBack(content, snapshot)) followContent(snapshot, content);
      }

      function syncAll(): void {
        scheduled = false;
        if (stopped) return;
        for (const content of api.list(VOLUME_SNAPSHOT_CONTENTS)) guarded(() => syncContent(content));
        for (const snapshot of api.list(VOLUME_SNAPSHOTS)) guarded(() => syncSnapshot(snapshot));
        // a content that lost its bound finalizer's reason: a snapshot being deleted whose Delete content is gone
        for (const snapshot of api.list(VOLUME_SNAPSHOTS)) {
          if (!isDeleting(snapshot) || !(snapshot.metadata.finalizers ?? []).includes(BOUND_FINALIZER)) continue;
          const content = contentOf(snapshot);
          if (content && pointsBack(content, snapshot)) continue;
          guarded(() => {
            const left = withoutFinalizers(snapshot, [BOUND_FINALIZER, AS_SOURCE_FINALIZER]);
            if (left) api.mergePatch(VOLUME_SNAPSHOTS, snapshot.metadata.name ?? '', snapshot.metadata.namespace, { metadata: { finalizers: left } });
          });
        }
      }

      function guarded(work: () => void): void {
        try {
          work();
        } catch (error) {
          const status = (error as { status?: number }).status;
          // a conflict or a vanished object: the next event syncs again, as the workqueue's requeue would
          if (status !== 404 && status !== 409) console.error(`snapshot controller: ${(error as Error).message}`);
        }
      }

      const onEvent = (event: ClusterEvent): void => {
        if (stopped || scheduled) return;
        if (!sameRef(event.ref, VOLUME_SNAPSHOTS) && !sameRef(event.ref, VOLUME_SNAPSHOT_CONTENTS) && !sameRef(event.ref, PVCS) && !sameRef(event.ref, VOLUME_SNAPSHOT_CLASSES)) return;
        scheduled = true;
        setImmediate(syncAll);
      };
      const unsubscribe = api.subscribe(onEvent);
      scheduled = true;
      setImmediate(syncAll);
      return () => {
        stopped = true;
        unsubscribe();
      };
    },
  };
}
