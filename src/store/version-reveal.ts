// What someone holding the bucket key can still do to an immutable backup, and how it is undone. They cannot delete a
// retained version or shorten its retention, but a plain DELETE puts a delete marker over it and a PUT a new version on
// top (AWS S3 user guide, "Object Lock" and "Working with objects in a versioning-enabled bucket"; ceph/ceph
// src/rgw/rgw_op.cc RGWDeleteObj, RGWPutObj): the backup vanishes from the listings, or reads as forged bytes, while the
// retained version is still there. `findCovered` finds each object whose newest retained version is not the one a plain
// GET answers; `uncover` removes what lies on top (a delete marker, or a version nothing retains), so the retained
// version is current again, exactly as it was written. Nothing of ours is ever legitimately written over a retained
// object (a restic repository never rewrites a file under the same name; a backup's files are written once), so what
// lies on top of one is never ours.
import type { ObjectLockPort, ObjectVersion } from './object-lock.ts';
import { backupNameOfFolder } from './layout.ts';

export interface CoveredObject {
  key: string;
  /** the newest version still retained, which is not current */
  retained: ObjectVersion;
  retainedUntil: Date;
  /** what lies on top of it, newest first: delete markers and newer versions */
  above: ObjectVersion[];
}

/** Every object under `folder` whose newest version retained at `now` is hidden or overwritten. */
export async function findCovered(lock: ObjectLockPort, folder: string, now: Date): Promise<CoveredObject[]> {
  const covered: CoveredObject[] = [];
  let group: ObjectVersion[] = [];
  const settle = async () => {
    const versions = group;
    group = [];
    // versions are listed newest first; the current one is the first, and if it is retained nothing covers it
    for (let index = 1; index < versions.length; index++) {
      const version = versions[index]!;
      if (version.deleteMarker) continue;
      const retention = await lock.retention(version.key, version.versionId);
      if (retention?.until && retention.until.getTime() > now.getTime()) {
        covered.push({ key: version.key, retained: version, retainedUntil: retention.until, above: versions.slice(0, index) });
        return;
      }
    }
  };
  for await (const version of lock.versions(folder)) {
    if (group.length > 0 && group[0]!.key !== version.key) await settle();
    group.push(version);
  }
  if (group.length > 0) await settle();
  return covered;
}

export interface UncoverOutcome {
  /** objects whose retained version is current again */
  uncovered: number;
  /** what could not be removed from on top of a retained version (itself retained), one clause each */
  refused: string[];
}

/** Removes what lies on top of each covered object's retained version, as long as nothing retains it too. */
export async function uncover(lock: ObjectLockPort, covered: readonly CoveredObject[], now: Date): Promise<UncoverOutcome> {
  const outcome: UncoverOutcome = { uncovered: 0, refused: [] };
  for (const object of covered) {
    let blocked: string | undefined;
    for (const version of object.above) {
      if (!version.deleteMarker) {
        const retention = await lock.retention(version.key, version.versionId);
        if (retention?.until && retention.until.getTime() > now.getTime()) {
          blocked = `${object.key}: the version written over it is retained too, until ${retention.until.toISOString()}`;
          break;
        }
      }
      await lock.deleteVersion(version.key, version.versionId);
    }
    if (blocked) outcome.refused.push(blocked);
    else outcome.uncovered++;
  }
  return outcome;
}

/** Retained objects someone hid or wrote over, as a listing tells them. */
export interface CoveredReport {
  /** retained objects of the backups folder whose current version is a delete marker (nothing of ours leaves one) */
  hidden: number;
  /** retained objects anywhere whose current version is a newer one (nothing of ours writes a name twice) */
  overwritten: number;
  /**
   * retained objects of the restic repositories hidden by a delete marker: restic's own prune leaves these for every
   * pack and index it removes while they are still retained, so they tell nothing unless a repository is damaged
   */
  repositoryHidden: number;
  /** backups whose marker is hidden: whole backups a listing no longer shows */
  hiddenBackups: string[];
  /** the latest date one of them is retained until */
  until?: Date;
}

export function coveredReport(covered: readonly CoveredObject[]): CoveredReport {
  const hidden = covered.filter((c) => c.above[0]?.deleteMarker);
  const inBackups = (c: CoveredObject) => backupNameOfFolder(c.key) !== undefined;
  const hiddenBackups = hidden.filter((c) => c.key.endsWith('/velero-backup.json'))
    .map((c) => backupNameOfFolder(c.key))
    .filter((id): id is string => id !== undefined)
    .sort();
  const until = covered.map((c) => c.retainedUntil).sort((a, b) => b.getTime() - a.getTime())[0];
  return {
    hidden: hidden.filter(inBackups).length,
    overwritten: covered.filter((c) => !c.above[0]?.deleteMarker).length,
    repositoryHidden: hidden.filter((c) => !inBackups(c)).length,
    hiddenBackups,
    ...(until ? { until } : {}),
  };
}

/**
 * The one sentence a listing or a verify adds when retained objects are covered, or undefined when none is; `remedy` is
 * the edge's. The restic repositories' hidden objects count only when `repositoryDamaged` (verify found it so).
 */
export function coveredSentence(report: CoveredReport, remedy: string, repositoryDamaged = false): string | undefined {
  const hidden = report.hidden + (repositoryDamaged ? report.repositoryHidden : 0);
  if (hidden + report.overwritten === 0) return undefined;
  const backups = report.hiddenBackups.length > 0 ? ` (the backups ${report.hiddenBackups.join(', ')} are no longer listed)` : '';
  return `${hidden} object(s) still under Object Lock retention are hidden by a delete marker and ${report.overwritten} written over${backups}, so someone holding the bucket key deleted or rewrote them; their retained versions, kept until ${report.until?.toISOString()} at the latest, become current again: ${remedy}.`;
}
