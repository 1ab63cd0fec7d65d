// Runs one mover Job per PVC, at most `concurrency` at once, and turns each into a VolumeResult or a named failure.
// The engine (./engine.ts: plain files or restic repositories) builds each Secret and Job and reads its result; this
// module checks the run, schedules the movers, places each next to its PVC's user, stops them all on the first failure,
// and deletes the run's credentials Secrets in every case.
import pLimit from 'p-limit';
import type { KubeObject } from '../kube/types.ts';
import { KfuError } from '../errors/index.ts';
import { backupKeys } from '../store/layout.ts';
import { createOrReplace } from './adopt.ts';
import type { EngineName, EngineRun, GatewayImages } from './engine.ts';
import { engineNamed } from './engines.ts';
import { JOBS, PVCS, SECRETS, type VolumeKube } from './kube-port.ts';
import { LABEL_OPERATION, moverJobName, moverNameKey, moverSecretName, moverSelector, placedMoverSecretName, type MoveOperation } from './labels.ts';
import type { SnapshotRun, SnapshotSettings } from './snapshot/index.ts';
import type { PvcRef, ResticMoveOptions, VolumeFailure, VolumeProgress, VolumeResult } from './move-types.ts';
import { placementFor } from './placement.ts';
import { finishedHandover, handOver, handsOver, prepareHandover, recordedVolume, recordFilled, settleLeftovers, type HandoverContext } from './rebind.ts';
import { DEFAULT_MOVER_RESOURCES, parseMoverResources, type ResourceList } from './resources.ts';
import { describeInline as describeError } from '../errors/index.ts';
import {
  DEFAULT_JOB_DEADLINE_SECONDS, DEFAULT_JOB_TTL_SECONDS, DEFAULT_MOVER_CONCURRENCY, DEFAULT_PROGRESS_INTERVAL_MS, DEFAULT_START_TIMEOUT_SECONDS,
  remotePath, type MoverS3Settings,
} from './settings.ts';

export type { PvcRef, VolumeResult, VolumeFailure, VolumeProgress } from './move-types.ts';

export interface MoveVolumesOptions {
  backupId: string;
  pvcs: PvcRef[];
  s3: MoverS3Settings;
  /** the image of the movers (the engine's imageFor); unset, the engine's pinned image */
  image?: string;
  /** `volume-mover-concurrency`: Jobs in flight at once */
  concurrency?: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  /** `volume-mover-start-timeout`: seconds a mover's Pod may take to start running */
  startTimeoutSeconds?: number;
  /** `volume-mover-resources`, e.g. `cpu=1,memory=1Gi` (requests = limits); '' sets none */
  resources?: string;
  onProgress?: (progress: VolumeProgress) => void;
  /** backup: `namespace/pvc` → an earlier complete backup holding that PVC (src/volumes/reuse.ts) */
  copyFrom?: ReadonlyMap<string, string>;
  /**
   * how the PVCs are stored (./engine.ts): 'rclone' or unset, plain files (./rclone-engine.ts); 'restic', each
   * namespace's restic repository (./restic/engine.ts), with `restic` giving its passwords, parents or snapshots
   */
  engine?: EngineName;
  restic?: ResticMoveOptions;
  /**
   * the run's gateway, started in `namespace` (the model's, never a profile's) with an rclone `image`: all the movers
   * reach, whichever the engine (restic/gateway.ts for restic repositories, files-gateway.ts for plain files); their
   * Secrets then hold no bucket credential. `restic.gateway` says the same.
   */
  gateway?: GatewayImages & { namespace: string };
  /** how often a running mover's stats are read and, when they changed, reported (default 30 s) */
  progressIntervalMs?: number;
  /**
   * restore: the model's namespace, where each PVC the restore reserved for it (./fill-mark.ts) is filled in a claim
   * of its own and then handed over (./rebind.ts): no mover, Secret or Pod of the restore enters the PVC's namespace.
   * Unset, or for a PVC not reserved, the mover runs in the PVC's namespace (the fallback).
   */
  handover?: { namespace: string };
  signal?: AbortSignal;
  /**
   * backup: read each PVC whose driver has a VolumeSnapshotClass from a snapshot exposed in `snapshots.namespace` (the
   * model's), the mover running there (./snapshot); the others are copied live. Unset: every PVC is copied live.
   */
  snapshots?: SnapshotSettings;
}

/** One or more PVCs could not be moved; `message` names each with its reason. */
export class VolumeMoveError extends KfuError {
  readonly failures: VolumeFailure[];
  readonly results: VolumeResult[];
  /** movers stopped because another failed */
  readonly stopped: number;
  constructor(operation: MoveOperation, failures: VolumeFailure[], results: VolumeResult[], stopped = 0) {
    const list = failures.map((f) => `${f.namespace}/${f.pvc} (${f.reason})`).join('; ');
    const others = stopped > 0 ? `; ${stopped} other mover${stopped === 1 ? ' was' : 's were'} stopped` : '';
    super(`The volume ${operation} failed for ${failures.length === 1 ? 'PVC' : 'PVCs'} ${list}${others}.`, { kind: 'failed' });
    this.stopped = stopped;
    this.failures = failures;
    this.results = results;
  }
}

/** Copies each PVC's files into `backups/<id>/volumes/<ns>/<pvc>/`; the PVCs are mounted read-only. */
export function backupVolumes(kube: VolumeKube, options: MoveVolumesOptions): Promise<VolumeResult[]> {
  return moveVolumes(kube, 'backup', options);
}

/**
 * Fills existing (freshly created) PVCs from `backups/<id>/volumes/<ns>/<pvc>/`. Run it before the workloads that
 * mount them exist: the restore Job is then the volume's first consumer, which is what binds WaitForFirstConsumer claims.
 */
export function restoreVolumes(kube: VolumeKube, options: MoveVolumesOptions): Promise<VolumeResult[]> {
  return moveVolumes(kube, 'restore', options);
}

/** Deletes every mover Job and Secret a run of `backupId` left in `namespaces` (e.g. after a crash). */
export async function cleanupVolumeMovers(kube: VolumeKube, namespaces: string[], backupId?: string): Promise<number> {
  let removed = 0;
  for (const namespace of namespaces) {
    for (const resource of [JOBS, SECRETS]) {
      for (const object of await kube.list(resource, namespace, moverSelector(backupId))) {
        await kube.delete(resource, namespace, object.metadata.name ?? '');
        removed++;
      }
    }
  }
  return removed;
}


async function moveVolumes(kube: VolumeKube, operation: MoveOperation, options: MoveVolumesOptions): Promise<VolumeResult[]> {
  const concurrency = options.concurrency ?? DEFAULT_MOVER_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`volume-mover-concurrency must be a whole number of at least 1, not ${concurrency}.`);
  }
  const startTimeout = options.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT_SECONDS;
  if (!Number.isInteger(startTimeout) || startTimeout < 1) {
    throw new Error(`volume-mover-start-timeout must be a whole number of seconds of at least 1, not ${startTimeout}.`);
  }
  let resources: ResourceList | undefined;
  try {
    resources = parseMoverResources(options.resources ?? DEFAULT_MOVER_RESOURCES);
  } catch (error) {
    throw new Error(`volume-mover-resources must be a list like ${DEFAULT_MOVER_RESOURCES}: ${(error as Error).message}.`);
  }
  const engine = engineNamed(options.engine ?? 'rclone', 'the volume engine');
  const keys = backupKeys(options.backupId);
  const seen = new Set<string>();
  for (const pvc of options.pvcs) {
    const id = `${pvc.namespace}/${pvc.name}`;
    if (seen.has(id)) throw new Error(`PVC ${id} is listed twice for the volume ${operation}.`);
    seen.add(id);
    keys.volume(pvc.namespace, pvc.name); // refuses names that cannot be an object key, before anything is created
  }

  // After the first failure the run is lost anyway: PVCs not yet started are not copied, and the movers still running
  // are stopped (a restore's PVCs keep their fill mark, so a rerun fills them).
  const stopAll = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopAll.signal]) : stopAll.signal;
  // One gate for every mover of the run: at most one stats line per interval, whichever mover it is about.
  const interval = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  let done = 0;
  let lastStatsAt = -Infinity;
  const onCopying = (copying: NonNullable<VolumeProgress['copying']>) => {
    if (Date.now() - lastStatsAt < interval) return;
    lastStatsAt = Date.now();
    options.onProgress?.({ done, total: options.pvcs.length, copying });
  };
  // A backup copies only bound claims (an unbound one never had a volume, moveOne skips it): a run that moves nothing
  // needs no gateway, whose Pod would otherwise be waited for in vain where nothing runs Pods for unbound claims.
  const moving = operation === 'restore' ? options.pvcs : (await Promise.all(options.pvcs.map(async (p) => {
    const claim = await kube.get(PVCS, p.namespace, p.name);
    return (claim?.status as { phase?: string } | undefined)?.phase === 'Bound' ? [p] : [];
  }))).flat();
  const wanted = moving.length > 0 ? options.gateway ?? options.restic?.gateway : undefined;
  const run = await engine.open(kube, operation, {
    backupId: options.backupId, pvcs: options.pvcs, s3: options.s3, image: options.image, startTimeoutSeconds: startTimeout,
    progressIntervalMs: interval, onCopying, signal, copyFrom: options.copyFrom, restic: options.restic,
    gateway: wanted ? {
      runId: options.backupId, operation, namespace: wanted.namespace, namespaces: moving.map((p) => p.namespace), s3: options.s3,
      image: wanted.image, restoreImage: wanted.restoreImage, restoreImageSetting: wanted.restoreImageSetting, activeDeadlineSeconds: options.activeDeadlineSeconds ?? DEFAULT_JOB_DEADLINE_SECONDS, startTimeoutSeconds: startTimeout,
      resources, remedies: { imageSetting: () => wanted.imageSetting, resourcesSetting: 'volume-mover-resources' }, signal: options.signal,
    } : undefined,
  });

  // One Secret per namespace whose data movers move, in that namespace; a mover that runs in the model's namespace (a
  // backup from a snapshot, a restore by hand-over) has one there per namespace whose data it moves (its password and
  // gateway access are that namespace's only), named apart by that namespace (placedMoverSecretName)
  const secrets = new Map<string, { namespace: string; pending: Promise<string> }>();
  const secretFor = (namespace: string, placed: string = namespace): Promise<string> => {
    const key = `${placed}/${namespace}`;
    let entry = secrets.get(key);
    if (!entry) {
      const nameKey = moverNameKey(options.s3.secretKey);
      const name = placed === namespace ? moverSecretName(operation, options.backupId, nameKey) : placedMoverSecretName(operation, options.backupId, nameKey, namespace);
      const secret = run.secret(name, namespace);
      const pending = createOrReplace(kube, SECRETS, { ...secret, metadata: { ...secret.metadata, name, namespace: placed } }).then(() => name);
      entry = { namespace: placed, pending };
      secrets.set(key, entry);
    }
    return entry.pending;
  };
  const snapshots = operation === 'backup' && options.snapshots && moving.length > 0
    ? new (await import('./snapshot/index.ts')).SnapshotRun(kube, options.snapshots, moverNameKey(options.s3.secretKey), options.backupId, moving.map((p) => p.namespace), options.signal)
    : undefined;
  const handover = operation === 'restore' && options.handover
    ? { namespace: options.handover.namespace, nameKey: moverNameKey(options.s3.secretKey), backupId: options.backupId, timeoutMs: HANDOVER_TIMEOUT_MS, signal }
    : undefined;
  if (handover) await settleLeftovers(kube, handover, new Set(options.pvcs.map((p) => `${p.namespace}/${p.name}`)));

  const limit = pLimit(concurrency);
  const results: VolumeResult[] = [];
  const failures: VolumeFailure[] = [];
  let stopped = 0;
  // An engine whose first mover of a namespace may create that namespace's store runs it alone; the others follow it.
  const firstMovers = new Map<string, Promise<void>>();
  const opening = (namespace: string): { wait: Promise<void>; done: () => void } => {
    const first = firstMovers.get(namespace);
    if (first || !run.opensAlone(namespace)) return { wait: first ?? Promise.resolve(), done: () => undefined };
    let done!: () => void;
    firstMovers.set(namespace, new Promise<void>((resolve) => { done = resolve; }));
    return { wait: Promise.resolve(), done };
  };
  const settings: MoverSettings = { ...options, resources, run, snapshotRun: snapshots, handoverContext: handover, signal };

  try {
    await Promise.all(options.pvcs.map((pvc) => limit(async () => {
      if (signal.aborted) return;
      const opened = opening(pvc.namespace);
      await opened.wait;
      if (signal.aborted) return opened.done();
      try {
        const result = await moveOne(kube, operation, settings, pvc, secretFor).finally(opened.done);
        results.push(result);
        options.onProgress?.({ done: ++done, total: options.pvcs.length, result });
      } catch (error) {
        if (stopAll.signal.aborted) {
          stopped++;
          return;
        }
        stopAll.abort();
        const failure = { namespace: pvc.namespace, pvc: pvc.name, reason: describeError(error) };
        failures.push(failure);
        options.onProgress?.({ done: ++done, total: options.pvcs.length, failure });
      }
    })));
  } finally {
    await deleteSecrets(kube, secrets)
      // a killed run's Secrets of this restore in the model's namespace (whose labels only this product writes) go too:
      // a rerun that finds the fill done never replaces them
      .then(() => (handover ? deleteLeftSecrets(kube, handover.namespace, options.backupId) : undefined))
      .finally(() => run.close());
  }
  if (failures.length > 0) throw new VolumeMoveError(operation, failures, results, stopped);
  if (options.signal?.aborted) throw new Error(`The volume ${operation} was cancelled.`);
  return results;
}

async function deleteSecrets(kube: VolumeKube, secrets: Map<string, { namespace: string; pending: Promise<string> }>): Promise<void> {
  const problems: string[] = [];
  for (const { namespace, pending } of secrets.values()) {
    const name = await pending.catch(() => undefined);
    if (!name) continue;
    await kube.delete(SECRETS, namespace, name).catch((error: unknown) => problems.push(`${namespace}/${name}: ${describeError(error)}`));
  }
  if (problems.length > 0) {
    throw new Error(`Could not delete the volume mover credentials Secret(s) ${problems.join('; ')}; delete them by hand.`);
  }
}

async function deleteLeftSecrets(kube: VolumeKube, namespace: string, backupId: string): Promise<void> {
  for (const secret of await kube.list(SECRETS, namespace, `${moverSelector(backupId)},${LABEL_OPERATION}=restore`)) {
    await kube.delete(SECRETS, namespace, secret.metadata.name ?? '');
  }
}

/** The run's options once checked: the parsed resources, and the engine's open run. */
interface MoverSettings extends Omit<MoveVolumesOptions, 'resources' | 'gateway'> {
  resources: ResourceList | undefined;
  run: EngineRun;
  /** backup from snapshots, where the run has them */
  snapshotRun?: SnapshotRun | undefined;
  /** restore by hand-over, where the run hands over */
  handoverContext: HandoverContext | undefined;
}

/** How long a hand-over waits for a claim to go or to be Bound: the PV controller answers in seconds. */
const HANDOVER_TIMEOUT_MS = 300_000;

async function moveOne(
  kube: VolumeKube,
  operation: MoveOperation,
  options: MoverSettings,
  pvcRef: PvcRef,
  secretFor: (namespace: string, placed?: string) => Promise<string>,
): Promise<VolumeResult> {
  const started = Date.now();
  const key = backupKeys(options.backupId).volume(pvcRef.namespace, pvcRef.name);
  const path = remotePath(options.s3, key);
  const base = {
    namespace: pvcRef.namespace, pvc: pvcRef.name, operation, location: `s3://${path}/`,
  };
  const pvc = await kube.get(PVCS, pvcRef.namespace, pvcRef.name);
  if (!pvc) throw new Error('the PersistentVolumeClaim does not exist');
  if (pvc.metadata.deletionTimestamp) throw new Error('the PersistentVolumeClaim is being deleted');
  const phase = (pvc.status as { phase?: string } | undefined)?.phase;
  if (operation === 'backup' && phase !== 'Bound') {
    // An unbound claim never had a volume, so there is nothing to copy; mounting it would provision an empty one.
    return { ...base, files: 0, bytes: 0, checksumVerified: false, durationMs: Date.now() - started, skipped: `the PVC is ${phase ?? 'not bound'}; it holds no data` };
  }
  const job = {
    name: moverJobName(operation, options.backupId, pvcRef.namespace, pvcRef.name, moverNameKey(options.s3.secretKey)),
    namespace: pvcRef.namespace,
    pvc: pvcRef.name,
    backupId: options.backupId,
    operation,
    s3: options.s3,
    activeDeadlineSeconds: options.activeDeadlineSeconds ?? DEFAULT_JOB_DEADLINE_SECONDS,
    ttlSecondsAfterFinished: options.ttlSecondsAfterFinished ?? DEFAULT_JOB_TTL_SECONDS,
    resources: options.resources,
  };
  // From a snapshot where the PVC's driver has a class: the mover reads a claim made from it in the model's namespace,
  // wherever the user's Pods run and whatever they write meanwhile.
  const exposure = operation === 'backup' ? await options.snapshotRun?.expose(pvc, job.name, options.signal) : undefined;
  if (exposure && 'exposed' in exposure) {
    const { exposed, plan, namespace } = exposure;
    const moved = (async () => {
      const secretName = await secretFor(pvcRef.namespace, namespace);
      return options.run.move(kube, { pvcRef, pvc, base, path, started, job: { ...job, secretName, mount: { namespace, claim: exposed.claim } } });
    })();
    // the exposure goes whatever the mover did, even when another PVC's failure stopped it; a run whose caller ends it
    // (a dying process) leaves it to the next run's sweep
    const result = await moved.finally(() => options.snapshotRun!.remove(plan));
    return { ...result, copy: { from: 'snapshot', pointInTime: true, takenAt: exposed.takenAt, volumeSnapshotClass: exposed.volumeSnapshotClass } };
  }
  const live = exposure && 'live' in exposure ? exposure.live : undefined;

  const placement = operation === 'backup' ? await placementFor(kube, pvc) : {};
  if (placement.blocked) throw new Error(placement.blocked);

  if (operation === 'restore' && handsOver(pvc)) {
    const context = options.handoverContext;
    if (!context) throw new Error('the restore that created it reserved it for a hand-over from the model\'s namespace (no provisioner gives it a volume of its own), and this run does not hand over: rerun handing over, or delete the claim and rerun the restore');
    if (volumeNameOf(pvc)) {
      // a run killed after the claim was Bound to the volume it handed over (the volume carries the claim's
      // reservation, which only a hand-over writes on a PersistentVolume) ends that hand-over; any other volume is not ours
      const volume = await finishedHandover(kube, context, pvc);
      if (volume) return { ...base, files: 0, bytes: 0, checksumVerified: false, durationMs: Date.now() - started, skipped: 'its hand-over was finished by an earlier run', restoredBy: 'handover', volume };
      // named, not yet Bound: a killed run's hand-over of the volume its record names goes on below
      if (await recordedVolume(kube, context, pvc) !== volumeNameOf(pvc)) throw new Error(`it was reserved for a hand-over but names volume ${volumeNameOf(pvc)}, which no hand-over made; it was left as it is`);
    }
    // filled in the model's namespace, then handed over (./rebind.ts): nothing of the restore enters the PVC's namespace
    let plan = await prepareHandover(kube, context, pvc);
    let result: VolumeResult;
    if (plan.temp) {
      const secretName = await secretFor(pvcRef.namespace, context.namespace);
      result = await options.run.move(kube, {
        pvcRef, pvc: plan.temp, base, path, started,
        job: { ...job, secretName, mount: { namespace: context.namespace, claim: plan.temp.metadata.name ?? '' } },
      });
      plan = await recordFilled(kube, context, plan, { ...result });
    } else {
      result = { ...(plan.filled as unknown as VolumeResult), ...base, durationMs: 0 };
    }
    const volume = await handOver(kube, context, plan, pvc);
    return { ...result, durationMs: Date.now() - started, restoredBy: 'handover', volume };
  }

  const secretName = await secretFor(pvcRef.namespace);
  const result = await options.run.move(kube, { pvcRef, pvc, nodeName: placement.nodeName, base, path, started, job: { ...job, secretName } });
  // a backup says how each PVC was read: live, not at one point in time, and why no snapshot was taken where one was asked
  if (operation === 'backup') return options.snapshots ? { ...result, copy: live ?? { from: 'live', pointInTime: false } } : result;
  return { ...result, restoredBy: 'in-namespace' };
}

const volumeNameOf = (pvc: KubeObject) => (pvc.spec as { volumeName?: string } | undefined)?.volumeName;
