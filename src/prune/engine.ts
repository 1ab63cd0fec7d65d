// prune-backups: applies the plan (src/prune/plan.ts) to the bucket, aborts multipart uploads a crashed run left
// unfinished, and removes volume-mover Jobs and Secrets a crashed run left in the cluster. A deleted backup's restic
// snapshots are forgotten and their repositories pruned first (src/prune/restic.ts), so a failure there leaves the
// backup listed and a rerun finishes it. Dry-run reports the same answer and changes nothing.
//
// With `encryption-key` set it obeys only what the key vouches for (folders.ts): authenticated backups are counted and
// ordered, a backup being written is proven by its authenticated run record, and a restic lock by decrypting. What
// anyone else wrote (a forged folder, a planted lock, a Job in a profile namespace carrying the mover labels) is named
// in `untrusted` or `ignored` and never deletes, keeps or blocks anything.
import type { BackupStore } from '../store/backup-store.ts';
import { StoreError } from '../store/objects.ts';
import { jobFinished } from '../jobs/outcome.ts';
import { neutralWording, type Wording } from '../errors/remedy.ts';
import { moverSelector } from '../volumes/labels.ts';
import { surveyFolders } from './folders.ts';
import { planPrune, type PruneReason } from './plan.ts';
import { removeMoverLeftovers, type MoverCleanup, type MoverPort } from './movers.ts';
import { pruneRepositories, type RepositoryPrune, type ResticRepositories, type RunningBackup } from './restic.ts';
import { readRetention, retainedSentence, splitRetained, type RetainedBackup } from './retention.ts';
import type { PurgeOutcome } from '../store/version-purge.ts';
import { formatBytes } from '../format-bytes.ts';

export const DEFAULT_INCOMPLETE_GRACE_MS = 60 * 60 * 1000;

export interface PruneRequest {
  retention: number;
  dryRun: boolean;
  /** the encryption key set now: with one, only what it authenticates counts */
  encryptionKey?: string | Buffer | undefined;
  /** deletes complete folders the key does not authenticate (an explicit choice, never a side effect) */
  deleteUnauthenticated?: boolean;
  /** removes restic lock files restic would not have written */
  removeForeignLocks?: boolean;
  /** how the edge words the remedies in its sentences */
  wording?: Wording;
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
  /** complete folders the key does not authenticate: left in place, neither counted nor kept in a real one's stead */
  untrusted: Array<{ id: string; why: string }>;
  /** what prune found and did not obey, and why: folders, locks and Jobs that prove nothing */
  ignored: Array<{ what: string; why: string }>;
  /** foreign restic lock files removed (remove-foreign-locks) */
  removedLocks: string[];
  abortedUploads: number;
  movers: MoverCleanup;
  /** per restic repository: the snapshots forgotten and the bytes freed */
  restic: RepositoryPrune[];
  /** backups beyond retention that the bucket still retains (backup-immutability): kept, with the date they can go */
  retained: RetainedBackup[];
  /** with backup-immutability: the old versions deleted once nothing retained them, and what is still retained */
  versions?: PurgeOutcome;
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

/**
 * Running mover Jobs prove nothing (anyone who may create Jobs in a profile namespace can give one the mover labels):
 * the ones no running backup accounts for are named, and hold nothing up. A restic they run takes a lock, which is
 * judged per repository.
 */
async function moverJobsIgnored(movers: MoverPort, running: readonly RunningBackup[]): Promise<Array<{ what: string; why: string }>> {
  const accounted = new Set(running.map((r) => r.id));
  return (await movers.list('jobs', moverSelector()))
    .filter((job) => !jobFinished(job) && !accounted.has(job.metadata.labels?.['kubeflow-upgrader/backup-id'] ?? ''))
    .map((job) => ({
      what: `Job ${job.metadata.namespace}/${job.metadata.name}`,
      why: 'it carries the volume-mover labels, but no backup being written accounts for it, and labels prove nothing; a restic it runs holds a lock, which is judged on its own',
    }));
}

export async function pruneBackups(store: BackupStore, request: PruneRequest): Promise<PruneOutcome> {
  const now = request.now ?? new Date();
  const graceMs = request.incompleteGraceMs ?? DEFAULT_INCOMPLETE_GRACE_MS;
  const wording = request.wording ?? neutralWording;
  const keyed = request.encryptionKey !== undefined && request.encryptionKey.length > 0;
  const survey = await surveyFolders(store, request.encryptionKey, graceMs, now);
  const planned = planPrune(survey.folders, { retention: request.retention, incompleteGraceMs: graceMs, now, deleteUnauthenticated: request.deleteUnauthenticated === true });
  // what the bucket still retains is not asked to go, nor are its restic snapshots forgotten (retention.ts)
  const { deletable, retained } = splitRetained(planned.delete, await readRetention(store, planned.delete.map((d) => d.id)), now);
  const plan = { ...planned, delete: deletable, keep: [...planned.keep, ...retained.map((r) => ({ id: r.id, why: `under Object Lock retention (${r.mode}) until ${r.until.toISOString()}` }))] };
  const ignored = [...survey.ignored, ...(request.movers ? await moverJobsIgnored(request.movers, survey.running) : [])];
  // the restic repositories first: a backup whose snapshots could not be forgotten stays, for a rerun to finish
  const repositories = await pruneRepositories(store, {
    deleted: plan.delete.filter((d) => d.reason !== 'incomplete').map((d) => d.id), kept: plan.keep.map((k) => k.id),
    running: survey.running, encryptionKey: request.encryptionKey, restic: request.restic, cluster: request.movers !== undefined,
    dryRun: request.dryRun, removeForeignLocks: request.removeForeignLocks === true, now, wording, progress: request.progress,
  });
  const { held } = repositories;
  const notes = [...retained.map(retainedSentence), ...repositories.notes];
  if (!keyed) {
    notes.push(`No ${wording.term({ term: 'encryption-key' })} is set, so retention trusts the bucket: whoever can write it can add folders that count as backups and make real ones beyond retention; ${wording.remedy({ fix: 'set-encryption-key' })} to count only authenticated backups.`);
  }
  if (plan.untrusted.length > 0) {
    notes.push(`${plan.untrusted.length} complete folder(s) are not authenticated under the ${wording.term({ term: 'encryption-key' })} (${plan.untrusted.map((u) => u.id).join(', ')}): they were neither counted nor kept in place of a backup, and were left as they are; ${wording.remedy({ fix: 'delete-unauthenticated' })} to delete them.`);
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
  // restic prune's deletes, the run records' renewals and deleted folders left old versions in the versioned bucket
  const versions = request.dryRun ? undefined : await store.purgeExpiredVersions(now);
  if (versions && versions.retained.versions > 0) {
    notes.push(`${versions.retained.versions} old object version(s) (${formatBytes(versions.retained.bytes)}) no backup lists any more are still under Object Lock retention, until ${versions.retained.until?.toISOString()} at the latest; prune deletes each once its date has passed.`);
  }
  const movers = request.movers
    ? await removeMoverLeftovers(request.movers, { graceMs, now, dryRun: request.dryRun })
    : { jobs: 0, secrets: 0 };
  return {
    deleted: deleting, kept, untrusted: plan.untrusted, ignored: [...ignored, ...repositories.ignored], removedLocks: repositories.removedLocks,
    abortedUploads, movers, restic: repositories.repositories, retained, ...(versions ? { versions } : {}), notes,
  };
}
