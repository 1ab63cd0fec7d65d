// The plain-file mover's rclone remote (the store, src/jobs/rclone-remote.ts) and how rclone behaves in that mover.
import { storeRemote } from '../jobs/rclone-remote.ts';
import type { MoverS3Settings } from './settings.ts';

export const REMOTE_NAME = 'kfustore';

/** The Secret's data: env var name → value. Every value, secret or not, lives here so the spec stays generic. */
export function rcloneRemoteEnv(s3: MoverS3Settings): Record<string, string> {
  const remote = storeRemote(REMOTE_NAME, s3);
  return { ...remote.plain, ...remote.secret };
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
