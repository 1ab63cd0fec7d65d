// Job and per-run Secret specs for the control-plane copies. Credentials live only in the Secret and reach the
// container as environment variables (secretKeyRef); the Job spec itself holds names, paths and the script.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';
import type { S3Settings } from '../store/settings.ts';
import { effectiveEndpoint } from '../store/addressing.ts';
import { storeRemote as storeRemoteEnv } from '../jobs/rclone-remote.ts';
import { buildHardenedJob, buildRunSecret, CONTROL_PLANE_IDENTITY, DEFAULT_JOB_DEADLINE_SECONDS, type Container } from '../jobs/template.ts';
import type { MinioEndpoint, MysqlEndpoint } from './relations.ts';
import {
  ENV, MINIO_BACKUP_SCRIPT, MINIO_RESTORE_SCRIPT, MINIO_RESTORE_STAGED_SCRIPT, MINIO_STAGE_SCRIPT, MYSQL_DOWNLOAD_SCRIPT, MYSQL_DUMP_SCRIPT, MYSQL_LOAD_SCRIPT,
  MYSQL_UPLOAD_SCRIPT, RESTIC_DIR_BACKUP_SCRIPT, RESTIC_DIR_RESTORE_SCRIPT, RESTIC_FILE_BACKUP_SCRIPT, RESTIC_FILE_RESTORE_SCRIPT, SQLITE_BACKUP_SCRIPT,
  SQLITE_RESTORE_SCRIPT,
} from './scripts.ts';
import { moverS3Settings } from '../volumes/settings.ts';
import { resticRepositoryKey, resticRepositoryUrl } from '../volumes/restic/job.ts';
import { RCLONE_IMAGE, RESTIC_IMAGE } from '../volumes/engine.ts';
import { CONTROL_PLANE_REPOSITORY } from './restic-password.ts';

/** Official images, pinned by tag: rclone (the volume engines' pinned one, ../volumes/engine.ts) and MySQL (Oracle Linux; mysqldump and mysql 8.4). */
export const DEFAULT_RCLONE_IMAGE = RCLONE_IMAGE;
export const DEFAULT_MYSQL_IMAGE = 'docker.io/library/mysql:8.4';
/** Official Python image (Debian slim): Python's sqlite3 module for SQLite's online backup, sh, gzip, coreutils. */
export const DEFAULT_SQLITE_IMAGE = 'docker.io/library/python:3.12-slim';
/** With `encryption-key`: the restic image the volume movers run (restic 0.14, repository format 2). */
export const DEFAULT_RESTIC_IMAGE = RESTIC_IMAGE;

export interface CopyImages {
  rclone: string;
  mysql: string;
  sqlite: string;
  /** the copies into and out of the control-plane restic repository; the pinned default when absent */
  restic?: string;
}

export type CopyKind = 'mysql-backup' | 'mysql-restore' | 'minio-backup' | 'minio-restore' | 'sqlite-backup' | 'sqlite-restore';

type Tool = 'rclone' | 'mysql' | 'sqlite' | 'restic';
/** The image of a tool CopyImages may leave unset (restic: added after the others, so older callers do not name it). */
const PINNED_WHEN_UNSET: Readonly<Record<Tool, string>> = { rclone: '', mysql: '', sqlite: '', restic: DEFAULT_RESTIC_IMAGE };
interface Step { name: string; tool: Tool; script: string }

/**
 * The containers of each copy, in order: all but the last run as init containers (one after another, each only if
 * the one before succeeded) and the last is the Pod's container, whose termination message is the outcome.
 */
const STEPS: Record<CopyKind, Step[]> = {
  'mysql-backup': [{ name: 'dump', tool: 'mysql', script: MYSQL_DUMP_SCRIPT }, { name: 'upload', tool: 'rclone', script: MYSQL_UPLOAD_SCRIPT }],
  'mysql-restore': [{ name: 'download', tool: 'rclone', script: MYSQL_DOWNLOAD_SCRIPT }, { name: 'load', tool: 'mysql', script: MYSQL_LOAD_SCRIPT }],
  'minio-backup': [{ name: 'copy', tool: 'rclone', script: MINIO_BACKUP_SCRIPT }],
  'minio-restore': [{ name: 'copy', tool: 'rclone', script: MINIO_RESTORE_SCRIPT }],
  // The upload and download halves are the database copies' own: the SQLite step leaves the same files behind.
  'sqlite-backup': [{ name: 'backup', tool: 'sqlite', script: SQLITE_BACKUP_SCRIPT }, { name: 'upload', tool: 'rclone', script: MYSQL_UPLOAD_SCRIPT }],
  'sqlite-restore': [{ name: 'download', tool: 'rclone', script: MYSQL_DOWNLOAD_SCRIPT }, { name: 'restore', tool: 'sqlite', script: SQLITE_RESTORE_SCRIPT }],
};

/**
 * The same copies with `encryption-key`, into and out of the control-plane restic repository: the dump, SQLite and
 * MySQL load containers are the plain copies' own; restic takes the place of the rclone upload and download, and a
 * MinIO bucket is staged in the transfer volume by rclone on its way in and out (scripts.ts says why).
 */
const RESTIC_STEPS: Record<CopyKind, Step[]> = {
  'mysql-backup': [{ name: 'dump', tool: 'mysql', script: MYSQL_DUMP_SCRIPT }, { name: 'store', tool: 'restic', script: RESTIC_FILE_BACKUP_SCRIPT }],
  'mysql-restore': [{ name: 'fetch', tool: 'restic', script: RESTIC_FILE_RESTORE_SCRIPT }, { name: 'load', tool: 'mysql', script: MYSQL_LOAD_SCRIPT }],
  'minio-backup': [{ name: 'stage', tool: 'rclone', script: MINIO_STAGE_SCRIPT }, { name: 'store', tool: 'restic', script: RESTIC_DIR_BACKUP_SCRIPT }],
  'minio-restore': [{ name: 'fetch', tool: 'restic', script: RESTIC_DIR_RESTORE_SCRIPT }, { name: 'copy', tool: 'rclone', script: MINIO_RESTORE_STAGED_SCRIPT }],
  'sqlite-backup': [{ name: 'backup', tool: 'sqlite', script: SQLITE_BACKUP_SCRIPT }, { name: 'store', tool: 'restic', script: RESTIC_FILE_BACKUP_SCRIPT }],
  'sqlite-restore': [{ name: 'fetch', tool: 'restic', script: RESTIC_FILE_RESTORE_SCRIPT }, { name: 'restore', tool: 'sqlite', script: SQLITE_RESTORE_SCRIPT }],
};

export function stepsOf(kind: CopyKind, restic = false): readonly Step[] {
  return (restic ? RESTIC_STEPS : STEPS)[kind];
}

// MariaDB/MySQL option files: a double-quoted value understands \\ \" \n \r \t escapes, so any password survives.
function optionValue(value: string): string {
  const escaped = value
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\t/g, '\\t');
  return `"${escaped}"`;
}

/** A `[client]` option file; TCP is forced so `localhost` never means a socket inside the Job's container. */
export function clientOptionsFile(db: Pick<MysqlEndpoint, 'host' | 'port' | 'username' | 'password'>): string {
  return [
    '[client]',
    `host=${optionValue(db.host)}`,
    `port=${db.port}`,
    'protocol=TCP',
    `user=${optionValue(db.username)}`,
    `password=${optionValue(db.password)}`,
    '',
  ].join('\n');
}

/**
 * MinIO as rclone's remote `name` (RCLONE_CONFIG_<NAME>_…): the two keys go to the Secret, the rest is plain. (The
 * store's remote is every Job's, src/jobs/rclone-remote.ts.)
 */
function rcloneRemote(name: 'MINIO', s3: { accessKey: string; secretKey: string; endpoint?: string; region?: string }, extra: Record<string, string>) {
  const at = `RCLONE_CONFIG_${name}_`;
  return {
    secret: { [`${at}ACCESS_KEY_ID`]: s3.accessKey, [`${at}SECRET_ACCESS_KEY`]: s3.secretKey },
    plain: {
      // One recursive listing instead of one request per folder: fewer calls on a big bucket, and the only listing
      // mode some S3 servers (s3rver among them) answer completely.
      RCLONE_FAST_LIST: 'true',
      [`${at}TYPE`]: 's3',
      [`${at}PROVIDER`]: 'Other',
      [`${at}ENV_AUTH`]: 'false',
      ...(s3.endpoint ? { [`${at}ENDPOINT`]: s3.endpoint } : {}),
      ...(s3.region ? { [`${at}REGION`]: s3.region } : {}),
      ...extra,
    },
  };
}

function storeRemote(store: S3Settings) {
  // The same endpoint and addressing as every other client (store/addressing.ts): AWS's regional endpoint when
  // s3-integrator named AWS, path or host style as resolved there; the storage class our own uploads get.
  const remote = storeRemoteEnv('store', { ...store, endpoint: effectiveEndpoint(store) });
  // One recursive listing instead of one request per folder: fewer calls on a big bucket, and the only listing mode
  // some S3 servers (s3rver among them) answer completely.
  return { secret: remote.secret, plain: { RCLONE_FAST_LIST: 'true', ...remote.plain } };
}

/** Bucket-qualified rclone path under the store remote. */
function storePath(store: S3Settings, key: string): string {
  return `${store.bucket}/${key}`;
}

/**
 * With `encryption-key`: the copy goes into (backup) or comes out of (restore) the control-plane restic repository,
 * not plain files under `key`. The password reaches only the restic container, through the run's Secret.
 */
export interface ResticCopy {
  password: string;
  /** backup: the snapshot's tags */
  tags?: string[];
  /** restore: the full id the authenticated manifest pins */
  snapshot?: string;
  /** restore of a database: its file in the snapshot, as the backup named it (the target's database may be named otherwise) */
  file?: string;
}

/**
 * One copy: what it moves, between which ends, with which credentials. `key` is the full object key (prefix included)
 * of a plain copy; with `restic`, `key` and `keyPrefix` name the repository and `expectedSha256` is that of the
 * database copy's uncompressed bytes.
 */
export type CopySpec =
  | { kind: 'mysql-backup' | 'mysql-restore'; db: MysqlEndpoint; store: S3Settings; key: string; expectedSha256?: string; restic?: ResticCopy }
  | { kind: 'sqlite-backup' | 'sqlite-restore'; sqlite: SqliteOnClaim; store: S3Settings; key: string; expectedSha256?: string; restic?: ResticCopy }
  | {
    kind: 'minio-backup' | 'minio-restore'; minio: MinioEndpoint; bucket: string; store: S3Settings; keyPrefix: string; expectedSha256?: string;
    /** backup: full key prefix of this bucket's copy in an earlier backup, whose equal objects are copied, not uploaded */
    copyDestPrefix?: string;
    restic?: ResticCopy;
  };

/** The control-plane repository's key in the bucket (`<path>/restic/_control-plane`), relative to the bucket's root. */
export function controlPlaneRepositoryKey(store: S3Settings): string {
  return resticRepositoryKey(moverS3Settings(store), CONTROL_PLANE_REPOSITORY);
}

/** A database copy's one file in its snapshot, by the name of the database it was dumped from (ML Metadata's: its file's). */
export function resticFileOf(part: 'mysql' | 'sqlite', database: string): string {
  return part === 'mysql' ? `${database}.sql` : database;
}

/** What the restic container gets: the bucket's credentials and the password (Secret), the repository and its options. */
function resticEnvironment(spec: CopySpec, restic: ResticCopy): CopyEnvironment {
  const mover = moverS3Settings(spec.store);
  const backup = spec.kind.endsWith('-backup');
  return {
    secret: { [ENV.awsAccessKey]: mover.accessKey, [ENV.awsSecretKey]: mover.secretKey, [ENV.resticPassword]: restic.password },
    plain: {
      [ENV.resticRepository]: resticRepositoryUrl(mover, CONTROL_PLANE_REPOSITORY),
      [ENV.resticBucketLookup]: mover.uriStyle === 'host' ? 'dns' : 'path',
      ...(mover.region ? { [ENV.awsRegion]: mover.region } : {}),
      ...(mover.storageClass ? { [ENV.resticStorageClass]: mover.storageClass } : {}),
      ...(backup && restic.tags ? { [ENV.resticTags]: restic.tags.join(',') } : {}),
      ...(!backup && restic.snapshot ? { [ENV.resticSnapshot]: restic.snapshot } : {}),
      ...('db' in spec ? { [ENV.resticFile]: restic.file ?? resticFileOf('mysql', spec.db.database) } : {}),
      ...('sqlite' in spec ? { [ENV.resticFile]: restic.file ?? resticFileOf('sqlite', spec.sqlite.file) } : {}),
      ...(!backup && !('bucket' in spec) && spec.expectedSha256 ? { [ENV.plainSha256]: spec.expectedSha256 } : {}),
    },
  };
}

export interface CopyEnvironment {
  /** what goes into the per-run Secret */
  secret: Record<string, string>;
  /** plain, non-secret environment of the Job */
  plain: Record<string, string>;
}

/** An SQLite file on a PVC: the Job mounts the claim at SQLITE_MOUNT (on the node of the Pod using it, if any). */
export interface SqliteOnClaim {
  claim: string;
  /** path of the file inside the claim */
  file: string;
  /** the node of a running Pod that mounts the claim: a ReadWriteOnce volume attaches to one node at a time */
  nodeName?: string;
  /** `uid:gid` the database's owner runs as, when its Pod says so: a restored file without a live one gets it */
  owner?: string;
}

const SQLITE_VOLUME = 'sqlite-data';
const SQLITE_MOUNT = '/sqlite-data';

export function copyEnvironment(spec: CopySpec): CopyEnvironment {
  if (!spec.restic) return plainCopyEnvironment(spec);
  // A database copy's expected sha256 is its uncompressed bytes', which the restic container checks (not the loader).
  const plain = plainCopyEnvironment('bucket' in spec ? spec : { ...spec, expectedSha256: undefined });
  const restic = resticEnvironment(spec, spec.restic);
  // No container writes the backup bucket but restic: the store's rclone remote is left out, its keys above all.
  const withoutStore = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('RCLONE_CONFIG_STORE_')));
  return { secret: { ...withoutStore(plain.secret), ...restic.secret }, plain: { ...withoutStore(plain.plain), ...restic.plain } };
}

function plainCopyEnvironment(spec: CopySpec): CopyEnvironment {
  const store = storeRemote(spec.store);
  const expected: Record<string, string> = spec.expectedSha256 ? { [ENV.expectedSha256]: spec.expectedSha256 } : {};
  if ('sqlite' in spec) {
    return {
      secret: store.secret,
      plain: {
        ...store.plain, [ENV.dbName]: spec.sqlite.file, [ENV.storePath]: storePath(spec.store, spec.key),
        [ENV.sqliteFile]: `${SQLITE_MOUNT}/${spec.sqlite.file}`, ...(spec.sqlite.owner ? { [ENV.sqliteOwner]: spec.sqlite.owner } : {}), ...expected,
      },
    };
  }
  if ('db' in spec) {
    return {
      secret: { ...store.secret, [ENV.dbClientOptions]: clientOptionsFile(spec.db) },
      plain: { ...store.plain, [ENV.dbName]: spec.db.database, [ENV.storePath]: storePath(spec.store, spec.key), ...expected },
    };
  }
  const minio = rcloneRemote('MINIO', { ...spec.minio, region: 'us-east-1' }, { RCLONE_CONFIG_MINIO_FORCE_PATH_STYLE: 'true' });
  return {
    secret: { ...store.secret, ...minio.secret },
    plain: {
      ...store.plain,
      ...minio.plain,
      [ENV.minioBucket]: spec.bucket,
      [ENV.storeDir]: storePath(spec.store, spec.keyPrefix.replace(/\/+$/, '')),
      ...(spec.kind === 'minio-backup' && spec.copyDestPrefix ? { [ENV.storeCopyDest]: storePath(spec.store, spec.copyDestPrefix.replace(/\/+$/, '')) } : {}),
      ...expected,
    },
  };
}

export interface CopyJob {
  secret: KubeObject;
  job: KubeObject;
}

export interface CopyJobOptions {
  namespace: string;
  /** backup id: names and labels the run */
  backupId: string;
  /** short, unique within the run: `kfp-db`, `minio-mlpipeline` */
  part: string;
  images: CopyImages;
  /** seconds before Kubernetes kills the Job */
  activeDeadlineSeconds?: number;
  labels?: Record<string, string>;
}

/** Key of the per-run Secret holding the store's PEM CA chain (the hardened Job mounts it for rclone). */
export { STORE_CA_KEY } from '../jobs/template.ts';
const TRANSFER_VOLUME = 'transfer';
const TRANSFER_PATH = '/transfer';

/** A DNS-1123 name no longer than 63, unique per backup and part. */
export function copyJobName(kind: CopyKind, backupId: string, part: string): string {
  const base = `kfu-${kind}-${part}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  const digest = createHash('sha256').update(`${backupId}/${kind}/${part}`).digest('hex').slice(0, 8);
  return `${base.slice(0, 63 - 9).replace(/-+$/, '')}-${digest}`;
}

/**
 * `uid:gid` as numbers. The SQLite step runs as the user ML Metadata runs as: every capability is dropped, so only
 * that user can read a database it keeps private and leave a restored file owned as mlmd needs it (a chown to another
 * user needs CAP_CHOWN). Without a known owner it runs as the template's user, and the script's chown names the failure.
 */
function numericOwner(owner: string | undefined): { uid: number; gid: number } | undefined {
  const match = /^(\d+):(\d+)$/.exec(owner ?? '');
  return match ? { uid: Number(match[1]), gid: Number(match[2]) } : undefined;
}

/** The copy's containers, in the hardened Job template (src/jobs/template.ts). */
export function buildCopyJob(spec: CopySpec, options: CopyJobOptions): CopyJob {
  const name = copyJobName(spec.kind, options.backupId, options.part);
  const labels = { 'kubeflow-upgrader/copy': spec.kind, ...options.labels };
  const environment = copyEnvironment(spec);
  // The store's private CA is kept out of `environment.secret`, which becomes env vars: the template mounts it as a file.
  const caChain = spec.store.tlsCaChain?.length ? spec.store.tlsCaChain.join('\n') : undefined;
  const secret = buildRunSecret({ name, namespace: options.namespace, backupId: options.backupId, labels, data: environment.secret, caChain });
  // Each container gets only what its tool needs: rclone the bucket's (or MinIO's) credentials, restic the bucket's and
  // the repository's password, the MySQL client (or Python's SQLite) the database's. A secret always has an owner.
  const ownerOf = (key: string): Tool | 'database' | undefined => {
    if (key.startsWith('RCLONE_') || key === ENV.storeDir || key === ENV.storeCopyDest) return 'rclone';
    if (key.startsWith('CP_RESTIC_') || key.startsWith('AWS_') || key === ENV.resticRepository || key === ENV.resticPassword || key === ENV.plainSha256) return 'restic';
    if (key === ENV.dbClientOptions || key === ENV.sqliteFile || key === ENV.sqliteOwner) return 'database';
    return undefined; // STORE_PATH, DB_NAME, MINIO_BUCKET, EXPECTED_SHA256: names and digests, for every container
  };
  const owns = (tool: Tool, key: string) => {
    const owner = ownerOf(key);
    return owner === tool || (owner === 'database' && (tool === 'mysql' || tool === 'sqlite'));
  };
  const steps = stepsOf(spec.kind, spec.restic !== undefined);
  const shared = steps.length > 1;
  const sqliteUser = 'sqlite' in spec ? numericOwner(spec.sqlite.owner) : undefined;
  const containers: Container[] = steps.map((step) => {
    const mounts = [
      ...(shared ? [{ name: TRANSFER_VOLUME, mountPath: TRANSFER_PATH }] : []),
      ...('sqlite' in spec && step.tool === 'sqlite' ? [{ name: SQLITE_VOLUME, mountPath: SQLITE_MOUNT }] : []),
    ];
    return {
      name: step.name,
      image: options.images[step.tool] || PINNED_WHEN_UNSET[step.tool],
      command: ['sh', '-c', step.script],
      env: [
        // EXPECTED_SHA256 too: the MinIO copy is one rclone container, and it checks what it downloaded itself
        ...Object.entries(environment.plain).filter(([key]) => owns(step.tool, key) || ownerOf(key) === undefined).map(([envName, value]) => ({ name: envName, value })),
        ...(shared ? [{ name: ENV.transferDir, value: TRANSFER_PATH }] : []),
        ...Object.keys(environment.secret).filter((key) => owns(step.tool, key)).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name, key } } })),
      ],
      ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
      ...(step.tool === 'sqlite' && sqliteUser ? { securityContext: { runAsUser: sqliteUser.uid, runAsGroup: sqliteUser.gid } } : {}),
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    };
  });
  const job = buildHardenedJob({
    name,
    namespace: options.namespace,
    backupId: options.backupId,
    labels,
    // No fsGroup where ML Metadata's claim is mounted: the kubelet would give the live database's files the Job's group
    // on mount (kubernetes pkg/volume/volume_linux.go SetVolumeOwnership).
    identity: 'sqlite' in spec ? { runAsUser: CONTROL_PLANE_IDENTITY.runAsUser, runAsGroup: CONTROL_PLANE_IDENTITY.runAsGroup } : CONTROL_PLANE_IDENTITY,
    activeDeadlineSeconds: options.activeDeadlineSeconds ?? DEFAULT_JOB_DEADLINE_SECONDS,
    initContainers: containers.slice(0, -1),
    containers: containers.slice(-1),
    volumes: [
      ...(shared ? [{ name: TRANSFER_VOLUME, emptyDir: {} }] : []),
      ...('sqlite' in spec ? [{ name: SQLITE_VOLUME, persistentVolumeClaim: { claimName: spec.sqlite.claim } }] : []),
    ],
    ...(caChain ? { storeCa: { secretName: name, containers: steps.filter((step) => step.tool === (spec.restic ? 'restic' : 'rclone')).map((step) => step.name) } } : {}),
    ...('sqlite' in spec && spec.sqlite.nodeName ? { placement: { nodeName: spec.sqlite.nodeName } } : {}),
  });
  return { secret, job };
}
