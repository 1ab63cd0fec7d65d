// Runs one mover Job per PVC, at most `concurrency` at once, and turns each into a VolumeResult or a named failure.
// The credentials Secrets of the run are deleted in every case.
import pLimit from 'p-limit';
import { KfuError } from '../errors/index.ts';
import { backupKeys } from '../store/layout.ts';
import { FILL_MARK_REMOVAL, hasFillMark } from './fill-mark.ts';
import { createOrReplace, podsOf, startOrAdopt, stillPinned } from './adopt.ts';
import { startGateway } from './restic/gateway.ts';
import { startFilesGateway, type RunningFilesGateway } from './files-gateway.ts';
import { buildCredentialsSecret, buildMoverJob, nodeAffinity, statsPeriodSeconds } from './job.ts';
import type { KubeObject } from '../kube/types.ts';
import { buildResticJob, buildResticSecret, DEFAULT_RESTIC_IMAGE, resticRepositoryKey } from './restic/job.ts';
import { parseResticBackup, parseResticProgress, parseResticRestore, resticFailureReason } from './restic/outcome.ts';
import { bucketLister, resolveSnapshotId, type SnapshotLister } from './restic/snapshot-id.ts';
import { followUntilFinished } from './job-watch.ts';
import { watchJob } from '../jobs/watch.ts';
import type { StartRemedies } from '../jobs/start-watch.ts';
import { JOBS, PODS, PVCS, SECRETS, type VolumeKube } from './kube-port.ts';
import { moverJobName, moverNameKey, moverSecretName, moverSelector, type MoveOperation } from './labels.ts';
import { failureReason, jobFailedCondition, jobFinished, jobSucceeded, parseMovedTree, terminationMessage, type CopyProgress } from './outcome.ts';
import { placementFor } from './placement.ts';
import { DEFAULT_MOVER_RESOURCES, parseMoverResources, type ResourceList } from './resources.ts';
import { describeInline as describeError } from '../errors/index.ts';
import {
  DEFAULT_JOB_DEADLINE_SECONDS, DEFAULT_JOB_TTL_SECONDS, DEFAULT_MOVER_CONCURRENCY, DEFAULT_MOVER_IMAGE, DEFAULT_PROGRESS_INTERVAL_MS,
  DEFAULT_START_TIMEOUT_SECONDS,
  remotePath, type MoverS3Settings,
} from './settings.ts';

export interface PvcRef {
  namespace: string;
  name: string;
}

export interface VolumeResult {
  namespace: string;
  pvc: string;
  operation: MoveOperation;
  /** s3://bucket/prefix/backups/<id>/volumes/<ns>/<pvc>/ */
  location: string;
  files: number;
  bytes: number;
  /** rclone check compared every file's size and hash on both sides */
  checksumVerified: boolean;
  durationMs: number;
  /** the node the copy ran on when it was pinned next to a ReadWriteOnce user */
  node?: string;
  /** set when nothing was copied, and why (e.g. a PVC that was never bound holds no data) */
  skipped?: string;
  /** backup: the earlier backup whose copy of this PVC the new one started from (copied inside the bucket) */
  reusedFrom?: string;
  /** backup: files and bytes copied inside the bucket from `reusedFrom`, when rclone counted them apart */
  reused?: { files: number; bytes: number };
  /** restic mover: the snapshot written (backup) or restored, and its repository's key prefix */
  restic?: { snapshot: string; repository: string; dataAdded?: number; filesUnmodified?: number };
}

export interface VolumeFailure {
  namespace: string;
  pvc: string;
  reason: string;
}

export interface VolumeProgress {
  done: number;
  total: number;
  result?: VolumeResult;
  failure?: VolumeFailure;
  /** a running mover's latest rclone stats */
  copying?: CopyProgress & { namespace: string; pvc: string };
}

export interface MoveVolumesOptions {
  backupId: string;
  pvcs: PvcRef[];
  s3: MoverS3Settings;
  /** `volume-mover-image`; default an official rclone image pinned by tag */
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
   * 'restic': each PVC goes to its namespace's restic repository (src/volumes/restic/job.ts) instead of plain files;
   * `restic` then gives the repository password and, per `namespace/pvc`, the backup's parent or the restore's snapshot
   * with its size as the backup counted it (`sizes`: files and bytes, from the authenticated manifest; a restore
   * reports them, the mover counting nothing again).
   */
  engine?: 'rclone' | 'restic';
  restic?: {
    /** each namespace's repository password (src/volumes/restic/password.ts): its mover Secret holds that one only */
    password: (namespace: string) => string;
    parents?: ReadonlyMap<string, string>;
    snapshots?: ReadonlyMap<string, string>;
    sizes?: ReadonlyMap<string, { files: number; bytes: number }>;
    /**
     * backup: lists the bucket (keys from its root) with the caller's own S3 client, which turns each snapshot's short
     * id into its full one; without it, a client for `s3` as the movers get it
     */
    listBucket?: SnapshotLister;
    /**
     * the run's repository gateway (src/volumes/restic/gateway.ts): started in `namespace` (the model's, never a
     * profile's) with an rclone `image`, it is all the movers reach; their Secrets then hold no bucket credential
     */
    gateway?: { namespace: string; image: string; imageSetting: string };
  };
  /**
   * the run's gateway, started in `namespace` (the model's, never a profile's) with an rclone `image`: all the movers
   * reach, whichever the engine (restic/gateway.ts for restic repositories, files-gateway.ts for plain files); their
   * Secrets then hold no bucket credential. `restic.gateway` says the same for the restic engine.
   */
  gateway?: { namespace: string; image: string; imageSetting: string };
  /** how often a running mover's stats are read and, when they changed, reported (default 30 s) */
  progressIntervalMs?: number;
  signal?: AbortSignal;
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
  if (options.engine === 'restic') resticSettings(options);
  const keys = backupKeys(options.backupId);
  const seen = new Set<string>();
  for (const pvc of options.pvcs) {
    const id = `${pvc.namespace}/${pvc.name}`;
    if (seen.has(id)) throw new Error(`PVC ${id} is listed twice for the volume ${operation}.`);
    seen.add(id);
    keys.volume(pvc.namespace, pvc.name); // refuses names that cannot be an object key, before anything is created
  }

  const wanted = options.gateway ?? options.restic?.gateway;
  const gatewayRequest = wanted ? {
    runId: options.backupId, operation, namespace: wanted.namespace, namespaces: options.pvcs.map((p) => p.namespace), s3: options.s3,
    image: wanted.image, activeDeadlineSeconds: options.activeDeadlineSeconds ?? DEFAULT_JOB_DEADLINE_SECONDS, startTimeoutSeconds: startTimeout,
    resources, remedies: { imageSetting: () => wanted.imageSetting, resourcesSetting: 'volume-mover-resources' }, signal: options.signal,
  } : undefined;
  const cannotStart = (what: string) => (error: unknown): never => {
    throw new Error(`The volume ${operation} did not start: the ${what} in namespace ${wanted?.namespace}, through which the movers reach the bucket, could not be started (${describeError(error)}).`);
  };
  const gateway = gatewayRequest && options.engine === 'restic'
    ? await startGateway(kube, gatewayRequest).catch(cannotStart('repository gateway')) : undefined;
  // a backup's plain-file gateway first copies, inside the bucket, the earlier backups' copies the movers sync onto
  const seeds = operation === 'backup'
    ? options.pvcs.flatMap((p) => { const from = options.copyFrom?.get(`${p.namespace}/${p.name}`); return from ? [{ namespace: p.namespace, pvc: p.name, from }] : []; })
    : [];
  const files = gatewayRequest && options.engine !== 'restic'
    ? await startFilesGateway(kube, { ...gatewayRequest, seeds }).catch(cannotStart('plain-file gateway')) : undefined;
  const access = (namespace: string) => (gateway ? { repository: gateway.repository(namespace), certificate: gateway.certificate } : undefined);

  const secrets = new Map<string, Promise<string>>();
  const secretFor = (namespace: string): Promise<string> => {
    let pending = secrets.get(namespace);
    if (!pending) {
      const name = moverSecretName(operation, options.backupId, moverNameKey(options.s3.secretKey));
      const secret = options.engine === 'restic'
        ? buildResticSecret({ name, namespace, backupId: options.backupId, operation, s3: options.s3, password: resticSettings(options).password(namespace), gateway: access(namespace) })
        : buildCredentialsSecret({ name, namespace, backupId: options.backupId, operation, s3: options.s3, gateway: files?.access(namespace) });
      pending = createOrReplace(kube, SECRETS, secret)
        .then(() => name);
      secrets.set(namespace, pending);
    }
    return pending;
  };

  const limit = pLimit(concurrency);
  const results: VolumeResult[] = [];
  const failures: VolumeFailure[] = [];
  let done = 0;
  let stopped = 0;
  // After the first failure the run is lost anyway: PVCs not yet started are not copied, and the movers still running
  // are stopped (a restore's PVCs keep their fill mark, so a rerun fills them).
  const stopAll = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopAll.signal]) : stopAll.signal;
  // One gate for every mover of the run: at most one stats line per interval, whichever mover it is about.
  const interval = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  let lastStatsAt = -Infinity;
  const onCopying = (copying: NonNullable<VolumeProgress['copying']>) => {
    if (Date.now() - lastStatsAt < interval) return;
    lastStatsAt = Date.now();
    options.onProgress?.({ done, total: options.pvcs.length, copying });
  };
  // restic's `init` is not atomic on S3: two movers creating one namespace's repository at once each write a key and
  // a config, and the config left is one the other key cannot open ("config or key ... is damaged"). So the first
  // restic backup mover of each namespace runs alone, creating the repository if needed; the others follow it, at
  // once. A restore never creates one, and a namespace with a parent snapshot has one already: those start together.
  const hasRepository = (namespace: string) => operation === 'restore'
    || [...(options.restic?.parents?.keys() ?? [])].some((id) => id.startsWith(`${namespace}/`));
  const firstMovers = new Map<string, Promise<void>>();
  const opening = (namespace: string): { wait: Promise<void>; done: () => void } => {
    const first = firstMovers.get(namespace);
    if (options.engine !== 'restic' || first || hasRepository(namespace)) return { wait: first ?? Promise.resolve(), done: () => undefined };
    let done!: () => void;
    firstMovers.set(namespace, new Promise<void>((resolve) => { done = resolve; }));
    return { wait: Promise.resolve(), done };
  };
  // one S3 client per restic backup run, unless the caller lists with its own: it turns each snapshot's short id into its full one
  const lister = options.engine === 'restic' && operation === 'backup' && !options.restic?.listBucket ? bucketLister(options.s3) : undefined;
  const listBucket = options.restic?.listBucket ?? lister?.list;
  const settings: MoverSettings = {
    ...options, startTimeoutSeconds: startTimeout, resources, signal, progressIntervalMs: interval, onCopying, ...(listBucket ? { listBucket } : {}),
    ...(gateway ? { resticGateway: { access, secrets: gateway.secrets } } : {}),
    ...(files ? { files } : {}),
  };

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
    lister?.close();
    await deleteSecrets(kube, secrets).finally(() => Promise.all([gateway?.stop(), files?.stop()]));
  }
  if (failures.length > 0) throw new VolumeMoveError(operation, failures, results, stopped);
  if (options.signal?.aborted) throw new Error(`The volume ${operation} was cancelled.`);
  return results;
}

async function deleteSecrets(kube: VolumeKube, secrets: Map<string, Promise<string>>): Promise<void> {
  const problems: string[] = [];
  for (const [namespace, pending] of secrets) {
    const name = await pending.catch(() => undefined);
    if (!name) continue;
    await kube.delete(SECRETS, namespace, name).catch((error: unknown) => problems.push(`${namespace}/${name}: ${describeError(error)}`));
  }
  if (problems.length > 0) {
    throw new Error(`Could not delete the volume mover credentials Secret(s) ${problems.join('; ')}; delete them by hand.`);
  }
}

/** The run's options once checked: the parsed resources, and the signal that also stops every mover on a failure. */
interface MoverSettings extends Omit<MoveVolumesOptions, 'resources' | 'gateway'> {
  startTimeoutSeconds: number;
  resources: ResourceList | undefined;
  progressIntervalMs: number;
  onCopying: (copying: NonNullable<VolumeProgress['copying']>) => void;
  /** restic backup: lists the bucket, to turn a snapshot's short id into its full one */
  listBucket?: SnapshotLister;
  /** the run's repository gateway: each namespace's access, and its passwords (never to be printed) */
  resticGateway?: { access: (namespace: string) => { repository: string; certificate: string } | undefined; secrets: string[] };
  /** the run's plain-file gateway (files-gateway.ts) */
  files?: RunningFilesGateway;
}

function resticSettings(options: Pick<MoveVolumesOptions, 'restic'>): NonNullable<MoveVolumesOptions['restic']> {
  if (!options.restic) throw new Error('The restic mover needs the repository password.');
  return options.restic;
}

/** The settings that fix a mover Pod that cannot start. */
const MOVER_REMEDIES: StartRemedies = { imageSetting: () => 'volume-mover-image', resourcesSetting: 'volume-mover-resources' };

async function moveOne(
  kube: VolumeKube,
  operation: MoveOperation,
  options: MoverSettings,
  pvcRef: PvcRef,
  secretFor: (namespace: string) => Promise<string>,
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
  const placement = operation === 'backup' ? await placementFor(kube, pvc) : {};
  if (placement.blocked) throw new Error(placement.blocked);

  const secretName = await secretFor(pvcRef.namespace);
  const deadline = options.activeDeadlineSeconds ?? DEFAULT_JOB_DEADLINE_SECONDS;
  const jobBase = {
    name: moverJobName(operation, options.backupId, pvcRef.namespace, pvcRef.name, moverNameKey(options.s3.secretKey)),
    namespace: pvcRef.namespace,
    pvc: pvcRef.name,
    backupId: options.backupId,
    operation,
    secretName,
    s3: options.s3,
    activeDeadlineSeconds: deadline,
    ttlSecondsAfterFinished: options.ttlSecondsAfterFinished ?? DEFAULT_JOB_TTL_SECONDS,
    resources: options.resources,
  };
  if (options.engine === 'restic') return runResticMover(kube, operation, options, pvcRef, pvc, jobBase, placement.nodeName, base, started);
  const reusedFrom = operation === 'backup' ? options.copyFrom?.get(`${pvcRef.namespace}/${pvcRef.name}`) : undefined;
  const copyDestPath = reusedFrom ? remotePath(options.s3, backupKeys(reusedFrom).volume(pvcRef.namespace, pvcRef.name)) : undefined;
  // through the gateway the mover's root is its namespace's folder of the backup, and the gateway made the reused copy
  const gatewayAccess = options.files?.access(pvcRef.namespace);
  const job = buildMoverJob({
    ...jobBase,
    image: options.image ?? DEFAULT_MOVER_IMAGE,
    remotePath: gatewayAccess ? pvcRef.name : path,
    ...(gatewayAccess ? { gateway: gatewayAccess, seeded: reusedFrom !== undefined } : {}),
    nodeName: placement.nodeName,
    statsPeriodSeconds: statsPeriodSeconds(options.progressIntervalMs),
    ...(copyDestPath && !gatewayAccess ? { copyDestPath } : {}),
  });
  const jobName = job.metadata.name ?? '';
  const startedJob = await startOrAdopt(kube, job, options.signal);
  const watched = await watchJob(kube, pvcRef.namespace, jobName, {
    deadlineSeconds: deadline, startTimeoutSeconds: options.startTimeoutSeconds, remedies: MOVER_REMEDIES, noun: 'mover Job', signal: options.signal,
    whileRunning: (finishing) => followUntilFinished(kube, pvcRef, jobName, finishing, options.progressIntervalMs, options.onCopying),
  });
  if (!watched) throw new Error(`its mover Job ${jobName} was deleted before it finished`);
  // the result is read only from the Job this run pinned and the Pods it controls, never from anything named alike
  const finished = stillPinned(watched, startedJob, 'mover Job');
  const message = terminationMessage(await podsOf(kube, pvcRef.namespace, startedJob));
  if (!jobSucceeded(finished)) {
    const failed = jobFailedCondition(finished);
    const why = failureReason(message, [options.s3.secretKey, ...(options.files?.secrets ?? [])])
      ?? (failed?.reason === 'DeadlineExceeded' ? `it did not finish within ${deadline} seconds` : failed?.message ?? failed?.reason ?? 'the mover failed');
    throw new Error(`mover Job ${jobName} failed: ${why}`);
  }
  const moved = parseMovedTree(message);
  if (!moved) throw new Error(`mover Job ${jobName} completed without reporting what it copied`);
  await kube.delete(JOBS, pvcRef.namespace, jobName);
  // Only now is the volume complete: the mark that makes a rerun fill it again comes off.
  if (operation === 'restore' && hasFillMark(pvc)) await kube.mergePatch(PVCS, pvcRef.namespace, pvcRef.name, FILL_MARK_REMOVAL);
  return {
    ...base, ...moved, durationMs: Date.now() - started,
    ...(placement.nodeName ? { node: placement.nodeName } : {}),
    ...(reusedFrom ? { reusedFrom } : {}),
  };
}

/**
 * One PVC through its namespace's restic repository: a backup writes a snapshot tagged with the backup, namespace and
 * PVC (its parent the PVC's newest snapshot, when the caller knows one); a restore writes the snapshot the caller
 * pins (from the authenticated manifest) into the PVC. restic checks the MAC of every blob it reads.
 */
async function runResticMover(
  kube: VolumeKube, operation: MoveOperation, options: MoverSettings, pvcRef: PvcRef, pvc: KubeObject,
  jobBase: Omit<Parameters<typeof buildResticJob>[0], 'image'>, nodeName: string | undefined,
  base: Pick<VolumeResult, 'namespace' | 'pvc' | 'operation' | 'location'>, started: number,
): Promise<VolumeResult> {
  const restic = resticSettings(options);
  const id = `${pvcRef.namespace}/${pvcRef.name}`;
  const snapshot = operation === 'restore' ? restic.snapshots?.get(id) : undefined;
  if (operation === 'restore' && !snapshot) throw new Error('the backup pins no restic snapshot for this PVC');
  const repository = resticRepositoryKey(options.s3, pvcRef.namespace);
  const job = buildResticJob({
    ...jobBase,
    image: options.image ?? DEFAULT_RESTIC_IMAGE,
    ...(nodeName ? { nodeAffinity: nodeAffinity(nodeName) } : {}),
    parent: operation === 'backup' ? restic.parents?.get(id) : undefined,
    snapshot,
    progressFps: 1 / statsPeriodSeconds(options.progressIntervalMs),
    gateway: options.resticGateway?.access(pvcRef.namespace),
  });
  const jobName = job.metadata.name ?? '';
  const pinned = await startOrAdopt(kube, job, options.signal);
  const deadline = jobBase.activeDeadlineSeconds;
  const watched = await watchJob(kube, pvcRef.namespace, jobName, {
    deadlineSeconds: deadline, startTimeoutSeconds: options.startTimeoutSeconds, remedies: MOVER_REMEDIES, noun: 'mover Job', signal: options.signal,
    whileRunning: (finishing) => followUntilFinished(kube, pvcRef, jobName, finishing, options.progressIntervalMs, options.onCopying, parseResticProgress),
  });
  if (!watched) throw new Error(`its mover Job ${jobName} was deleted before it finished`);
  // the result is read only from the Job this run pinned and the Pods it controls, never from anything named alike
  const finished = stillPinned(watched, pinned, 'mover Job');
  const message = terminationMessage(await podsOf(kube, pvcRef.namespace, pinned));
  if (!jobSucceeded(finished)) {
    const failed = jobFailedCondition(finished);
    const why = resticFailureReason(message, [options.s3.secretKey, restic.password(pvcRef.namespace), ...(options.resticGateway?.secrets ?? [])])
      ?? (failed?.reason === 'DeadlineExceeded' ? `it did not finish within ${deadline} seconds` : failed?.message ?? failed?.reason ?? 'the mover failed');
    throw new Error(`mover Job ${jobName} failed: ${why}`);
  }
  const location = `s3://${options.s3.bucket}/${repository}`;
  if (operation === 'backup') {
    const outcome = parseResticBackup(message);
    if (!outcome) throw new Error(`mover Job ${jobName} completed without reporting its restic snapshot`);
    const full = outcome.snapshot ?? (options.listBucket ? await resolveSnapshotId(options.listBucket, repository, outcome.shortId) : undefined);
    if (!full) throw new Error(`mover Job ${jobName} reported restic snapshot ${outcome.shortId}, and the bucket was not listed for its full id`);
    await kube.delete(JOBS, pvcRef.namespace, jobName);
    return {
      ...base, location, files: outcome.files, bytes: outcome.bytes, checksumVerified: true, durationMs: Date.now() - started,
      ...(nodeName ? { node: nodeName } : {}),
      restic: { snapshot: full, repository, dataAdded: outcome.dataAdded, filesUnmodified: outcome.filesUnmodified },
    };
  }
  const outcome = parseResticRestore(message);
  if (!outcome || outcome.snapshot !== snapshot) throw new Error(`mover Job ${jobName} completed without reporting the restic snapshot it restored`);
  await kube.delete(JOBS, pvcRef.namespace, jobName);
  // Only now is the volume complete: the mark that makes a rerun fill it again comes off.
  if (hasFillMark(pvc)) await kube.mergePatch(PVCS, pvcRef.namespace, pvcRef.name, FILL_MARK_REMOVAL);
  // the size the backup counted (the manifest's), else what a Job of an earlier version counted, else unknown: 0
  const size = restic.sizes?.get(id) ?? outcome.size ?? { files: 0, bytes: 0 };
  return { ...base, location, files: size.files, bytes: size.bytes, checksumVerified: true, durationMs: Date.now() - started, restic: { snapshot: outcome.snapshot, repository } };
}
