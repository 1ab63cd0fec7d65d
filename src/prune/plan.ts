// Which backups prune-backups deletes, as a pure function of what the bucket holds: the newest `retention` complete
// backups stay (and the newest complete one always stays), older complete ones go, and a folder without a marker
// goes only once nothing has been written to it for the grace period, so a backup still running is never touched.

export interface FolderFacts {
  id: string;
  /** its velero-backup.json exists */
  complete: boolean;
  /** when the backup started (manifest, marker or id); undefined when unknown */
  created: Date | undefined;
  /** the newest object in the folder: a running backup keeps this recent */
  lastWrite: Date | undefined;
  /** one of our ids (kf-…); foreign Velero backups in the same location are never pruned */
  ours: boolean;
}

export interface PrunePolicy {
  /** complete backups to keep; 0 keeps all */
  retention: number;
  /** an incomplete folder younger than this may belong to a running backup */
  incompleteGraceMs: number;
  now: Date;
}

export type PruneReason = 'beyond retention' | 'incomplete';

export interface PrunePlan {
  delete: Array<{ id: string; reason: PruneReason }>;
  keep: Array<{ id: string; why: string }>;
}

function newestFirst(a: FolderFacts, b: FolderFacts): number {
  const at = a.created?.getTime() ?? 0;
  const bt = b.created?.getTime() ?? 0;
  return at === bt ? b.id.localeCompare(a.id) : bt - at;
}

export function planPrune(folders: readonly FolderFacts[], policy: PrunePolicy): PrunePlan {
  const plan: PrunePlan = { delete: [], keep: [] };
  const complete = folders.filter((f) => f.complete).sort(newestFirst);
  complete.forEach((folder, index) => {
    if (!folder.ours) plan.keep.push({ id: folder.id, why: 'not made by kubeflow-upgrader' });
    else if (index === 0) plan.keep.push({ id: folder.id, why: 'newest complete backup' });
    else if (policy.retention === 0 || index < policy.retention) plan.keep.push({ id: folder.id, why: 'within backup-retention' });
    else plan.delete.push({ id: folder.id, reason: 'beyond retention' });
  });
  for (const folder of folders.filter((f) => !f.complete).sort(newestFirst)) {
    const lastActivity = Math.max(folder.lastWrite?.getTime() ?? 0, folder.created?.getTime() ?? 0);
    const idle = policy.now.getTime() - lastActivity;
    if (!folder.ours) plan.keep.push({ id: folder.id, why: 'not made by kubeflow-upgrader' });
    else if (idle < policy.incompleteGraceMs) plan.keep.push({ id: folder.id, why: 'incomplete but recent: may still be running' });
    else plan.delete.push({ id: folder.id, reason: 'incomplete' });
  }
  return plan;
}
