// Facts other parts of the charm add to the status (the guard's state, the last backup's age, uncovered control
// plane), collected once per dispatch after the hook's work. Each contributor only looks (it changes nothing in the
// cluster or the relations), is cheap, and must not throw: a failure to find out becomes a note, not a failed hook.
import type { CharmRuntime } from './runtime.ts';
import type { StatusNote } from './status.ts';
import { guardNotes } from './guard.ts';
import { lastBackupNotes } from './last-backup.ts';
import { controlPlaneNotes } from './control-plane.ts';
import { s3BucketNotes, s3StorageClassNotes } from './s3.ts';
import { resticKeyNotes } from './restic-key.ts';
import { scheduleNotes } from './workload.ts';
import { immutabilityNotes } from './immutability.ts';

export type StatusContributor = (charm: CharmRuntime) => Promise<StatusNote[]>;

async function secretsInClear(charm: CharmRuntime): Promise<StatusNote[]> {
  const config = await charm.config();
  if (!config.ok || config.config['encryption-key']) return [];
  return [{ level: 'active', text: 'Secrets are stored in clear (set encryption-key)' }];
}

/** In the order they appear in the status message. */
export const statusNotes: StatusContributor[] = [s3BucketNotes, s3StorageClassNotes, immutabilityNotes, guardNotes, lastBackupNotes, secretsInClear, controlPlaneNotes, resticKeyNotes, scheduleNotes];
