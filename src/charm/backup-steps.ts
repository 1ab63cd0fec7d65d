// How the charm turns its config and S3 settings into the backup engine's request: the one place the actions
// backup-state and snapshot-profiles share, so both read config the same way.
import type { BackupKind, BackupRequest, VolumeStep } from '../backup/engine.ts';
import type { KubeClient } from '../kube/client.ts';
import type { S3Settings } from '../store/settings.ts';
import type { CharmConfig } from './config.ts';
import { CHARM_VERSION } from './version.ts';
import { backupKeys } from '../store/layout.ts';

/** The volume mover as the backup engine's volume step: one Job per PVC, credentials in a per-run Secret. */
export function volumeStep(kube: KubeClient, s3: S3Settings, config: CharmConfig): VolumeStep {
  return async (backupId, pvcs, progress) => {
    const { backupVolumes, moverS3Settings, volumeKubeFromClient } = await import('../volumes/index.ts');
    const results = await backupVolumes(volumeKubeFromClient(kube), {
      backupId,
      pvcs: pvcs.map(({ namespace, name }) => ({ namespace, name })),
      s3: moverS3Settings(s3),
      image: config['volume-mover-image'],
      concurrency: config['volume-mover-concurrency'],
      onProgress: (p) => void progress(`copied the data of ${p.done}/${p.total} PVC(s)${p.result ? ` (${p.result.namespace}/${p.result.pvc}: ${p.result.files} files)` : ''}`),
    });
    const keys = backupKeys(backupId);
    return results.map((r) => ({ namespace: r.namespace, pvc: r.pvc, key: keys.volume(r.namespace, r.pvc), files: r.files, bytes: r.bytes }));
  };
}

export function backupRequest(
  kind: BackupKind,
  config: CharmConfig,
  model: { name: string },
  extra: Pick<BackupRequest, 'namespaces' | 'profiles' | 'includeVolumes' | 'includeControlPlane' | 'description' | 'encryptionKey' | 'volumes' | 'controlPlane' | 'progress'>,
): BackupRequest {
  return {
    kind,
    profileNamespaceSelector: config['profile-namespace-selector'],
    includeResources: config['include-resources'],
    excludeResources: config['exclude-resources'],
    protectedCrdGroups: config['protected-crd-groups'],
    modelNamespace: model.name,
    toolVersion: CHARM_VERSION,
    source: { model: model.name },
    ...extra,
  };
}
