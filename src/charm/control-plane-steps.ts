// The control-plane engine as the backup and restore engines' `controlPlane` steps. The backup's full entries go
// into the manifest (extras.controlPlane.entries): the restore takes them from the manifest its preflight checked, to know what to load and which
// checksums to expect.
import { z } from 'zod';
import type { ControlPlaneStep } from '../backup/engine.ts';
import type { RestoreControlPlaneStep } from '../restore/engine.ts';
import type { KubeClient } from '../kube/client.ts';
import type { S3Settings } from '../store/settings.ts';
import type { CharmConfig } from './config.ts';
import type { ControlPlaneView } from './control-plane.ts';
import { notCoveredSentences } from '../controlplane/relations.ts';

const Entry = z.union([
  z.object({ part: z.enum(['kfp-db', 'katib-db']), database: z.string(), key: z.string(), bytes: z.number(), sha256: z.string(), tool: z.string(), rclone: z.string() }),
  z.object({ part: z.literal('minio'), bucket: z.string(), keyPrefix: z.string(), objects: z.number(), bytes: z.number(), listingSha256: z.string(), tool: z.string() }),
]);
const Recorded = z.object({ entries: z.array(Entry).default([]) });

export function controlPlaneBackupStep(kube: KubeClient, s3: S3Settings, config: CharmConfig, view: ControlPlaneView, namespace: string): ControlPlaneStep {
  return async (backupId, progress) => {
    const [{ backupControlPlane }, { volumeKubeFromClient }] = await Promise.all([import('../controlplane/engine.ts'), import('../volumes/index.ts')]);
    const result = await backupControlPlane(volumeKubeFromClient(kube), {
      backupId,
      namespace,
      targets: view.targets,
      s3,
      images: { mysql: config['control-plane-mysql-image'], rclone: config['control-plane-rclone-image'] },
      onProgress: (message) => void progress(message),
    });
    return {
      copied: result.entries.map((entry) =>
        entry.part === 'minio'
          ? { name: `minio/${entry.bucket}`, key: entry.keyPrefix, bytes: entry.bytes, sha256: entry.listingSha256 }
          : { name: entry.part, key: entry.key, bytes: entry.bytes, sha256: entry.sha256 }),
      // The parts not related, then those related but not usable yet: the engine knows only what it was given, and
      // "relate kfp-db" would misdescribe a relation that exists but cannot be used.
      notCovered: [...notCoveredSentences(view.related), ...view.unusable],
      entries: result.entries,
    };
  };
}

export function controlPlaneRestoreStep(kube: KubeClient, s3: S3Settings, config: CharmConfig, view: ControlPlaneView, namespace: string): RestoreControlPlaneStep {
  return async (backupId, progress, manifest) => {
    const [{ restoreControlPlane }, { volumeKubeFromClient }] = await Promise.all([import('../controlplane/engine.ts'), import('../volumes/index.ts')]);
    // The preflight's manifest, checked (and with a key authenticated) before any write: not a second read of the bucket.
    const recorded = manifest ? Recorded.safeParse(manifest.extras['controlPlane'] ?? {}) : undefined;
    const entries = recorded?.success ? recorded.data.entries : [];
    if (entries.length === 0) return { restored: 0, notes: [`backup ${backupId} holds no control-plane data`] };
    const result = await restoreControlPlane(volumeKubeFromClient(kube), {
      include: true,
      entries,
      backupId,
      namespace,
      targets: view.targets,
      s3,
      images: { mysql: config['control-plane-mysql-image'], rclone: config['control-plane-rclone-image'] },
      onProgress: (message) => void progress(message),
    });
    return { restored: result.restored.length, notes: [...view.unusable, ...result.skipped] };
  };
}
