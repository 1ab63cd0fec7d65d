// S3 Object Lock, as backup-immutability uses it (immutability.ts): the write parameters of a retained object, whether
// a bucket has Object Lock, the retention of an object read and extended (never shortened), and a bucket's versions
// listed and deleted one by one. What S3 does that this relies on (AWS S3 user guide "Object Lock", API reference
// PutObject, PutObjectRetention, ListObjectVersions, DeleteObject; Ceph's radosgw 16 the same, ceph/ceph
// src/rgw/rgw_op.cc RGWPutObj, RGWPutObjRetention, RGWDeleteObj, measured in tests/store/object-lock.rgw.ts):
// - a bucket gets Object Lock only when it is created with it, and is then versioned;
// - PutObject (and CreateMultipartUpload) with ObjectLockMode and ObjectLockRetainUntilDate retains the version it
//   writes; AWS wants Content-MD5 (or an x-amz-checksum) on such a request and on each UploadPart, radosgw checks a
//   Content-MD5 it is given (BadDigest), so both get one;
// - a plain DELETE of a retained object succeeds by adding a delete marker: the version stays, readable by its id;
//   DeleteObject with the VersionId is refused while it is retained (COMPLIANCE: always; GOVERNANCE: without the
//   bypass header, which this code never sends);
// - PutObjectRetention to a later date extends; to an earlier one is refused.
import {
  DeleteObjectCommand,
  GetObjectLockConfigurationCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectRetentionCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { classifyStoreError } from './objects.ts';

export { contentMd5, lockedWriteParams, type WriteLock } from './lock-params.ts';
import type { WriteLock } from './lock-params.ts';

/** One version of an object, or a delete marker, as ListObjectVersions names it (keys relative to the location). */
export interface ObjectVersion {
  key: string;
  versionId: string;
  /** the version a plain GET answers (for a delete marker: the object is hidden) */
  latest: boolean;
  deleteMarker: boolean;
  size: number;
  lastModified: Date | undefined;
}

/** What the backup store asks of a lock-enabled bucket; keys relative to the location. */
export interface ObjectLockPort {
  /** the retention of an object's current version (or of `versionId`); `until` absent when none; undefined when no such object */
  retention(key: string, versionId?: string): Promise<{ mode?: string; until?: Date } | undefined>;
  /** retains the current version at least until `lock.until`: 'extended', 'kept' (already as long or longer) or 'absent' */
  extend(key: string, lock: WriteLock): Promise<'extended' | 'kept' | 'absent'>;
  /** every version and delete marker under a folder, each key's newest first */
  versions(folder: string): AsyncIterable<ObjectVersion>;
  deleteVersion(key: string, versionId: string): Promise<void>;
}

/** Is Object Lock enabled on the bucket? `false` when S3 answers that it has no Object Lock configuration. */
export async function bucketHasObjectLock(client: S3Client, bucket: string): Promise<boolean> {
  try {
    const answer = await client.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
    return answer.ObjectLockConfiguration?.ObjectLockEnabled === 'Enabled';
  } catch (error) {
    // AWS and radosgw answer 404 ObjectLockConfigurationNotFoundError (tests/store/object-lock.rgw.ts)
    if ((error as { name?: string }).name === 'ObjectLockConfigurationNotFoundError') return false;
    throw error;
  }
}

/** The one sentence that says how to get a bucket that can hold immutable backups. */
export function objectLockMissing(bucket: string, setting: string): string {
  return `bucket "${bucket}" has no Object Lock (needed by ${setting}, given only at creation): use a bucket created with --object-lock-enabled-for-bucket, or unset ${setting}`;
}

/** ObjectLockPort over one bucket and location prefix. */
export class S3ObjectLock implements ObjectLockPort {
  constructor(private readonly client: S3Client, private readonly bucket: string, private readonly fullKey: (key: string) => string) {}

  /** one sentence naming the object, never the credentials (objects.ts classifyStoreError) */
  private async call<T>(doing: string, key: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw classifyStoreError(error, doing, `s3://${this.bucket}/${this.fullKey(key)}`, key);
    }
  }

  private relative(full: string): string {
    const prefix = this.fullKey('');
    return full.startsWith(prefix) ? full.slice(prefix.length) : full;
  }

  async retention(key: string, versionId?: string): Promise<{ mode?: string; until?: Date } | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), ...(versionId ? { VersionId: versionId } : {}) }));
      return { ...(head.ObjectLockMode ? { mode: head.ObjectLockMode } : {}), ...(head.ObjectLockRetainUntilDate ? { until: head.ObjectLockRetainUntilDate } : {}) };
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      // a delete marker's HEAD answers 404 (or 405 with its version id): nothing retained there
      if (status === 404 || status === 405) return undefined;
      throw classifyStoreError(error, 'read the retention of', `s3://${this.bucket}/${this.fullKey(key)}`, key);
    }
  }

  async extend(key: string, lock: WriteLock): Promise<'extended' | 'kept' | 'absent'> {
    const now = await this.retention(key);
    if (!now) return 'absent';
    // never shorter, and never GOVERNANCE over COMPLIANCE: S3 refuses both, and asking would only be noise
    if (now.until && now.until.getTime() >= lock.until.getTime()) return 'kept';
    const mode = now.mode === 'COMPLIANCE' ? 'COMPLIANCE' : lock.mode;
    await this.call('extend the retention of', key, () => this.client.send(new PutObjectRetentionCommand({ Bucket: this.bucket, Key: this.fullKey(key), Retention: { Mode: mode, RetainUntilDate: lock.until } })));
    return 'extended';
  }

  async *versions(folder: string): AsyncGenerator<ObjectVersion> {
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    for (;;) {
      const page = await this.call('list the versions of', folder, () => this.client.send(new ListObjectVersionsCommand({ Bucket: this.bucket, Prefix: this.fullKey(folder), KeyMarker: keyMarker, VersionIdMarker: versionIdMarker })));
      const entries: ObjectVersion[] = [
        ...(page.Versions ?? []).map((v) => ({ key: v.Key, versionId: v.VersionId, latest: v.IsLatest === true, deleteMarker: false, size: v.Size ?? 0, lastModified: v.LastModified })),
        ...(page.DeleteMarkers ?? []).map((m) => ({ key: m.Key, versionId: m.VersionId, latest: m.IsLatest === true, deleteMarker: true, size: 0, lastModified: m.LastModified })),
      ].filter((v): v is ObjectVersion & { key: string; versionId: string } => v.key !== undefined && v.versionId !== undefined)
        .map((v) => ({ ...v, key: this.relative(v.key) }));
      // S3 lists a key's versions and markers newest first, but in two arrays: merged back into one order
      entries.sort((a, b) => (a.key === b.key ? (b.lastModified?.getTime() ?? 0) - (a.lastModified?.getTime() ?? 0) || Number(b.latest) - Number(a.latest) : a.key < b.key ? -1 : 1));
      yield* entries;
      if (!page.IsTruncated) return;
      keyMarker = page.NextKeyMarker;
      versionIdMarker = page.NextVersionIdMarker;
      if (!keyMarker) return;
    }
  }

  async deleteVersion(key: string, versionId: string): Promise<void> {
    await this.call(`delete version ${versionId} of`, key, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), VersionId: versionId })));
  }
}
