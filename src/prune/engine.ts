// prune-backups: applies the plan (src/prune/plan.ts) to the bucket, aborts multipart uploads a crashed run left
// unfinished, and removes volume-mover Jobs and Secrets a crashed run left in the cluster. A deleted backup's restic
// snapshots are forgotten and their repositories pruned first (src/prune/restic.ts), so a failure there leaves the
// backup listed and a rerun finishes it. Dry-run reports the same answer and changes nothing.
import type { BackupStore } from '../store/backup-store.ts';
import { StoreError } from '../store/objects.ts';
import { planPrune, type PruneReason } from './plan.ts';
import { removeMoverLeftovers, type MoverCleanup, type MoverPort } from './movers.ts';
import { pruneRepositories, type RepositoryPrune, type ResticRepositories } from './restic.ts';

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
  // the restic repositories first: a backup whose snapshots could not be forgotten stays, for a rerun to finish
  const { repositories: restic, held, notes } = await pruneRepositories(store, {
    folders, deleted: plan.delete.filter((d) => d.reason === 'beyond retention').map((d) => d.id), kept: plan.keep.map((k) => k.id),
    restic: request.restic, movers: request.movers, dryRun: request.dryRun, graceMs, now, progress: request.progress,
  });
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
