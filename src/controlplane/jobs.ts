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
  ENV, MINIO_BACKUP_SCRIPT, MINIO_RESTORE_SCRIPT, MYSQL_DOWNLOAD_SCRIPT, MYSQL_DUMP_SCRIPT, MYSQL_LOAD_SCRIPT, MYSQL_UPLOAD_SCRIPT,
  SQLITE_BACKUP_SCRIPT, SQLITE_RESTORE_SCRIPT,
} from './scripts.ts';

/** Official images, pinned by tag: rclone (Alpine, busybox) and MySQL (Oracle Linux; mysqldump and mysql 8.4). */
export const DEFAULT_RCLONE_IMAGE = 'docker.io/rclone/rclone:1.68.2';
export const DEFAULT_MYSQL_IMAGE = 'docker.io/library/mysql:8.4';
/** Official Python image (Debian slim): Python's sqlite3 module for SQLite's online backup, sh, gzip, coreutils. */
export const DEFAULT_SQLITE_IMAGE = 'docker.io/library/python:3.12-slim';

export interface CopyImages {
  rclone: string;
  mysql: string;
  sqlite: string;
}

export type CopyKind = 'mysql-backup' | 'mysql-restore' | 'minio-backup' | 'minio-restore' | 'sqlite-backup' | 'sqlite-restore';

type Tool = 'rclone' | 'mysql' | 'sqlite';
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

export function stepsOf(kind: CopyKind): readonly Step[] {
  return STEPS[kind];
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

/** One copy: what it moves, between which ends, with which credentials. `key` is the full object key (prefix included). */
export type CopySpec =
  | { kind: 'mysql-backup' | 'mysql-restore'; db: MysqlEndpoint; store: S3Settings; key: string; expectedSha256?: string }
  | { kind: 'sqlite-backup' | 'sqlite-restore'; sqlite: SqliteOnClaim; store: S3Settings; key: string; expectedSha256?: string }
  | {
    kind: 'minio-backup' | 'minio-restore'; minio: MinioEndpoint; bucket: string; store: S3Settings; keyPrefix: string; expectedSha256?: string;
    /** backup: full key prefix of this bucket's copy in an earlier backup, whose equal objects are copied, not uploaded */
    copyDestPrefix?: string;
  };

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
  // Each container gets only what its tool needs: rclone the bucket credentials, the MySQL client the database's.
  const mine = (tool: Tool, key: string) => (tool === 'rclone') === (key.startsWith('RCLONE_') || key === ENV.storePath || key === ENV.storeDir || key === ENV.minioBucket || key === ENV.storeCopyDest);
  const steps = STEPS[spec.kind];
  const shared = steps.length > 1;
  const sqliteUser = 'sqlite' in spec ? numericOwner(spec.sqlite.owner) : undefined;
  const containers: Container[] = steps.map((step) => {
    const mounts = [
      ...(shared ? [{ name: TRANSFER_VOLUME, mountPath: TRANSFER_PATH }] : []),
      ...('sqlite' in spec && step.tool === 'sqlite' ? [{ name: SQLITE_VOLUME, mountPath: SQLITE_MOUNT }] : []),
    ];
    return {
      name: step.name,
      image: options.images[step.tool],
      command: ['sh', '-c', step.script],
      env: [
        // EXPECTED_SHA256 too: the MinIO copy is one rclone container, and it checks what it downloaded itself
        ...Object.entries(environment.plain).filter(([key]) => mine(step.tool, key) || key === ENV.storePath || key === ENV.dbName || key === ENV.expectedSha256).map(([envName, value]) => ({ name: envName, value })),
        ...(shared ? [{ name: ENV.transferDir, value: TRANSFER_PATH }] : []),
        ...Object.keys(environment.secret).filter((key) => mine(step.tool, key)).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name, key } } })),
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
    ...(caChain ? { storeCa: { secretName: name, containers: steps.filter((step) => step.tool === 'rclone').map((step) => step.name) } } : {}),
    ...('sqlite' in spec && spec.sqlite.nodeName ? { placement: { nodeName: spec.sqlite.nodeName } } : {}),
  });
  return { secret, job };
}
