// The parameters of a write under S3 Object Lock (object-lock.ts says what S3 does with them): the mode and the date
// on the object's creation, and Content-MD5 on each PutObject and UploadPart, which AWS requires beside lock
// parameters (AWS S3 API reference, PutObject) and radosgw checks (BadDigest). Apart from object-lock.ts so that the
// upload code (objects.ts, part-upload.ts) needs nothing else of it.
import { createHash } from 'node:crypto';
import type { RetentionMode } from './immutability.ts';

/** The retention a write asks for. */
export interface WriteLock {
  mode: RetentionMode;
  until: Date;
}

/** The parameters of a PutObject or UploadPart of `body` under `lock` (none without one). */
export function lockedWriteParams(body: Uint8Array, lock: WriteLock | undefined): { ObjectLockMode?: RetentionMode; ObjectLockRetainUntilDate?: Date; ContentMD5?: string } {
  if (!lock) return {};
  return { ObjectLockMode: lock.mode, ObjectLockRetainUntilDate: lock.until, ContentMD5: contentMd5(body) };
}

/** Content-MD5: the base64 of the body's MD5 (RFC 1864), which S3 compares with what it received. */
export function contentMd5(body: Uint8Array): string {
  return createHash('md5').update(body).digest('base64');
}

