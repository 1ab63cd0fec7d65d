// prune-backups: applies the plan (src/prune/plan.ts) to the bucket, aborts multipart uploads a crashed run left
// unfinished, and removes volume-mover Jobs and Secrets a crashed run left in the cluster. Dry-run reports the
// same answer and changes nothing.
import { AbortMultipartUploadCommand, DeleteObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { ObjectStore } from '../store/objects.ts';
import { classifyStoreError } from '../store/objects.ts';
import { backupIdTime, backupKeys, backupNameOfFolder, BACKUPS_FOLDER, isBackupId } from '../store/layout.ts';
import { planPrune, type FolderFacts, type PruneReason } from './plan.ts';
import { removeMoverLeftovers, type MoverCleanup, type MoverPort } from './movers.ts';

export const DEFAULT_INCOMPLETE_GRACE_MS = 60 * 60 * 1000;

export interface PruneRequest {
  retention: number;
  dryRun: boolean;
  incompleteGraceMs?: number;
  now?: Date;
  /** the cluster, to remove mover leftovers; omitted, only the bucket is pruned */
  movers?: MoverPort;
  progress?: (message: string) => Promise<void> | void;
}

export interface PruneOutcome {
  deleted: Array<{ id: string; reason: PruneReason }>;
  kept: Array<{ id: string; why: string }>;
  abortedUploads: number;
  movers: MoverCleanup;
  /** what could not be done and why, one sentence each */
  notes: string[];
}

export async function folderFacts(store: ObjectStore): Promise<FolderFacts[]> {
  const facts: FolderFacts[] = [];
  for await (const folder of store.listFolders(BACKUPS_FOLDER)) {
    const id = backupNameOfFolder(folder);
    if (!id) continue;
    const keys = backupKeys(id);
    let complete = false;
    let lastWrite: Date | undefined;
    for await (const object of store.list(keys.folder)) {
      if (object.key === keys.marker) complete = true;
      if (object.lastModified && (!lastWrite || object.lastModified > lastWrite)) lastWrite = object.lastModified;
    }
    facts.push({ id, complete, created: backupIdTime(id) ?? lastWrite, lastWrite, ours: isBackupId(id) });
  }
  return facts;
}

/** Removes one backup, marker first: if this is interrupted, what remains is an incomplete folder, never a backup with missing files. */
async function deleteBackup(store: ObjectStore, id: string): Promise<void> {
  const keys = backupKeys(id);
  try {
    await store.client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: store.fullKey(keys.marker) }));
  } catch (error) {
    throw classifyStoreError(error, 'delete', store.url(keys.marker), keys.marker);
  }
  await store.deleteFolder(keys.folder);
}

/** Aborts multipart uploads under backups/ started longer ago than the grace period; some stores cannot list them. */
async function abortStaleUploads(store: ObjectStore, graceMs: number, now: Date, dryRun: boolean, notes: string[]): Promise<number> {
  let aborted = 0;
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  try {
    for (;;) {
      const page = await store.client.send(new ListMultipartUploadsCommand({
        Bucket: store.bucket, Prefix: store.fullKey(BACKUPS_FOLDER), KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker,
      }));
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !upload.Initiated) continue;
        if (now.getTime() - upload.Initiated.getTime() < graceMs) continue;
        if (!dryRun) await store.client.send(new AbortMultipartUploadCommand({ Bucket: store.bucket, Key: upload.Key, UploadId: upload.UploadId }));
        aborted++;
      }
      if (!page.IsTruncated) break;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  } catch (error) {
    const failure = classifyStoreError(error, 'list the unfinished uploads of', store.url(BACKUPS_FOLDER));
    if (failure.condition === 'other') {
      // s3rver and some gateways do not implement ListMultipartUploads; a bucket lifecycle rule covers them.
      notes.push(`Unfinished multipart uploads were not checked: the object store does not list them (${failure.message.replace(/^.*: /, '').replace(/\.$/, '')}); an AbortIncompleteMultipartUpload lifecycle rule on the bucket removes them.`);
      return aborted;
    }
    throw failure;
  }
  return aborted;
}

export async function pruneBackups(store: ObjectStore, request: PruneRequest): Promise<PruneOutcome> {
  const now = request.now ?? new Date();
  const graceMs = request.incompleteGraceMs ?? DEFAULT_INCOMPLETE_GRACE_MS;
  const plan = planPrune(await folderFacts(store), { retention: request.retention, incompleteGraceMs: graceMs, now });
  const notes: string[] = [];
  if (!request.dryRun) {
    let done = 0;
    for (const { id } of plan.delete) {
      await deleteBackup(store, id);
      done++;
      await request.progress?.(`deleted ${done}/${plan.delete.length} backups (${id})`);
    }
  }
  const abortedUploads = await abortStaleUploads(store, graceMs, now, request.dryRun, notes);
  const movers = request.movers
    ? await removeMoverLeftovers(request.movers, { graceMs, now, dryRun: request.dryRun })
    : { jobs: 0, secrets: 0 };
  return { deleted: plan.delete, kept: plan.keep, abortedUploads, movers, notes };
}
