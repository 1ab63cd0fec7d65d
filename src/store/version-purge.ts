// Freeing space in a lock-enabled (so versioned) bucket. There a plain DELETE only adds a delete marker: the object
// leaves the listings, its bytes stay as a noncurrent version (AWS S3 user guide, "Deleting object versions from a
// versioning-enabled bucket"; ceph/ceph src/rgw/rgw_op.cc RGWDeleteObj). restic's prune, prune-backups' own folder
// deletes before immutability, an aborted backup and the run record's renewals all leave such versions. This deletes
// them by version id once nothing retains them: a version still under retention is never asked to go (its date is
// read first), and a delete marker goes only once no version of its key is left, so nothing hidden comes back.
import type { ObjectLockPort, ObjectVersion } from './object-lock.ts';

export interface PurgeOutcome {
  versionsDeleted: number;
  markersDeleted: number;
  bytesFreed: number;
  /** versions left because they are retained, their bytes, and the latest date one of them is retained until */
  retained: { versions: number; bytes: number; until?: Date };
}

export interface PurgeOptions {
  /** also the current versions (a backup folder prune deletes); otherwise only what no plain GET answers any more */
  includeCurrent: boolean;
}

export function emptyPurge(): PurgeOutcome {
  return { versionsDeleted: 0, markersDeleted: 0, bytesFreed: 0, retained: { versions: 0, bytes: 0 } };
}

export function addPurges(a: PurgeOutcome, b: PurgeOutcome): PurgeOutcome {
  const until = [a.retained.until, b.retained.until].filter((d): d is Date => d !== undefined).sort((x, y) => y.getTime() - x.getTime())[0];
  return {
    versionsDeleted: a.versionsDeleted + b.versionsDeleted, markersDeleted: a.markersDeleted + b.markersDeleted, bytesFreed: a.bytesFreed + b.bytesFreed,
    retained: { versions: a.retained.versions + b.retained.versions, bytes: a.retained.bytes + b.retained.bytes, ...(until ? { until } : {}) },
  };
}

/** Deletes the versions under `folder` that nothing retains at `now`, and the delete markers left with nothing behind. */
export async function purgeVersions(lock: ObjectLockPort, folder: string, now: Date, options: PurgeOptions): Promise<PurgeOutcome> {
  const outcome = emptyPurge();
  let group: ObjectVersion[] = [];
  const settle = async () => {
    if (group.length === 0) return;
    const key = group[0]!.key;
    const versions = group;
    group = [];
    let left = 0;
    for (const version of versions.filter((v) => !v.deleteMarker)) {
      if (version.latest && !options.includeCurrent) {
        left++;
        continue;
      }
      const retention = await lock.retention(key, version.versionId);
      if (retention?.until && retention.until.getTime() > now.getTime()) {
        left++;
        outcome.retained.versions++;
        outcome.retained.bytes += version.size;
        if (!outcome.retained.until || retention.until > outcome.retained.until) outcome.retained.until = retention.until;
        continue;
      }
      await lock.deleteVersion(key, version.versionId);
      outcome.versionsDeleted++;
      outcome.bytesFreed += version.size;
    }
    for (const marker of versions.filter((v) => v.deleteMarker)) {
      // the newest marker hides what is left; it goes only when nothing is left to hide
      if (marker.latest && left > 0) continue;
      await lock.deleteVersion(key, marker.versionId);
      outcome.markersDeleted++;
    }
  };
  for await (const version of lock.versions(folder)) {
    if (group.length > 0 && group[0]!.key !== version.key) await settle();
    group.push(version);
  }
  await settle();
  return outcome;
}
