// What the charm and the workload container's service agree on: the container, the service and its layer, where the
// charm pushes the bundle and the settings, and the settings file's shape. Neither side imports the other
// (.dependency-cruiser.cjs); both import this.
import { z } from 'zod';

/** metadata.yaml `containers:` */
export const WORKLOAD_CONTAINER = 'upgrader';
export const SERVICE_NAME = 'kubeflow-upgrader';
export const LAYER_LABEL = 'kubeflow-upgrader';
/** where the service serves /metrics and /status (prom-client's examples use 9464 too; no Kubeflow service takes it) */
export const METRICS_PORT = 9464;
/** the charm container reaches each workload's Pebble here (canonical/operator ops/model.py, Container) */
export const socketOf = (container: string) => `/charm/containers/${container}/pebble.socket`;
/** the folder in the workload container that holds the bundle and the settings */
export const DEFAULT_WORKLOAD_ROOT = '/srv/kubeflow-upgrader';

export const workloadPaths = (root: string) => ({
  /** the service's bundle, as the charm carries it in lib/service.mjs */
  bundle: `${root}/service.mjs`,
  /** mode 0600: S3 credentials and the encryption key */
  settings: `${root}/settings.json`,
  /** backups asked for by backup-state wait=false, one file each, named by the backup's id */
  requests: `${root}/requests`,
  /** the last restore-state's outcome, which the charm pushes and the service serves as metrics (no secret in it) */
  lastRestore: `${root}/last-restore.json`,
});

/** How the last restore-state (not a dry run) ended: the charm runs restores, the service's metrics say how they went. */
export const LastRestoreSchema = z.object({
  /** when it ended */
  at: z.string().datetime(),
  result: z.enum(['succeeded', 'failed']),
  durationSeconds: z.number().min(0),
});
export type LastRestore = z.output<typeof LastRestoreSchema>;

/** A backup the action hands to the service (backup-state wait=false). */
export const BackupHandoffSchema = z.object({
  backupId: z.string().regex(/^kf-\d{8}-\d{6}-[0-9a-f]{6}$/),
  namespaces: z.array(z.string()),
  includeVolumes: z.boolean(),
  /** backup-state's include-control-plane; absent in a request from a charm before the service copied the control plane */
  includeControlPlane: z.boolean().default(false),
  description: z.string(),
});
export type BackupHandoff = z.output<typeof BackupHandoffSchema>;

/** The service's layer: the same for every setting, so that new settings and a replan restart nothing. */
export function serviceLayer(root: string): string {
  const paths = workloadPaths(root);
  return [
    'summary: kubeflow-upgrader scheduled backups',
    'description: Backs up Kubeflow on backup-schedule, applies backup-retention after each backup, and serves metrics.',
    'services:',
    `  ${SERVICE_NAME}:`,
    '    override: replace',
    '    summary: scheduled backups and their metrics',
    // the secrets are in the settings file (mode 0600), never here: `pebble plan` prints the environment
    `    command: node ${paths.bundle} ${paths.settings}`,
    '    startup: enabled',
    '    on-failure: restart',
    '    backoff-delay: 2s',
    '',
  ].join('\n');
}

const S3SettingsSchema = z.object({
  accessKey: z.string(),
  secretKey: z.string(),
  bucket: z.string(),
  path: z.string(),
  endpoint: z.string().optional(),
  region: z.string(),
  uriStyle: z.enum(['path', 'host']),
  tlsCaChain: z.array(z.string()).optional(),
  storageClass: z.string().optional(),
  /** backup-immutability as the charm parsed it (src/store/immutability.ts) */
  immutability: z.object({ mode: z.enum(['COMPLIANCE', 'GOVERNANCE']), seconds: z.number().positive(), text: z.string() }).optional(),
  track: z.union([z.literal(1), z.literal(2)]).optional(),
});

/** A related MySQL database as the charm read it from mysql-k8s (src/controlplane/relations.ts `MysqlEndpoint`). */
const MysqlTargetSchema = z.object({
  host: z.string(),
  port: z.number().int(),
  database: z.string(),
  username: z.string(),
  password: z.string(),
  version: z.string().optional(),
});

/**
 * The control plane as the charm's hooks see it (src/charm/control-plane.ts `readControlPlane`): the scheduled backup
 * copies what backup-state copies, and says "not covered" for the same. The databases' passwords and MinIO's secret
 * key are secret: they live here, in the mode-0600 file, and nowhere in the layer.
 */
const ControlPlaneSettingsSchema = z.object({
  targets: z.object({
    'kfp-db': MysqlTargetSchema.optional(),
    'katib-db': MysqlTargetSchema.optional(),
    'object-storage': z.object({
      minio: z.object({ endpoint: z.string(), accessKey: z.string(), secretKey: z.string(), service: z.string(), namespace: z.string() }),
      buckets: z.array(z.string()),
    }).optional(),
  }),
  related: z.object({ 'kfp-db': z.boolean(), 'katib-db': z.boolean(), 'object-storage': z.boolean() }),
  /** one sentence per related endpoint that cannot be used yet */
  unusable: z.array(z.string()),
  /** the copy Jobs' images (control-plane-*-image, and the restic one of the encrypted copies) */
  images: z.object({ mysql: z.string(), rclone: z.string(), sqlite: z.string(), restic: z.string() }),
});
export type ControlPlaneSettings = z.output<typeof ControlPlaneSettingsSchema>;

/** The settings file: what a scheduled run needs, decided by the charm from its config and relations. */
export const ServiceSettingsSchema = z.object({
  version: z.literal(1),
  /** a cron expression the charm checked (src/schedule/cron.ts); absent: no scheduled backups */
  schedule: z.string().optional(),
  /** backup-retention: complete backups kept after each scheduled one (0 keeps all) */
  retention: z.number().int().min(0),
  /** absent while s3-integrator has given nothing usable: the service then only serves its metrics */
  s3: S3SettingsSchema.optional(),
  encryptionKey: z.string().optional(),
  /** the model's namespace: where the restic gateway and key Jobs run */
  modelNamespace: z.string(),
  /** the unit, `kubeflow-upgrader/0`: its backups' run records name `<unit> service` as their holder */
  unit: z.string(),
  /** the backup request's fields from the charm's config (src/charm/backup-steps.ts) */
  backup: z.object({
    profileNamespaceSelector: z.string(),
    includeResources: z.array(z.string()),
    excludeResources: z.array(z.string()),
    protectedCrdGroups: z.array(z.string()),
    toolVersion: z.string(),
  }),
  movers: z.object({
    image: z.string(),
    concurrency: z.number().int().min(1),
    startTimeoutSeconds: z.number().int().min(1),
    resources: z.string(),
    engine: z.enum(['rclone', 'restic']),
    gatewayImage: z.string(),
    /** volume-snapshot-class ('' each driver's default); absent in settings a charm pushed before snapshots were read */
    snapshotClass: z.string().default(''),
  }),
  /** what a scheduled backup copies of the control plane; absent (a charm before it pushed one): no control-plane step */
  controlPlane: ControlPlaneSettingsSchema.optional(),
  /** a kubeconfig file the charm was given (tests, the demo); absent: the pod's service account */
  kubeconfig: z.string().optional(),
  /** how long a backup's run record holds without renewal (the store's default when absent) */
  runLeaseMs: z.number().int().min(3).optional(),
});

export type ServiceSettings = z.output<typeof ServiceSettingsSchema>;

/** What the service tells the charm on GET /status, for the unit status. */
export interface ServiceStatus {
  schedule?: string;
  nextRun?: string;
  running?: { started: string };
  last?: { at: string; result: 'succeeded' | 'failed' | 'skipped'; backupId?: string; sentence?: string };
}
