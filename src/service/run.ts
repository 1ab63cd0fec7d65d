// One scheduled run: the lease (no backup being written by anyone, as its signed run record proves), the backup by the
// backup engine as backup-state runs it (volumes and control plane, with the same step builders), then the retention of backup-retention by the prune engine, with the
// authenticated rules prune-backups applies.
import { LeaseHeldError } from '../backup/lease.ts';
import { describe } from '../errors/index.ts';
import { KubeClient } from '../kube/client.ts';
import { openBackupStore } from '../store/open.ts';
import type { BackupStore } from '../store/backup-store.ts';
import { latestWholeBackup } from '../catalog/latest.ts';
import type { BackupHandoff, ServiceSettings } from '../workload/settings.ts';
import { neutralWording } from '../errors/remedy.ts';

export type RunResult =
  | {
    result: 'succeeded'; backupId: string; objects: number; bytes: number; volumeBytes: number; volumeBytesUploaded: number;
    /** per profile namespace, the bytes of its volumes in this backup */
    namespaceVolumeBytes: Record<string, number>; durationSeconds: number; prune: PruneResult;
  }
  | { result: 'failed'; sentence: string; moverFailed: boolean; durationSeconds: number }
  | { result: 'skipped'; sentence: string };

export type PruneResult = { ran: true; deleted: number } | { ran: false; sentence: string };

export interface RunHooks {
  /** told the new backup's id once its run record is in its folder */
  onBegun(backupId: string): Promise<void> | void;
  /**
   * backups this service's earlier, killed process left unfinished: their holder is gone, so their run records hold
   * nothing; each is removed (and taken off the set) before the next backup begins
   */
  abandoned: Set<string>;
  log(line: string): void;
}

/** The newest backup a restore would take as `latest` (with a key: authenticated), or undefined. */
export async function newestBackup(store: BackupStore, encryptionKey: string | undefined): Promise<Date | undefined> {
  const newest = await latestWholeBackup(store, { encryptionKey });
  return newest ? new Date(newest.listing.created) : undefined;
}

/** A scheduled backup, or with `handoff` the one backup-state wait=false asked for (its id, namespaces and volumes). */
export async function scheduledRun(settings: ServiceSettings, hooks: RunHooks, handoff?: BackupHandoff): Promise<RunResult> {
  if (!settings.s3) return { result: 'skipped', sentence: 'S3 is not ready: s3-integrator has given no usable credentials' };
  const key = settings.encryptionKey;
  const store = openBackupStore(settings.s3);
  for (const id of [...hooks.abandoned]) {
    try {
      // the takeover: its folder goes, run record and all, so no one else waits for its lease to run out either
      await store.deleteBackup(id);
      hooks.abandoned.delete(id);
      hooks.log(`removed backup ${id}, which this service's killed process left unfinished`);
    } catch (error) {
      hooks.log(`backup ${id}, which this service's killed process left unfinished, could not be removed yet: ${describe(error)}`);
    }
  }
  const started = Date.now();
  const kube = await KubeClient.load({ ...(settings.kubeconfig ? { kubeconfig: settings.kubeconfig } : {}) });
  const [{ runBackup }, { volumeBackupStep }, { controlPlaneBackupStep }] = await Promise.all([
    import('../backup/engine.ts'), import('../volumes/steps.ts'), import('../controlplane/steps.ts'),
  ]);
  // the control plane as backup-state copies it by default (include-control-plane=true), from the relations the charm read
  const controlPlane = settings.controlPlane && (handoff ? handoff.includeControlPlane : true) ? settings.controlPlane : undefined;
  let outcome;
  try {
    const s3 = settings.s3;
    outcome = await runBackup(kube, store, {
      kind: 'backup-state',
      description: handoff ? handoff.description : 'scheduled (backup-schedule)',
      includeVolumes: handoff ? handoff.includeVolumes : true,
      ...(handoff ? { backupId: handoff.backupId, namespaces: handoff.namespaces } : {}),
      includeControlPlane: controlPlane !== undefined,
      profileNamespaceSelector: settings.backup.profileNamespaceSelector,
      includeResources: settings.backup.includeResources,
      excludeResources: settings.backup.excludeResources,
      protectedCrdGroups: settings.backup.protectedCrdGroups,
      modelNamespace: settings.modelNamespace,
      toolVersion: settings.backup.toolVersion,
      source: { model: settings.modelNamespace },
      ...(key ? { encryptionKey: key } : {}),
      ...(settings.runLeaseMs ? { runLeaseMs: settings.runLeaseMs } : {}),
      volumes: volumeBackupStep(kube, s3, {
        image: settings.movers.image,
        concurrency: settings.movers.concurrency,
        startTimeoutSeconds: settings.movers.startTimeoutSeconds,
        resources: settings.movers.resources,
        engine: settings.movers.engine,
        gateway: { image: settings.movers.gatewayImage, imageSetting: 'control-plane-rclone-image' },
        jobNamespace: settings.modelNamespace,
        snapshotClass: settings.movers.snapshotClass,
      }, { encryptionKey: key }),
      ...(controlPlane ? { controlPlane: controlPlaneBackupStep(kube, s3, controlPlane.images, controlPlane, settings.modelNamespace, { encryptionKey: key }) } : {}),
      wording: neutralWording,
      onBegun: (id) => hooks.onBegun(id),
      // one backup at a time with the actions: another's live run record makes this slot a skipped one
      lease: { holder: `${settings.unit} service`, abandoned: hooks.abandoned },
      progress: (message) => hooks.log(message),
    });
  } catch (error) {
    if (LeaseHeldError.isInstance(error)) return { result: 'skipped', sentence: error.message };
    const { VolumeMoveError } = await import('../volumes/mover.ts');
    return { result: 'failed', sentence: describe(error), moverFailed: error instanceof VolumeMoveError, durationSeconds: (Date.now() - started) / 1000 };
  }
  // what backup-state lists under control-plane.not-covered, for `pebble logs`
  for (const sentence of outcome.controlPlane.notCovered) hooks.log(`${outcome.backupId}: ${sentence}`);
  return {
    result: 'succeeded',
    backupId: outcome.backupId,
    objects: outcome.objects,
    bytes: outcome.bytes,
    volumeBytes: outcome.volumes.bytes,
    volumeBytesUploaded: outcome.volumes.uploaded,
    namespaceVolumeBytes: outcome.manifest.volumes.reduce<Record<string, number>>((sum, v) => ({ ...sum, [v.namespace]: (sum[v.namespace] ?? 0) + v.bytes }), {}),
    durationSeconds: outcome.durationSeconds,
    prune: await retention(settings, store, kube, hooks),
  };
}

/** backup-retention, as prune-backups applies it (without dry-run or any deletion of unauthenticated folders). */
async function retention(settings: ServiceSettings, store: BackupStore, kube: KubeClient, hooks: RunHooks): Promise<PruneResult> {
  if (settings.retention === 0) return { ran: true, deleted: 0 };
  const [{ pruneBackups }, { moverPortOf }, { resticRepositoriesOf }, { resticEngine }] = await Promise.all([
    import('../prune/engine.ts'), import('../prune/movers.ts'), import('../volumes/restic/prune-repositories.ts'), import('../volumes/engines.ts'),
  ]);
  const s3 = settings.s3!;
  const movers = { image: settings.movers.image, concurrency: settings.movers.concurrency, startTimeoutSeconds: settings.movers.startTimeoutSeconds, resources: settings.movers.resources, engine: settings.movers.engine };
  try {
    const outcome = await pruneBackups(store, {
      retention: settings.retention,
      dryRun: false,
      encryptionKey: settings.encryptionKey,
      wording: neutralWording,
      movers: moverPortOf(kube),
      restic: resticRepositoriesOf(kube, s3, settings.encryptionKey, {
        image: resticEngine.imageFor(movers), startTimeoutSeconds: movers.startTimeoutSeconds, resources: movers.resources, fallbackNamespace: settings.modelNamespace,
      }),
      progress: (message) => hooks.log(message),
    });
    return { ran: true, deleted: outcome.deleted.length };
  } catch (error) {
    return { ran: false, sentence: describe(error) };
  }
}
