// prune-backups: applies the plan (src/prune/plan.ts) to the bucket, aborts multipart uploads a crashed run left
// unfinished, and removes volume-mover Jobs and Secrets a crashed run left in the cluster. A deleted backup's restic
// snapshots are forgotten and their repositories pruned first (src/prune/restic.ts), so a failure there leaves the
// backup listed and a rerun finishes it. Dry-run reports the same answer and changes nothing.
import type { BackupStore } from '../store/backup-store.ts';
import { StoreError } from '../store/objects.ts';
import { planPrune, type PruneReason } from './plan.ts';
import { removeMoverLeftovers, type MoverCleanup, type MoverPort } from './movers.ts';
import { holdsLockFiles, lockedSentence, planResticForget, PruneRefusedError, repositoryBytes, resticBusy, type RepositoryPrune, type ResticRepositories } from './restic.ts';
import { describeInline } from '../errors/index.ts';

export const DEFAULT_INCOMPLETE_GRACE_MS = 60 * 60 * 1000;

export interface PruneRequest {
  retention: number;
  dryRun: boolean;
  incompleteGraceMs?: number;
  now?: Date;
  /** the cluster, to remove mover leftovers; omitted, only the bucket is pruned */
  movers?: MoverPort;
  /** the restic repositories, to forget deleted backups' snapshots and prune; needs `movers` too */
  restic?: ResticRepositories;
  progress?: (message: string) => Promise<void> | void;
}

export interface PruneOutcome {
  deleted: Array<{ id: string; reason: PruneReason }>;
  kept: Array<{ id: string; why: string }>;
  abortedUploads: number;
  movers: MoverCleanup;
  /** per restic repository: the snapshots forgotten and the bytes freed */
  restic: RepositoryPrune[];
  /** what could not be done and why, one sentence each */
  notes: string[];
}

/** Aborts multipart uploads under backups/ started longer ago than the grace period; some stores cannot list them. */
async function abortStaleUploads(store: BackupStore, graceMs: number, now: Date, dryRun: boolean, notes: string[]): Promise<number> {
  try {
    return await store.abortStaleUploads(new Date(now.getTime() - graceMs), dryRun);
  } catch (error) {
    if (error instanceof StoreError && error.condition === 'other') {
      // s3rver and some gateways do not implement ListMultipartUploads; a bucket lifecycle rule covers them.
      notes.push(`Unfinished multipart uploads were not checked: the object store does not list them (${error.message.replace(/^.*: /, '').replace(/\.$/, '')}); an AbortIncompleteMultipartUpload lifecycle rule on the bucket removes them.`);
      return 0;
    }
    throw error;
  }
}

export async function pruneBackups(store: BackupStore, request: PruneRequest): Promise<PruneOutcome> {
  const now = request.now ?? new Date();
  const graceMs = request.incompleteGraceMs ?? DEFAULT_INCOMPLETE_GRACE_MS;
  const folders = await store.listBackupFolders();
  const plan = planPrune(folders, { retention: request.retention, incompleteGraceMs: graceMs, now });
  const forgetting = await planResticForget(
    store, plan.delete.filter((d) => d.reason === 'beyond retention').map((d) => d.id), plan.keep.map((k) => k.id), request.restic,
  );
  const notes: string[] = [...forgetting.notes];
  const restic: RepositoryPrune[] = [];
  /** backups left in place because a repository they pin into could not be pruned: a rerun tries again */
  const held = new Set<string>();
  if (forgetting.forget.size > 0) {
    if (!request.restic || !request.movers) {
      throw new PruneRefusedError(`Nothing was pruned: backups ${[...new Set([...forgetting.forget.values()].flatMap((e) => [...e.backups]))].join(', ')} hold restic snapshots, which only a restic Job in the cluster can forget, and the cluster could not be reached.`);
    }
    const busy = await resticBusy(folders, request.movers, graceMs, now);
    if (busy && !request.dryRun) throw new PruneRefusedError(busy);
    if (busy) notes.push(busy.replace(/^Nothing was pruned: /, 'A run now would refuse: '));
    const repositories = [...forgetting.forget].map(([namespace, entry]) => ({ namespace, entry, url: store.url(request.restic!.locationKey(namespace)) }));
    if (!request.dryRun) {
      // Locks first, in every repository, before anything is forgotten anywhere: a refusal then changes nothing.
      for (const { namespace, url } of repositories) {
        // restic ignores an empty lock file (internal/restic/lock.go ForAllLocks), and so does this look
        if (!(await holdsLockFiles(store, request.restic.locationKey(namespace)))) continue;
        const checked = await request.restic.run(namespace, 'check', []);
        if (checked.state === 'locked') throw new PruneRefusedError(lockedSentence(url, checked.locks));
      }
    }
    const failures: string[] = [];
    for (const { namespace, entry, url } of repositories) {
      const snapshots = [...entry.snapshots].sort();
      const line: RepositoryPrune = { namespace, repository: url, backups: [...entry.backups].sort(), snapshotsForgotten: snapshots.length };
      if (request.dryRun) {
        restic.push(line);
        continue;
      }
      const before = await repositoryBytes(store, request.restic.locationKey(namespace));
      let result;
      try {
        result = await request.restic.run(namespace, 'prune', snapshots);
      } catch (error) {
        result = { state: 'failed' as const, reason: describeInline(error) };
      }
      if (result.state !== 'pruned') {
        for (const id of entry.backups) held.add(id);
        failures.push(`${url}: ${result.state === 'failed' ? result.reason : result.state === 'locked' ? 'another restic took a lock meanwhile' : 'restic did not prune'}`);
        continue;
      }
      const after = await repositoryBytes(store, request.restic.locationKey(namespace));
      restic.push({
        ...line, snapshotsForgotten: snapshots.length - result.ignored,
        bytesBefore: before.bytes, bytesAfter: after.bytes, bytesFreed: Math.max(0, before.bytes - after.bytes),
        ...(result.totalPrune ? { resticTotal: result.totalPrune } : {}),
      });
      await request.progress?.(`pruned restic repository ${url}: ${snapshots.length - result.ignored} snapshot(s) forgotten, ${before.bytes - after.bytes} bytes freed`);
    }
    if (failures.length > 0) {
      notes.push(`The restic repositories ${failures.join('; ')} were not pruned, so backups ${[...held].sort().join(', ')} were kept; rerun prune-backups once that is fixed.`);
    }
  }
  const deleting = plan.delete.filter((d) => !held.has(d.id));
  const kept = [...plan.keep, ...plan.delete.filter((d) => held.has(d.id)).map((d) => ({ id: d.id, why: 'its restic snapshots could not be forgotten yet' }))];
  if (!request.dryRun) {
    let done = 0;
    for (const { id } of deleting) {
      await store.deleteBackup(id);
      done++;
      await request.progress?.(`deleted ${done}/${deleting.length} backups (${id})`);
    }
  }
  const abortedUploads = await abortStaleUploads(store, graceMs, now, request.dryRun, notes);
  const movers = request.movers
    ? await removeMoverLeftovers(request.movers, { graceMs, now, dryRun: request.dryRun })
    : { jobs: 0, secrets: 0 };
  return { deleted: deleting, kept, abortedUploads, movers, restic, notes };
}
