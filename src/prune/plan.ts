// Which backups prune-backups deletes, as a pure function of what the bucket holds. The newest `retention` backups stay
// (and the newest one always stays), older ones go, and a folder without a marker goes only once nothing shows it is
// being written: a fresh run record the backup keeps (src/archive/run-record.ts), or a write within the grace period.
//
// With `encryption-key` set only what the key vouches for counts: a complete backup is counted, ordered and kept only
// when its manifest's HMAC verifies, by the manifest's start (which the HMAC covers), the order `latest` uses
// (src/catalog/verify.ts listBackups). A folder anyone could have written (a marker copied into a folder named for
// tomorrow) is never counted, never kept in place of a real backup, and never makes one "beyond retention": it is
// reported with its reason and deleted only when the operator asks for it. Velero's garbage collection likewise
// deletes only backups it has records for (vmware-tanzu/velero pkg/controller/gc_controller.go).

export interface FolderFacts {
  id: string;
  /** its velero-backup.json exists */
  complete: boolean;
  /**
   * when the backup started: with a key, an authenticated backup's manifest time; otherwise the manifest's, marker's
   * or id's; undefined when unknown
   */
  created: Date | undefined;
  /** the newest object in the folder */
  lastWrite: Date | undefined;
  /** one of our ids (kf-…); foreign Velero backups in the same location are never pruned */
  ours: boolean;
  /** with a key, why a complete folder is not authenticated (a clause); undefined when it is, or without a key */
  untrusted?: string | undefined;
  /** an incomplete folder's run record holds until this time (authenticated with a key) */
  runningUntil?: Date | undefined;
}

export interface PrunePolicy {
  /** complete backups to keep; 0 keeps all */
  retention: number;
  /** an incomplete folder written to within this time is left alone (it is deleted only later) */
  incompleteGraceMs: number;
  now: Date;
  /** deletes complete folders that are not authenticated (the operator's explicit choice) */
  deleteUnauthenticated?: boolean;
}

export type PruneReason = 'beyond retention' | 'incomplete' | 'not authenticated';

export interface PrunePlan {
  delete: Array<{ id: string; reason: PruneReason }>;
  keep: Array<{ id: string; why: string }>;
  /** complete folders that are not authenticated under the key, left in place and neither counted nor kept */
  untrusted: Array<{ id: string; why: string }>;
}

function newestFirst(a: FolderFacts, b: FolderFacts): number {
  const at = a.created?.getTime() ?? 0;
  const bt = b.created?.getTime() ?? 0;
  return at === bt ? b.id.localeCompare(a.id) : bt - at;
}

export function planPrune(folders: readonly FolderFacts[], policy: PrunePolicy): PrunePlan {
  const plan: PrunePlan = { delete: [], keep: [], untrusted: [] };
  const counted: FolderFacts[] = [];
  for (const folder of folders.filter((f) => f.complete)) {
    if (!folder.ours) plan.keep.push({ id: folder.id, why: 'not made by kubeflow-upgrader' });
    else if (folder.untrusted === undefined) counted.push(folder);
    else if (policy.deleteUnauthenticated) plan.delete.push({ id: folder.id, reason: 'not authenticated' });
    else plan.untrusted.push({ id: folder.id, why: folder.untrusted });
  }
  counted.sort(newestFirst).forEach((folder, index) => {
    if (index === 0) plan.keep.push({ id: folder.id, why: 'newest complete backup' });
    else if (policy.retention === 0 || index < policy.retention) plan.keep.push({ id: folder.id, why: 'within backup-retention' });
    else plan.delete.push({ id: folder.id, reason: 'beyond retention' });
  });
  for (const folder of folders.filter((f) => !f.complete).sort(newestFirst)) {
    const lastActivity = Math.max(folder.lastWrite?.getTime() ?? 0, folder.created?.getTime() ?? 0);
    const idle = policy.now.getTime() - lastActivity;
    if (!folder.ours) plan.keep.push({ id: folder.id, why: 'not made by kubeflow-upgrader' });
    else if (folder.runningUntil && folder.runningUntil > policy.now) plan.keep.push({ id: folder.id, why: `being written (its run record holds until ${folder.runningUntil.toISOString()})` });
    else if (idle < policy.incompleteGraceMs) plan.keep.push({ id: folder.id, why: 'incomplete but recently written to' });
    else plan.delete.push({ id: folder.id, reason: 'incomplete' });
  }
  return plan;
}
