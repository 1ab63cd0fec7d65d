// Where the demo's backups go, apart from the demo's processes so that a fast test can read it (tests/demo/s3.test.ts).
import { track1Data } from '../tests/support/juju/scenarios.ts';

/** the prefix backups go under: the charm's `s3-path` default, since the demo's s3-integrator sends no path */
export const S3_PREFIX = 'kubeflow-upgrader';

/**
 * What the demo's s3-integrator (track 1) answers: s3-integrator as deployed with its defaults, which has no `path` of
 * its own (canonical/s3-integrator config.yaml: `path` defaults to ''), so the charm's `s3-path` names the prefix.
 * The tests' usual answer sets `path: backups`, which in Velero's layout (`<prefix>/backups/<id>/`) put every backup
 * the demo printed under `backups/backups/`.
 */
export function demoS3Databag(s3: { endpoint: string; accessKeyId: string; secretAccessKey: string }, bucket: string): Record<string, string> {
  return track1Data(s3, bucket, { path: '' });
}
