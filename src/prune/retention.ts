// backup-immutability and prune: a backup the plan would delete while the bucket still retains it (S3 Object Lock,
// src/store/immutability.ts) is not asked to go. It is kept, with the date it becomes deletable in one sentence, and
// its restic snapshots are not forgotten either (forgetting deletes the snapshot's object, which in a versioned bucket
// only hides it, and the backup would then no longer restore as it is). After that date prune deletes it for real.
import type { BackupStore } from '../store/backup-store.ts';

export interface RetainedBackup {
  id: string;
  mode: string;
  until: Date;
}

/** The sentence that says why a backup was not deleted, and when it can be. */
export function retainedSentence(backup: RetainedBackup): string {
  return `Backup ${backup.id} is under Object Lock retention (${backup.mode}) until ${backup.until.toISOString()} and cannot be deleted before then; prune deletes it on its first run after that date.`;
}

/** Splits the backups to delete into those that can go now and those still retained at `now`. */
export function splitRetained<T extends { id: string }>(deleting: readonly T[], retention: ReadonlyMap<string, { mode: string; until: Date } | undefined>, now: Date): { deletable: T[]; retained: RetainedBackup[] } {
  const deletable: T[] = [];
  const retained: RetainedBackup[] = [];
  for (const backup of deleting) {
    const held = retention.get(backup.id);
    if (held && held.until.getTime() > now.getTime()) retained.push({ id: backup.id, mode: held.mode, until: held.until });
    else deletable.push(backup);
  }
  return { deletable, retained };
}

/** The bucket's retention of each backup the plan deletes (only with immutability; one HEAD each). */
export async function readRetention(store: BackupStore, ids: readonly string[]): Promise<Map<string, { mode: string; until: Date } | undefined>> {
  const retention = new Map<string, { mode: string; until: Date } | undefined>();
  if (!store.immutability) return retention;
  for (const id of ids) retention.set(id, await store.retainedUntil(id));
  return retention;
}
