// The control-plane part of backup-state and restore-state: one copy Job per database and per MinIO bucket, run
// one after another (a dump should not compete with another for the database), each with its own Secret that is
// deleted whatever happens. A failure stops the run with one sentence; the backup engine then writes no marker.
import type { S3Settings } from '../store/settings.ts';
import { backupKeys, normalizePrefix } from '../store/layout.ts';
import type { KubeObject } from '../kube/types.ts';
import { JOBS, PODS, SECRETS, type VolumeKube } from '../volumes/kube-port.ts';
import { jobSucceeded } from '../jobs/outcome.ts';
import { watchJob } from '../jobs/watch.ts';
import type { StartRemedies } from '../jobs/start-watch.ts';
import { DEFAULT_START_TIMEOUT_SECONDS } from '../jobs/template.ts';
import {
  buildCopyJob, controlPlaneRepositoryKey, resticFileOf, DEFAULT_MYSQL_IMAGE, DEFAULT_RCLONE_IMAGE, DEFAULT_RESTIC_IMAGE, DEFAULT_SQLITE_IMAGE, type CopyImages, type CopySpec,
  type ResticCopy, type SqliteOnClaim,
} from './jobs.ts';
import { controlPlaneResticPassword } from './restic-password.ts';
import { moverS3Settings } from '../volumes/settings.ts';
import { bucketLister, resolveSnapshotId } from '../volumes/restic/snapshot-id.ts';
import { MinioCopySuccess, MysqlCopySuccess, parseCopyOutcome, type CopyOutcome } from './outcome.ts';
import { notCoveredSentences, type MinioEndpoint, type MysqlEndpoint } from './relations.ts';
import { busyRuns, busyWriters, notQuietSentence, type QuietPart } from './quiet.ts';
import type { z } from 'zod';
import { KfuError } from '../errors/index.ts';
import type { ControlPlaneEntry } from '../archive/manifest.ts';

export type DatabasePart = 'kfp-db' | 'katib-db';

export interface ControlPlaneTargets {
  /** undefined when the relation is absent: reported as not covered */
  'kfp-db'?: MysqlEndpoint;
  'katib-db'?: MysqlEndpoint;
  'object-storage'?: { minio: MinioEndpoint; buckets: string[] };
  /** ML Metadata's SQLite file on the mlmd storage (found by src/controlplane/mlmd.ts); undefined when not found */
  mlmd?: SqliteOnClaim;
}

export interface ControlPlaneOptions {
  backupId: string;
  /** where the Jobs and their Secrets run: the charm's model namespace */
  namespace: string;
  targets: ControlPlaneTargets;
  s3: S3Settings;
  /** key prefix inside the bucket; defaults to s3.path */
  prefix?: string;
  /** the official images the copies run: rclone (every copy), MySQL (database copies), Python (the MLMD copy) */
  images?: Partial<CopyImages>;
  /** per copy; default 6 hours */
  timeoutMs?: number;
  /** seconds a copy's Pod may take to start running before the copy fails with the reason; default 300 */
  startTimeoutSeconds?: number;
  onProgress?: (message: string) => void;
  /** backup: MinIO bucket → full key prefix of its copy in the newest earlier backup (src/volumes/reuse.ts) */
  minioCopyFrom?: ReadonlyMap<string, string>;
  /**
   * `encryption-key`: a backup stores every copy encrypted in the control-plane restic repository (restic-password.ts),
   * and a restore reads the parts a manifest pins there. Without it, a backup writes plain compressed files.
   */
  encryptionKey?: string | Buffer | undefined;
}

/** One copied thing, as the manifest records it (its schema is the manifest's: src/archive/manifest.ts). */
export type { ControlPlaneEntry } from '../archive/manifest.ts';

export interface ControlPlaneResult {
  entries: ControlPlaneEntry[];
  /** "control plane not covered: relate kfp-db …" sentences */
  notCovered: string[];
  /** one sentence per related database that holds no tables: dumped, but not covered and not in `entries` */
  empty: string[];
}

const WHOSE: Record<DatabasePart, string> = { 'kfp-db': "Kubeflow Pipelines'", 'katib-db': "Katib's" };

/** mysql-k8s makes an empty database for any name it is asked for: one without tables is not the app's. */
export function emptyDatabaseSentence(part: DatabasePart, database: string): string {
  return `control plane not covered: ${part}'s database ${database} holds no tables, so it is not ${WHOSE[part]} (mysql-k8s creates an empty database for a name it is asked; set ${part} to the database the application uses).`;
}

/** A copy Job of the control plane failed; `detail` is its log tail, for juju-log only. */
export class ControlPlaneError extends KfuError {
  static override readonly errorId = 'ControlPlaneError';
  constructor(message: string, readonly detail: string) {
    super(message, { kind: 'failed' });
  }
}

interface TerminatedStatus { state?: { terminated?: { exitCode?: number; message?: string } } }

/**
 * The outcome a copy Pod reports: the message of the first container that failed (an init container that failed
 * stops the Pod there), else that of the Pod's container, which runs last.
 */
function copyTerminationMessage(pods: KubeObject[]): string | undefined {
  for (const pod of pods) {
    const status = (pod.status ?? {}) as { initContainerStatuses?: TerminatedStatus[]; containerStatuses?: TerminatedStatus[] };
    const all = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
    const failed = all.find((s) => s.state?.terminated && s.state.terminated.exitCode !== 0);
    if (failed) return failed.state!.terminated!.message ?? '';
    const last = status.containerStatuses?.at(-1)?.state?.terminated;
    if (last) return last.message ?? '';
  }
  return undefined;
}

/** The config option that names each image, for the sentence of a Pod whose image cannot be pulled. */
function copyRemedies(images: CopyImages): StartRemedies {
  return {
    imageSetting: (image) => (image === images.mysql ? 'control-plane-mysql-image' : image === images.sqlite ? 'control-plane-sqlite-image'
      : image === images.rclone ? 'control-plane-rclone-image' : 'volume-mover-image'),
  };
}

async function runCopy<T>(kube: VolumeKube, spec: CopySpec, part: string, options: ControlPlaneOptions, success: z.ZodType<T>): Promise<CopyOutcome<T>> {
  const images = {
    rclone: options.images?.rclone || DEFAULT_RCLONE_IMAGE, mysql: options.images?.mysql || DEFAULT_MYSQL_IMAGE, sqlite: options.images?.sqlite || DEFAULT_SQLITE_IMAGE,
    restic: options.images?.restic || DEFAULT_RESTIC_IMAGE,
  };
  const deadlineSeconds = Math.ceil((options.timeoutMs ?? 6 * 3600_000) / 1000);
  const { job, secret } = buildCopyJob(spec, { namespace: options.namespace, backupId: options.backupId, part, images, activeDeadlineSeconds: deadlineSeconds });
  const name = job.metadata.name!;
  // A crashed earlier attempt of the same backup leaves a Job of the same name: start clean.
  await kube.delete(JOBS, options.namespace, name);
  await kube.delete(SECRETS, options.namespace, name);
  try {
    await kube.create(SECRETS, secret);
    await kube.create(JOBS, job);
    const finished = await watchJob(kube, options.namespace, name, {
      deadlineSeconds,
      startTimeoutSeconds: options.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT_SECONDS,
      remedies: copyRemedies(images),
      noun: 'copy Job',
    });
    const pods = await kube.list(PODS, options.namespace, `job-name=${name}`);
    const outcome = parseCopyOutcome(copyTerminationMessage(pods), success);
    if (outcome.ok && (!finished || !jobSucceeded(finished))) {
      return { ok: false, error: 'the copy Job reported success but did not complete', detail: '' };
    }
    return outcome;
  } catch (error) {
    return { ok: false, error: `the copy Job could not be run (${(error as Error).message})`, detail: '' };
  } finally {
    await kube.delete(JOBS, options.namespace, name).catch(() => undefined);
    await kube.delete(SECRETS, options.namespace, name).catch(() => undefined);
  }
}

function present(targets: ControlPlaneTargets) {
  return {
    'kfp-db': targets['kfp-db'] !== undefined,
    'katib-db': targets['katib-db'] !== undefined,
    'object-storage': targets['object-storage'] !== undefined,
  };
}

function keysFor(options: ControlPlaneOptions) {
  const keys = backupKeys(options.backupId);
  const prefix = normalizePrefix(options.prefix ?? options.s3.path);
  const full = (key: string) => (prefix ? `${prefix}/${key}` : key);
  return {
    dump: (database: string) => full(keys.controlPlane('mysql', `${database}.sql.gz`)),
    sqlite: (file: string) => full(keys.controlPlane('sqlite', `${file}.gz`)),
    bucket: (bucket: string) => full(keys.controlPlane('minio', bucket)) + '/',
  };
}

const DATABASE_PARTS: DatabasePart[] = ['kfp-db', 'katib-db'];

/** The control-plane repository as this run writes it: its key in the bucket, its password, and the pins' lookup. */
interface ResticTarget {
  repository: string;
  password: string;
  /** the full id of the snapshot restic reported by its short id, from the bucket's listing (snapshot-id.ts) */
  pin(shortId: string | undefined, what: string): Promise<{ repository: string; snapshot: string }>;
  close(): void;
}

function resticTarget(options: ControlPlaneOptions): ResticTarget | undefined {
  if (options.encryptionKey === undefined || options.encryptionKey.length === 0) return undefined;
  const repository = controlPlaneRepositoryKey(options.s3);
  let lister: ReturnType<typeof bucketLister> | undefined;
  return {
    repository,
    password: controlPlaneResticPassword(options.encryptionKey),
    async pin(shortId, what) {
      if (!shortId) throw new ControlPlaneError(`Backup of ${what} failed: restic reported no snapshot.`, '');
      lister ??= bucketLister(moverS3Settings(options.s3));
      try {
        return { repository, snapshot: await resolveSnapshotId(lister.list, repository, shortId) };
      } catch (error) {
        throw new ControlPlaneError(`Backup of ${what} failed: ${(error as Error).message}.`, '');
      }
    },
    close: () => lister?.close(),
  };
}

/** The snapshot's tags: which backup and which part (restic tags are free text; a comma separates them). */
function resticCopy(restic: ResticTarget, backupId: string, part: string): ResticCopy {
  return { password: restic.password, tags: [`kfu-backup=${backupId}`, `kfu-part=${part}`] };
}

/**
 * Dumps the related databases and mirrors the MinIO buckets: with `encryption-key` into snapshots of the control-plane
 * restic repository (pinned by full id in the entries), without one into backups/<id>/control-plane/ as plain files.
 */
export async function backupControlPlane(kube: VolumeKube, options: ControlPlaneOptions): Promise<ControlPlaneResult> {
  const restic = resticTarget(options);
  try {
    return await backupParts(kube, options, restic);
  } finally {
    restic?.close();
  }
}

async function backupParts(kube: VolumeKube, options: ControlPlaneOptions, restic: ResticTarget | undefined): Promise<ControlPlaneResult> {
  const keys = keysFor(options);
  const entries: ControlPlaneEntry[] = [];
  const empty: string[] = [];
  const where = restic ? ' into the control-plane restic repository' : '';
  const size = (bytes: number) => (restic ? `${bytes} bytes, encrypted` : `${bytes} bytes compressed`);
  for (const part of DATABASE_PARTS) {
    const db = options.targets[part];
    if (!db) continue;
    options.onProgress?.(`dumping ${part} (database ${db.database})${where}`);
    const key = restic ? restic.repository : keys.dump(db.database);
    const spec: CopySpec = { kind: 'mysql-backup', db, store: options.s3, key, ...(restic ? { restic: resticCopy(restic, options.backupId, part) } : {}) };
    const outcome = await runCopy(kube, spec, part, options, MysqlCopySuccess);
    if (!outcome.ok) throw new ControlPlaneError(`Backup of ${part} failed: ${outcome.error}.`, outcome.detail);
    const value = outcome.value;
    if (value.tables === 0) {
      empty.push(emptyDatabaseSentence(part, db.database));
      options.onProgress?.(`dumped ${part}: database ${db.database} holds no tables, not counted as covered`);
      continue;
    }
    const pin = restic ? { restic: await restic.pin(value.restic, part) } : {};
    entries.push({ part, database: db.database, key, bytes: value.bytes, sha256: value.sha256 ?? '', tool: value.tool, rclone: value.rclone, ...pin });
    options.onProgress?.(`dumped ${part}: ${size(value.bytes)}`);
  }
  const mlmd = options.targets.mlmd;
  if (mlmd) {
    options.onProgress?.(`copying ML Metadata (${mlmd.file} on ${mlmd.claim}) with SQLite's online backup${where}`);
    const key = restic ? restic.repository : keys.sqlite(mlmd.file);
    const spec: CopySpec = { kind: 'sqlite-backup', sqlite: mlmd, store: options.s3, key, ...(restic ? { restic: resticCopy(restic, options.backupId, 'mlmd') } : {}) };
    const outcome = await runCopy(kube, spec, 'mlmd', options, MysqlCopySuccess);
    if (!outcome.ok) throw new ControlPlaneError(`Backup of ML Metadata failed: ${outcome.error}.`, outcome.detail);
    const value = outcome.value;
    if (value.tables === 0) {
      empty.push(`control plane not covered: ML Metadata's ${mlmd.file} on ${mlmd.claim} holds no tables yet (mlmd has not started on this storage, or its database is missing).`);
      options.onProgress?.('copied ML Metadata: its database holds no tables, not counted as covered');
    } else {
      const pin = restic ? { restic: await restic.pin(value.restic, 'ML Metadata') } : {};
      entries.push({ part: 'mlmd', database: mlmd.file, key, bytes: value.bytes, sha256: value.sha256 ?? '', tool: value.tool, rclone: value.rclone, ...pin });
      options.onProgress?.(`copied ML Metadata: ${size(value.bytes)}`);
    }
  }
  const storage = options.targets['object-storage'];
  for (const bucket of storage?.buckets ?? []) {
    options.onProgress?.(`copying MinIO bucket ${bucket}${where}`);
    const keyPrefix = restic ? restic.repository : keys.bucket(bucket);
    // restic deduplicates against every earlier snapshot itself: no copy of an earlier backup's mirror
    const copyDestPrefix = restic ? undefined : options.minioCopyFrom?.get(bucket);
    const spec: CopySpec = {
      kind: 'minio-backup', minio: storage!.minio, bucket, store: options.s3, keyPrefix, ...(copyDestPrefix ? { copyDestPrefix } : {}),
      ...(restic ? { restic: resticCopy(restic, options.backupId, `minio-${bucket}`) } : {}),
    };
    const outcome = await runCopy(kube, spec, `minio-${bucket}`, options, MinioCopySuccess);
    if (!outcome.ok) throw new ControlPlaneError(`Backup of MinIO bucket ${bucket} failed: ${outcome.error}.`, outcome.detail);
    const value = outcome.value;
    const pin = restic ? { restic: await restic.pin(value.restic, `MinIO bucket ${bucket}`) } : {};
    entries.push({ part: 'minio', bucket, keyPrefix, objects: value.objects, bytes: value.bytes, listingSha256: value.listingSha256 ?? '', tool: value.tool, ...pin });
    options.onProgress?.(`copied MinIO bucket ${bucket}: ${value.objects} objects, ${value.bytes} bytes${restic ? ', encrypted' : ''}`);
  }
  return { entries, notCovered: [...notCoveredSentences(present(options.targets)), ...empty], empty };
}

/**
 * What a restore needs to read a part from the control-plane repository: the key's password, and the pin in this
 * location's repository. A plain part (an older backup, or one made without a key) needs nothing.
 */
function resticSource(entry: ControlPlaneEntry, options: RestoreControlPlaneOptions, what: string): { restic?: ResticCopy } {
  if (!entry.restic) return {};
  if (options.encryptionKey === undefined || options.encryptionKey.length === 0) {
    throw new ControlPlaneError(`Restore of ${what} failed: it is stored encrypted in the control-plane restic repository, which only the encryption-key the backup was made with opens; set that key and rerun.`, '');
  }
  const repository = controlPlaneRepositoryKey(options.s3);
  if (entry.restic.repository !== repository) {
    throw new ControlPlaneError(`Restore of ${what} failed: the backup pins its snapshot in the restic repository ${entry.restic.repository}, not in this location's ${repository}.`, '');
  }
  const file = entry.part === 'minio' ? {} : { file: resticFileOf(entry.part === 'mlmd' ? 'sqlite' : 'mysql', entry.database) };
  return { restic: { password: controlPlaneResticPassword(options.encryptionKey), snapshot: entry.restic.snapshot, ...file } };
}

export interface RestoreControlPlaneOptions extends ControlPlaneOptions {
  /** restore-state's include-control-plane: false by default, because it overwrites live databases */
  include: boolean;
  /** what the backup's manifest recorded */
  entries: ControlPlaneEntry[];
}

export interface RestoreControlPlaneResult {
  restored: ControlPlaneEntry[];
  /** sentences: parts in the backup that were not restored, and why */
  skipped: string[];
}

/**
 * Brings databases and buckets back before Profiles are restored. Checksums recorded at backup time are checked
 * inside the Job before anything is overwritten.
 */
export async function restoreControlPlane(kube: VolumeKube, options: RestoreControlPlaneOptions): Promise<RestoreControlPlaneResult> {
  if (!options.include) {
    return {
      restored: [],
      skipped: options.entries.length === 0 ? [] : [
        'control plane not restored: it overwrites the live KFP and Katib databases and MinIO, so pass include-control-plane=true after quiescing them.',
      ],
    };
  }
  // Before any write: the workloads that write what is about to be loaded must be stopped.
  const parts = options.entries
    .map((entry) => (entry.part === 'minio' ? (options.targets['object-storage'] ? 'minio' : undefined) : (options.targets[entry.part] ? entry.part : undefined)))
    .filter((part): part is QuietPart => part !== undefined);
  const busy = [...await busyWriters(kube, options.namespace, parts), ...await busyRuns(kube, parts)];
  if (busy.length > 0) throw new ControlPlaneError(notQuietSentence(busy), '');
  // Every part stored in the restic repository must be readable with this run's key before the first one is loaded.
  for (const entry of options.entries) resticSource(entry, options, entry.part === 'minio' ? `MinIO bucket ${entry.bucket}` : entry.part === 'mlmd' ? 'ML Metadata' : entry.part);
  const restored: ControlPlaneEntry[] = [];
  const skipped: string[] = [];
  for (const entry of options.entries) {
    if (entry.part === 'minio') {
      const storage = options.targets['object-storage'];
      if (!storage) {
        skipped.push(`control plane not restored: MinIO bucket ${entry.bucket} is in the backup but object-storage is not related.`);
        continue;
      }
      options.onProgress?.(`restoring MinIO bucket ${entry.bucket}`);
      const spec: CopySpec = {
        kind: 'minio-restore', minio: storage.minio, bucket: entry.bucket, store: options.s3, keyPrefix: entry.keyPrefix,
        ...(entry.listingSha256 ? { expectedSha256: entry.listingSha256 } : {}), ...resticSource(entry, options, `MinIO bucket ${entry.bucket}`),
      };
      const outcome = await runCopy(kube, spec, `minio-${entry.bucket}`, options, MinioCopySuccess);
      if (!outcome.ok) throw new ControlPlaneError(`Restore of MinIO bucket ${entry.bucket} failed: ${outcome.error}.`, outcome.detail);
      restored.push(entry);
      continue;
    }
    if (entry.part === 'mlmd') {
      const mlmd = options.targets.mlmd;
      if (!mlmd) {
        skipped.push('control plane not restored: ML Metadata is in the backup but no mlmd storage was found; deploy mlmd and run the restore again.');
        continue;
      }
      options.onProgress?.(`restoring ML Metadata (${mlmd.file} on ${mlmd.claim})`);
      const spec: CopySpec = {
        kind: 'sqlite-restore', sqlite: mlmd, store: options.s3, key: entry.key, ...(entry.sha256 ? { expectedSha256: entry.sha256 } : {}), ...resticSource(entry, options, 'ML Metadata'),
      };
      const outcome = await runCopy(kube, spec, 'mlmd', options, MysqlCopySuccess);
      if (!outcome.ok) throw new ControlPlaneError(`Restore of ML Metadata failed: ${outcome.error}.`, outcome.detail);
      restored.push(entry);
      continue;
    }
    const db = options.targets[entry.part];
    if (!db) {
      skipped.push(`control plane not restored: ${entry.part} is in the backup but not related; relate ${entry.part} and run the restore again.`);
      continue;
    }
    options.onProgress?.(`restoring ${entry.part} (database ${db.database})`);
    const spec: CopySpec = {
      kind: 'mysql-restore', db, store: options.s3, key: entry.key, ...(entry.sha256 ? { expectedSha256: entry.sha256 } : {}), ...resticSource(entry, options, entry.part),
    };
    const outcome = await runCopy(kube, spec, entry.part, options, MysqlCopySuccess);
    if (!outcome.ok) throw new ControlPlaneError(`Restore of ${entry.part} failed: ${outcome.error}.`, outcome.detail);
    restored.push(entry);
  }
  return { restored, skipped };
}
