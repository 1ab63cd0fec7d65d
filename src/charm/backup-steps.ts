// How the charm turns its config and S3 settings into the backup engine's request: the one place the actions
// backup-state and snapshot-profiles share, so both read config the same way.
import { charmWording } from './remedy-wording.ts';
import type { BackupKind, BackupRequest } from '../backup/engine.ts';
import type { MoverConfig } from '../volumes/steps.ts';
import type { ControlPlaneImages } from '../controlplane/steps.ts';
import { resticEngine } from '../volumes/engines.ts';
import type { CharmConfig } from './config.ts';
import { CHARM_VERSION } from './version.ts';

/** How the charm's config shapes the mover Jobs, for the volume steps of src/volumes/steps.ts. */
export function moverConfig(config: CharmConfig): MoverConfig {
  return {
    image: config['volume-mover-image'],
    concurrency: config['volume-mover-concurrency'],
    startTimeoutSeconds: config['volume-mover-start-timeout'],
    resources: config['volume-mover-resources'],
    engine: config['volume-mover-engine'],
    snapshotClass: config['volume-snapshot-class'],
    restoreVolumesBy: config['volume-restore-by'],
    // the movers' gateway (restic repositories or plain files) runs rclone in the model's namespace, as the control-plane copies do
    gateway: {
      image: config['control-plane-rclone-image'], imageSetting: 'control-plane-rclone-image',
      restoreImage: config['restore-gateway-image'] || undefined, restoreImageSetting: 'restore-gateway-image',
    },
  };
}

/** The images of the control-plane copy Jobs: the config's, and the volume movers' restic for the encrypted copies. */
export function controlPlaneImages(config: CharmConfig): ControlPlaneImages {
  return {
    mysql: config['control-plane-mysql-image'], rclone: config['control-plane-rclone-image'], sqlite: config['control-plane-sqlite-image'],
    restic: resticEngine.imageFor(moverConfig(config)),
  };
}

/**
 * One backup at a time per location, with the scheduled service in the workload container (src/backup/lease.ts). An
 * action's record names the unit's actions as its holder: Juju runs one action of a unit at a time, so one this unit's
 * action finds live was left by a killed action, and a rerun goes on at once.
 */
export function actionLease(unit: string): NonNullable<BackupRequest['lease']> {
  return { holder: `${unit} action`, goneHolder: `${unit} action` };
}

export function backupRequest(
  kind: BackupKind,
  config: CharmConfig,
  model: { name: string },
  extra: Pick<BackupRequest, 'namespaces' | 'profiles' | 'includeVolumes' | 'includeControlPlane' | 'description' | 'encryptionKey' | 'volumes' | 'controlPlane' | 'progress' | 'lease'>,
): BackupRequest {
  return {
    kind,
    wording: charmWording,
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
