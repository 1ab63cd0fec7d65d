// Backup from a CSI snapshot where the cluster allows it (./expose.ts): the mover's orchestration (../mover.ts) asks
// here, per PVC, whether a VolumeSnapshotClass takes it (./class.ts) and, if so, for the claim to mount instead of the
// user's; before the first exposure of a run, whatever a dead run left and proves it made (./names.ts) is removed.
import type { KubeObject } from '../../kube/types.ts';
import { JOBS, PVCS, SECRETS, type VolumeKube } from '../kube-port.ts';
import { LABEL_BACKUP_ID, moverSelector, placedMoverSecretName } from '../labels.ts';
import { snapshotClassFor } from './class.ts';
import { exposeSnapshot, removeExposure, type ExposeOptions, type Exposed } from './expose.ts';
import { VOLUME_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS } from './kinds.ts';
import { exposurePlan, provenPlan, snapshotSelector, type ExposurePlan } from './names.ts';

export { snapshotClassFor } from './class.ts';
export { exposurePlan, provenPlan, snapshotSelector, type ExposurePlan } from './names.ts';
export { VOLUME_SNAPSHOTS, VOLUME_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOT_CLASSES } from './kinds.ts';

/** `volume-snapshot-class` and where exposed snapshots go: the run's own namespace (never a profile's). */
export interface SnapshotSettings {
  /** the model's namespace (the charm's) or --job-namespace (the CLI's) */
  namespace: string;
  /** `volume-snapshot-class`, `--volume-snapshot-class`: '' or unset, each driver's default class */
  className?: string | undefined;
  /** how long a snapshot may take to be ready, or an object to go (default 5 minutes) */
  timeoutMs?: number | undefined;
}

/** How a PVC's data was read: from a snapshot (point in time, and when) or from the live volume (and why). */
export interface CopyWay {
  from: 'snapshot' | 'live';
  pointInTime: boolean;
  /** snapshot: when the provider took it */
  takenAt?: string;
  volumeSnapshotClass?: string;
  /** live: why no snapshot was taken */
  reason?: string;
}

const DEFAULT_TIMEOUT_MS = 5 * 60_000;

function mountedClaims(job: KubeObject): string[] {
  const volumes = ((job.spec as { template?: { spec?: { volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> } } } | undefined)?.template?.spec?.volumes ?? []);
  return volumes.flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));
}

/** One run's snapshots: its settings, its name key, and the sweep of leftovers done once before the first exposure. */
export class SnapshotRun {
  private swept: Promise<number> | undefined;
  /**
   * `ended`: the caller's signal, aborted when the process itself is going (a dead run cleans nothing up; the next run's
   * sweep does). A run stopped by its own first failure is still alive, and removes what it exposed.
   */
  constructor(private readonly kube: VolumeKube, private readonly settings: SnapshotSettings, private readonly key: Buffer,
    private readonly backupId: string, private readonly sourceNamespaces: readonly string[], private readonly ended?: AbortSignal | undefined) {}

  private options(signal: AbortSignal | undefined): ExposeOptions {
    return { timeoutMs: this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal };
  }

  /**
   * the claim to mount for `pvc` and how it was read, or the live way and why. `moverJob`: the name its mover Job will
   * have in the model's namespace, whose leftover from a dead run of the same backup goes before its claim is remade.
   */
  async expose(pvc: KubeObject, moverJob: string, signal: AbortSignal | undefined): Promise<{ exposed: Exposed; plan: ExposurePlan; namespace: string } | { live: CopyWay }> {
    const choice = await snapshotClassFor(this.kube, pvc, this.settings.className || undefined);
    if ('live' in choice) return { live: { from: 'live', pointInTime: false, reason: choice.live } };
    this.swept ??= sweepLeftovers(this.kube, this.key, this.settings.namespace, this.sourceNamespaces, this.options(undefined), this.backupId);
    await this.swept;
    await this.kube.delete(JOBS, this.settings.namespace, moverJob);
    await this.kube.waitFor(JOBS, this.settings.namespace, moverJob, (o) => o === undefined, this.options(signal));
    const plan = exposurePlan(this.key, this.backupId, pvc.metadata.namespace ?? '', pvc.metadata.name ?? '', this.settings.namespace);
    try {
      return { exposed: await exposeSnapshot(this.kube, plan, choice, pvc, this.options(signal)), plan, namespace: plan.namespace };
    } catch (error) {
      // nothing half-made stays behind a failed or stopped exposure; a run that is going leaves it to the next one's sweep
      if (!this.ended?.aborted) await removeExposure(this.kube, plan, this.options(undefined)).catch(() => undefined);
      throw error;
    }
  }

  /** removes what expose made, once the mover is done with it (unless the run itself is going) */
  async remove(plan: ExposurePlan): Promise<void> {
    if (this.ended?.aborted) return;
    await removeExposure(this.kube, plan, this.options(undefined));
  }
}

/**
 * Removes every exposure an earlier run left in the model's namespace and the profile namespaces of this run (and the
 * contents they made), each only once it proves it was made by a run holding this name key, and the credentials
 * Secrets an earlier run's movers had there (named by the key, that run's backup id and the profile namespace).
 */
export async function sweepLeftovers(
  kube: VolumeKube, key: Buffer, namespace: string, sourceNamespaces: readonly string[], options: ExposeOptions, currentBackupId?: string,
): Promise<number> {
  const plans = new Map<string, ExposurePlan>();
  const consider = (objects: KubeObject[]) => {
    for (const object of objects) {
      const plan = provenPlan(object, key, namespace);
      if (plan) plans.set(`${plan.backupId}/${plan.source.namespace}/${plan.source.pvc}`, plan);
    }
  };
  consider(await kube.list(VOLUME_SNAPSHOTS, namespace, snapshotSelector()));
  consider(await kube.list(PVCS, namespace, snapshotSelector()));
  consider(await kube.list(VOLUME_SNAPSHOT_CONTENTS, '', snapshotSelector()));
  for (const source of new Set(sourceNamespaces)) consider(await kube.list(VOLUME_SNAPSHOTS, source, snapshotSelector()));
  // a dead run's mover still mounting an exposed claim goes first: a mover Job of the model's namespace (where no
  // profile user creates Jobs) that mounts a claim a plan proves ours
  const claims = new Set([...plans.values()].map((p) => p.claim));
  for (const job of await kube.list(JOBS, namespace, moverSelector())) {
    if (mountedClaims(job).some((claim) => claims.has(claim))) await kube.delete(JOBS, namespace, job.metadata.name ?? '');
  }
  for (const plan of plans.values()) await removeExposure(kube, plan, options);
  const namespaces = new Set([...sourceNamespaces, ...[...plans.values()].map((p) => p.source.namespace)]);
  for (const secret of await kube.list(SECRETS, namespace, moverSelector())) {
    const id = secret.metadata.labels?.[LABEL_BACKUP_ID];
    if (!id || id === currentBackupId) continue;
    const ours = [...namespaces].some((source) => secret.metadata.name === placedMoverSecretName('backup', id, key, source));
    if (ours) await kube.delete(SECRETS, namespace, secret.metadata.name ?? '');
  }
  return plans.size;
}
