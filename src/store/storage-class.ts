// Which S3 storage classes a restore can read. S3 refuses GetObject with InvalidObjectState on an object in S3 Glacier
// Flexible Retrieval (GLACIER) or S3 Glacier Deep Archive (DEEP_ARCHIVE) until each object has been thawed with
// RestoreObject, which takes minutes to hours (AWS S3 API reference, GetObject and the InvalidObjectState error). The
// other classes read at once, some at a price: a fee per GB read and a minimum storage duration that a prune pays for
// (Amazon S3 User Guide, "Using Amazon S3 storage classes"); INTELLIGENT_TIERING reads at once unless the bucket opted
// into its archive access tiers, which then behave like GLACIER.

/** The class every file a restore must read first (markers, manifests, indexes, side files) is written in. */
export const READ_AT_ONCE_CLASS = 'STANDARD';

/** Classes whose objects cannot be read until they are restored. */
const UNREADABLE = new Set(['GLACIER', 'DEEP_ARCHIVE']);

/** Classes that read at once but cost more to read or to delete early, with why. */
const COLD: Record<string, string> = {
  STANDARD_IA: 'each read is billed per GB and objects pruned within 30 days are billed for 30',
  ONEZONE_IA: 'it keeps one zone only, each read is billed per GB and objects pruned within 30 days are billed for 30',
  GLACIER_IR: 'each read is billed per GB and objects pruned within 90 days are billed for 90',
  INTELLIGENT_TIERING: 'if the bucket enables its archive access tiers, objects left unread for months cannot be restored until thawed',
};

export type StorageClassUse =
  | { readable: true; warning?: string }
  | { readable: false; problem: string };

/** Whether backup data may be written in `storageClass` (as s3-integrator gives it), and what to say about it. */
export function storageClassUse(storageClass: string): StorageClassUse {
  const name = storageClass.toUpperCase();
  if (UNREADABLE.has(name)) {
    return {
      readable: false,
      problem: `the storage class "${storageClass}" of s3-integrator keeps every object unreadable until it is thawed, so no restore could read the backups; unset storage-class on s3-integrator or set one that reads at once (STANDARD, STANDARD_IA, GLACIER_IR)`,
    };
  }
  const why = COLD[name];
  return why ? { readable: true, warning: `backup data is stored as ${name}: ${why}` } : { readable: true };
}
