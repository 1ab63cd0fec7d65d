// Retention of what a backup needs but did not write itself with a lock: the files the movers and copy Jobs put in its
// folder, and the objects of the restic repositories it pins snapshots in. The movers never hold the bucket key (they
// reach it through the run's gateway, docs/architecture.md "Tenant isolation"), so the side that holds it sets the
// retention after they are done, with PutObjectRetention, extend-only (object-lock.ts).
//
// A repository's objects are retained whole, but for restic's `locks/`: every current object is either needed by a
// snapshot a kept backup pins or one restic prune has not yet removed. What restic prune removes gets a delete marker
// (the bucket is versioned) and is no longer current, so no later backup extends it; its version runs out on its own
// and prune-backups deletes it then (version-purge.ts). Packs shared by later backups are thus extended by each backup
// that still finds them, which is each one that can need them.
import pLimit from 'p-limit';
import type { ObjectLockPort, WriteLock } from './object-lock.ts';
import type { BackupObjects } from './objects.ts';

export interface RetainOutcome {
  /** objects whose retention was set or lengthened */
  extended: number;
  /** objects already retained as long or longer */
  kept: number;
}

/** HEAD and PutObjectRetention in flight at once */
const CONCURRENCY = 16;

export async function retainFolders(objects: Pick<BackupObjects, 'list'>, port: ObjectLockPort, folders: readonly string[], lock: WriteLock, skip: (key: string) => boolean): Promise<RetainOutcome> {
  const outcome: RetainOutcome = { extended: 0, kept: 0 };
  const limit = pLimit(CONCURRENCY);
  const pending: Array<Promise<void>> = [];
  for (const folder of folders) {
    for await (const object of objects.list(folder)) {
      if (skip(object.key)) continue;
      pending.push(limit(async () => {
        const done = await port.extend(object.key, lock);
        if (done === 'extended') outcome.extended++;
        else if (done === 'kept') outcome.kept++;
      }));
    }
  }
  const failed = (await Promise.allSettled(pending)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return outcome;
}
