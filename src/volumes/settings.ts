// What the mover needs to know about the object store and how Jobs are shaped. The S3 fields mirror the s3-integrator
// relation (src/store/settings.ts), so an S3Settings value can be passed as it is.
import { normalizePrefix } from '../store/layout.ts';
import type { S3Settings } from '../store/settings.ts';
import { effectiveEndpoint } from '../store/addressing.ts';

export interface MoverS3Settings {
  endpoint: string;
  bucket: string;
  /** the location's path prefix inside the bucket */
  path?: string;
  region?: string;
  accessKey: string;
  secretKey: string;
  /** 'path' (default) or 'host' (virtual-hosted buckets) */
  uriStyle?: string;
  /** PEM CA chain for the endpoint's TLS certificate */
  tlsCaChain?: string;
  /** storage class of the objects rclone uploads (s3-integrator's storage-class) */
  storageClass?: string;
}

/**
 * The mover's view of the backup store. The Jobs run inside the cluster, so the endpoint must be reachable from there;
 * without one (AWS itself) the regional AWS endpoint is used.
 */
export function moverS3Settings(settings: S3Settings): MoverS3Settings {
  return {
    endpoint: effectiveEndpoint(settings),
    bucket: settings.bucket,
    path: settings.path,
    region: settings.region,
    accessKey: settings.accessKey,
    secretKey: settings.secretKey,
    uriStyle: settings.uriStyle,
    ...(settings.tlsCaChain?.length ? { tlsCaChain: settings.tlsCaChain.join('\n') } : {}),
    ...(settings.storageClass ? { storageClass: settings.storageClass } : {}),
  };
}

export const DEFAULT_MOVER_CONCURRENCY = 2;
export { DEFAULT_JOB_DEADLINE_SECONDS, DEFAULT_START_TIMEOUT_SECONDS, DEFAULT_JOB_TTL_SECONDS } from '../jobs/template.ts';
/** A running mover's progress is read, and reported when it changed, this often. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 30_000;

/** Where one PVC's files live in the bucket, as rclone names it: `bucket/prefix/backups/<id>/volumes/<ns>/<pvc>`. */
export function remotePath(s3: MoverS3Settings, relativeKey: string): string {
  const prefix = normalizePrefix(s3.path);
  const key = relativeKey.replace(/\/+$/, '');
  return [s3.bucket, prefix, key].filter((part) => part !== '').join('/');
}
