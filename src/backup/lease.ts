// One backup at a time per bucket location, whoever starts it (backup-state, snapshot-profiles, the scheduled service):
// the lease is the signed run record every backup keeps in its folder while it is written (src/archive/run-record.ts,
// renewed by the store), read as prune-backups reads it (src/prune/folders.ts). No second mechanism: a backup that
// finds another one's live record does not start, and one that started beside another (both looked before either
// wrote) finds it once its own record is in place, and the later of the two steps back. A holder that is gone stops
// renewing, and its lease runs out; the service also names the backup its own killed process left (`abandoned`),
// whose lease it takes over at once (and whose folder it removes: src/service/run.ts).
import { KfuError } from '../errors/index.ts';
import { surveyFolders } from '../prune/folders.ts';
import type { RunningBackup } from '../prune/restic.ts';
import type { BackupStore } from '../store/backup-store.ts';

export interface LeaseRequest {
  /** who writes this backup, kept in its run record: `<unit> action` or `<unit> service` */
  holder?: string;
  /**
   * a holder known to be over: Juju runs one action of a unit at a time, so a live record of `<unit> action` found by
   * that unit's action was left by a killed one, and holds nothing (a rerun after a crash goes on at once)
   */
  goneHolder?: string;
  /** backups whose holder is known to be gone (the service's own killed process): they hold nothing */
  abandoned?: ReadonlySet<string>;
}

/** Another backup holds the lease: nothing was written (or what was, was removed). */
export class LeaseHeldError extends KfuError {
  static override readonly errorId = 'LeaseHeldError';
  constructor(readonly holder: RunningBackup) {
    super(
      `Backup ${holder.id} is being written (started ${holder.started.toISOString()}; its run record holds until ${holder.expires.toISOString()}), ` +
        'and one backup at a time is written to a bucket location, so this one was not started; start it again once that one has finished, ' +
        `or after ${holder.expires.toISOString()} if it was stopped.`,
      { kind: 'refused' },
    );
  }
}

const earlier = (a: RunningBackup, b: { id: string; started: Date }) =>
  a.started.getTime() < b.started.getTime() || (a.started.getTime() === b.started.getTime() && a.id < b.id);

async function others(store: BackupStore, encryptionKey: string | undefined, lease: LeaseRequest, own?: string): Promise<RunningBackup[]> {
  const { running } = await surveyFolders(store, encryptionKey, 0, new Date());
  return running.filter((r) => r.id !== own && !lease.abandoned?.has(r.id) && !(lease.goneHolder !== undefined && r.holder === lease.goneHolder));
}

/** Before a backup begins: throws when another one holds the lease. */
export async function checkLeaseFree(store: BackupStore, encryptionKey: string | undefined, lease: LeaseRequest): Promise<void> {
  const [holder] = await others(store, encryptionKey, lease);
  if (holder) throw new LeaseHeldError(holder);
}

/** Once this backup's record is in place: throws when one that began earlier runs beside it. */
export async function checkLeaseKept(store: BackupStore, encryptionKey: string | undefined, lease: LeaseRequest, own: { id: string; started: Date }): Promise<void> {
  const holder = (await others(store, encryptionKey, lease, own.id)).filter((r) => earlier(r, own)).sort((a, b) => (earlier(a, b) ? -1 : 1))[0];
  if (holder) throw new LeaseHeldError(holder);
}
