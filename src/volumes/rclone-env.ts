// rclone reads a whole remote definition from RCLONE_CONFIG_<REMOTE>_<OPTION> variables, so the credentials reach the
// container only as Secret-backed environment variables: never in args, never in the Job spec.
import type { MoverS3Settings } from './settings.ts';

export const REMOTE_NAME = 'kfustore';
const PREFIX = `RCLONE_CONFIG_${REMOTE_NAME.toUpperCase()}_`;

/** Secret key holding the PEM CA chain; mounted as a file because rclone wants a path. */
export const CA_KEY = 'ca.crt';

/** The Secret's data: env var name → value. Every value, secret or not, lives here so the spec stays generic. */
export function rcloneRemoteEnv(s3: MoverS3Settings): Record<string, string> {
  const env: Record<string, string> = {
    [`${PREFIX}TYPE`]: 's3',
    [`${PREFIX}PROVIDER`]: 'Other',
    [`${PREFIX}ENV_AUTH`]: 'false',
    [`${PREFIX}ACCESS_KEY_ID`]: s3.accessKey,
    [`${PREFIX}SECRET_ACCESS_KEY`]: s3.secretKey,
    [`${PREFIX}ENDPOINT`]: s3.endpoint,
    [`${PREFIX}FORCE_PATH_STYLE`]: s3.uriStyle === 'host' ? 'false' : 'true',
    // The bucket exists (the charm checked it); creating it would need rights a backup user should not have.
    [`${PREFIX}NO_CHECK_BUCKET`]: 'true',
  };
  if (s3.region) env[`${PREFIX}REGION`] = s3.region;
  // rclone's s3 backend option storage_class (--s3-storage-class): the class of every object it uploads.
  if (s3.storageClass) env[`${PREFIX}STORAGE_CLASS`] = s3.storageClass;
  return env;
}

/**
 * Behaviour flags, not secrets: plain env in the spec so `kubectl describe` shows how the copy ran.
 * --links keeps symlinks as .rclonelink objects; --fast-list lists the bucket recursively in one go (fewer requests,
 * and consistent on servers whose delimiter listings are quirky).
 */
export function rcloneBehaviourEnv(): Record<string, string> {
  return {
    RCLONE_LINKS: 'true',
    RCLONE_FAST_LIST: 'true',
    // NOTICE: the final stats line the mover reports is logged at this level.
    RCLONE_LOG_LEVEL: 'NOTICE',
    RCLONE_TRANSFERS: '8',
    RCLONE_CHECKERS: '16',
    RCLONE_RETRIES: '3',
    RCLONE_CACHE_DIR: '/tmp/rclone-cache',
    HOME: '/tmp',
  };
}
