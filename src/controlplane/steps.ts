// The control-plane engine as the backup and restore engines' `controlPlane` steps, built the same way by every edge
// that runs them: the charm's actions (from the relations it reads) and the workload container's scheduled service
// (from the settings file the charm pushed). The backup's full entries go into the manifest
// (extras.controlPlane.entries): the restore takes them from the manifest its preflight checked, to know what to load
// and which checksums to expect.
import type { ControlPlaneStep, ProgressSink, RestoreControlPlaneStep } from '../steps.ts';
import type { KubeClient } from '../kube/client.ts';
import type { S3Settings } from '../store/settings.ts';
import { notCoveredSentences, type ControlPlaneRelations } from './relations.ts';
import type { ControlPlaneTargets } from './engine.ts';
import type { CopyImages } from './jobs.ts';
import type { VolumeKube } from '../volumes/kube-port.ts';
import type { ReuseTrust } from '../volumes/reuse.ts';

/** What an edge knows of the control plane before a run: the relations' answers, read by the charm's hooks. */
export interface ControlPlaneView {
  /** what the backup can copy now */
  targets: ControlPlaneTargets;
  /** which endpoints have a relation at all */
  related: ControlPlaneRelations;
  /** one sentence per related endpoint that cannot be used yet, e.g. "control plane not covered: kfp-db …" */
  unusable: string[];
}

/** What the copy Jobs run: the images of the config options control-plane-*-image, and the volume movers' restic. */
export type ControlPlaneImages = Required<CopyImages>;

/**
 * What the copy Jobs of both directions are given: the backup, where they run and what they reach, their images, and
 * the encryption key, with which the copies go into (and come out of) the control-plane restic repository.
 */
function jobSettings(backupId: string, namespace: string, targets: ControlPlaneTargets, s3: S3Settings, images: ControlPlaneImages, progress: ProgressSink, encryptionKey: string | Buffer | undefined) {
  return {
    backupId,
    namespace,
    targets,
    s3,
    images,
    ...(encryptionKey && encryptionKey.length > 0 ? { encryptionKey } : {}),
    onProgress: (message: string) => void progress(message),
  };
}

/** The relations' targets plus ML Metadata's storage when it is found, else the sentence saying why not. */
async function withMlmd(kube: VolumeKube, view: ControlPlaneView, namespace: string): Promise<{ targets: ControlPlaneTargets; notCovered: string[] }> {
  const { findMlmdStorage, mlmdNotCoveredSentence } = await import('./mlmd.ts');
  const mlmd = await findMlmdStorage(kube, namespace);
  return mlmd.found ? { targets: { ...view.targets, mlmd: mlmd.target }, notCovered: [] } : { targets: view.targets, notCovered: [mlmdNotCoveredSentence(mlmd.reason)] };
}

export function controlPlaneBackupStep(kube: KubeClient, s3: S3Settings, images: ControlPlaneImages, view: ControlPlaneView, namespace: string, trust: ReuseTrust = {}): ControlPlaneStep {
  return async (backupId, progress) => {
    const [{ backupControlPlane }, { volumeKubeFromClient }] = await Promise.all([import('./engine.ts'), import('../volumes/index.ts')]);
    const volumeKube = volumeKubeFromClient(kube);
    const mlmd = await withMlmd(volumeKube, view, namespace);
    // Each MinIO bucket's mirror copies the objects an earlier backup already holds inside the backup bucket.
    const [{ reusableMinioCopies }, { openBackupStore }] = await Promise.all([import('../volumes/reuse.ts'), import('../store/open.ts')]);
    const minioCopyFrom = await reusableMinioCopies(openBackupStore(s3), backupId, mlmd.targets['object-storage']?.buckets ?? [], trust);
    const result = await backupControlPlane(volumeKube, { ...jobSettings(backupId, namespace, mlmd.targets, s3, images, progress, trust.encryptionKey), minioCopyFrom });
    return {
      copied: result.entries.map((entry) =>
        entry.part === 'minio'
          ? { name: `minio/${entry.bucket}`, key: entry.keyPrefix, bytes: entry.bytes, sha256: entry.listingSha256 }
          : { name: entry.part, key: entry.key, bytes: entry.bytes, sha256: entry.sha256 }),
      // The parts not related, then those related but not usable yet: the engine knows only what it was given, and
      // "relate kfp-db" would misdescribe a relation that exists but cannot be used.
      notCovered: [...notCoveredSentences(view.related), ...view.unusable, ...mlmd.notCovered, ...result.empty],
      empty: result.empty,
      entries: result.entries,
    };
  };
}

export function controlPlaneRestoreStep(kube: KubeClient, s3: S3Settings, images: ControlPlaneImages, view: ControlPlaneView, namespace: string, encryptionKey?: string | Buffer): RestoreControlPlaneStep {
  return async (backupId, progress, manifest) => {
    const [{ restoreControlPlane }, { volumeKubeFromClient }] = await Promise.all([import('./engine.ts'), import('../volumes/index.ts')]);
    // The preflight's manifest, checked (and with a key authenticated) before any write: not a second read of the bucket.
    const entries = manifest?.extras.controlPlane?.entries ?? [];
    if (entries.length === 0) return { restored: 0, notes: [`backup ${backupId} holds no control-plane data`] };
    const volumeKube = volumeKubeFromClient(kube);
    const mlmd = await withMlmd(volumeKube, view, namespace);
    const result = await restoreControlPlane(volumeKube, { ...jobSettings(backupId, namespace, mlmd.targets, s3, images, progress, encryptionKey), include: true, entries });
    return { restored: result.restored.length, notes: [...view.unusable, ...result.skipped] };
  };
}
