// upstream repository: github.com/kubernetes-csi/csi-driver-host-path, with github.com/kubernetes-csi/external-snapshotter's sidecar.
// The simulated provisioner as a CSI driver that can snapshot, with its csi-snapshotter sidecar: what
// csi-driver-host-path does on one node, and what the sidecar asks of it.
// Upstream: kubernetes-csi/csi-driver-host-path pkg/hostpath/controllerserver.go — CreateSnapshot: a copy of the volume
//   at that moment (there a tar file under the state dir, here a folder under `<dataDir>/.snapshots/<id>`) with a new
//   UUID as snapshot id, ReadyToUse at once, SizeBytes the volume's size; DeleteSnapshot: the copy goes (a missing one
//   is no error); ListSnapshots by id: the snapshot or nothing. pkg/hostpath/hostpath.go loadFromSnapshot: a volume
//   created from a snapshot starts as its copy.
// kubernetes-csi/external-snapshotter pkg/sidecar-controller/snapshot_controller.go — syncContent: a content of this
//   driver with source.volumeHandle and no status is snapshotted (createSnapshot: status snapshotHandle, creationTime in
//   nanoseconds, readyToUse, restoreSize); one with source.snapshotHandle gets its status from ListSnapshots
//   (checkandUpdateContentStatus; an unknown handle sets status.error); shouldDelete: a content being deleted that is
//   pre-provisioned and unbound, or carries ANN_BEING_DELETED, has its snapshot deleted when its deletionPolicy is
//   Delete, then loses CONTENT_FINALIZER (Retain keeps the snapshot). A bound content deleted without the annotation
//   keeps its finalizer until its snapshot is deleted too.
import { cpSync, existsSync, mkdirSync, rmSync, statSync, readdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { ClusterEvent, InProcessApi } from '../../cluster/contract.ts';
import { warningRecorder } from '../events.ts';
import { sameRef } from '../refs.ts';
import {
  ANN_BEING_DELETED, CONTENT_FINALIZER, specOf, statusOf, VOLUME_SNAPSHOT_CONTENTS,
  type ContentSpec, type ContentStatus,
} from './refs.ts';

/** The driver's snapshots: folders copied from volumes, by snapshot id. */
export interface SnapshotStore {
  readonly driver: string;
  /** the ids of every snapshot the driver holds */
  handles(): string[];
  /** the folder of a snapshot, or undefined when the driver does not know the id */
  folder(handle: string): string | undefined;
}

function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

export function snapshotStore(dataDir: string, driver: string): SnapshotStore & { root: string } {
  const root = join(dataDir, '.snapshots');
  mkdirSync(root, { recursive: true });
  return {
    driver, root,
    handles: () => readdirSync(root),
    folder: (handle) => (/^[0-9a-f-]{36}$/.test(handle) && existsSync(join(root, handle)) ? join(root, handle) : undefined),
  };
}

/**
 * Starts the csi-snapshotter sidecar of the driver whose volumes are `<dataDir>/<volumeHandle>` (the folder its PVs
 * name: ../storage.ts volumeFolder, which the PV controller hands from claim to claim); returns its stop.
 */
export function startSnapshotter(api: InProcessApi, dataDir: string, store: SnapshotStore & { root: string }): () => void {
  const recordWarning = warningRecorder(api);
  let stopped = false;
  let scheduled = false;

  const patchStatus = (content: KubeObject, status: ContentStatus): void => {
    api.updateStatus(VOLUME_SNAPSHOT_CONTENTS, { ...content, status });
  };

  function createSnapshot(content: KubeObject, volumeHandle: string): void {
    const source = join(dataDir, volumeHandle);
    if (!existsSync(source)) {
      recordWarning(content, 'SnapshotCreationFailed', `Failed to create snapshot: failed to take snapshot of the volume ${volumeHandle}: "rpc error: code = NotFound desc = volume id ${volumeHandle} does not exist in the volumes list"`, 'csi-snapshotter');
      patchStatus(content, { error: { time: new Date().toISOString(), message: `volume id ${volumeHandle} does not exist` } });
      return;
    }
    const id = randomUUID();
    // the copy is the snapshot: the volume as it is at this instant, whatever is written to it afterwards
    cpSync(source, join(store.root, id), { recursive: true, verbatimSymlinks: true });
    patchStatus(content, { snapshotHandle: id, creationTime: Date.now() * 1e6, readyToUse: true, restoreSize: treeBytes(join(store.root, id)) });
  }

  function syncContent(content: KubeObject): void {
    const spec = specOf<ContentSpec>(content);
    if (spec.driver !== store.driver) return;
    const status = content.status === undefined ? undefined : statusOf<ContentStatus>(content);
    if (content.metadata.deletionTimestamp) {
      const shouldDelete = (spec.source?.snapshotHandle && !spec.volumeSnapshotRef?.uid) || Boolean(content.metadata.annotations?.[ANN_BEING_DELETED]);
      if (!shouldDelete) return;
      if (spec.deletionPolicy === 'Delete' && status?.snapshotHandle) {
        const folder = store.folder(status.snapshotHandle);
        if (folder) rmSync(folder, { recursive: true, force: true });
      }
      const finalizers = content.metadata.finalizers ?? [];
      if (finalizers.includes(CONTENT_FINALIZER)) {
        api.mergePatch(VOLUME_SNAPSHOT_CONTENTS, content.metadata.name ?? '', undefined, { metadata: { finalizers: finalizers.filter((f) => f !== CONTENT_FINALIZER) } });
      }
      return;
    }
    if (spec.source?.volumeHandle && status === undefined) return createSnapshot(content, spec.source.volumeHandle);
    if (status?.readyToUse) return;
    if (spec.source?.snapshotHandle) {
      const folder = store.folder(spec.source.snapshotHandle);
      if (!folder) {
        if (status?.error) return;
        patchStatus(content, { readyToUse: false, error: { time: new Date().toISOString(), message: `failed to list snapshot for content ${content.metadata.name}: "snapshot ${spec.source.snapshotHandle} not found"` } });
        return;
      }
      patchStatus(content, { snapshotHandle: spec.source.snapshotHandle, creationTime: statSync(folder).mtimeMs * 1e6, readyToUse: true, restoreSize: treeBytes(folder) });
    }
  }

  function syncAll(): void {
    scheduled = false;
    if (stopped) return;
    for (const content of api.list(VOLUME_SNAPSHOT_CONTENTS)) {
      try {
        syncContent(content);
      } catch (error) {
        const code = (error as { status?: number }).status;
        if (code !== 404 && code !== 409) console.error(`csi-snapshotter: ${(error as Error).message}`);
      }
    }
  }

  const unsubscribe = api.subscribe((event: ClusterEvent) => {
    if (stopped || scheduled || !sameRef(event.ref, VOLUME_SNAPSHOT_CONTENTS)) return;
    scheduled = true;
    setImmediate(syncAll);
  });
  scheduled = true;
  setImmediate(syncAll);
  return () => {
    stopped = true;
    unsubscribe();
  };
}
