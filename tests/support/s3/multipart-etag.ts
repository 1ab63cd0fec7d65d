// Upstream: github.com/jamhall/s3rver lib/stores/filesystem.js putObjectMultipart; AWS S3's multipart ETag.
// The ETag of a multipart upload as AWS S3 and MinIO make it, for the tests that need to tell it from an MD5.
//
// s3rver (jamhall/s3rver lib/stores/filesystem.js putObjectMultipart) stores a completed multipart upload through its
// putObject, so the object's ETag is the MD5 of the whole body. AWS S3 gives such an object the MD5 of the
// concatenated binary MD5s of its parts, then `-` and the number of parts (S3 API reference, Object.ETag: "not an MD5
// digest of the object data" for multipart uploads); MinIO does the same (minio/minio internal/etag/etag.go,
// Multipart). A client that sees such an ETag cannot read the object's MD5 from it: rclone then takes the MD5 from
// the user metadata it wrote itself (rclone/rclone backend/s3/s3.go Object.Hash, X-Amz-Meta-Md5chksum). This wrapper
// rewrites the stored ETag (s3rver's `.md5` file beside the body, which every HEAD, GET and listing reads) after
// s3rver completes the upload; part uploads, single PUTs and copies keep their ETags.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';

/** The part of s3rver's FilesystemStore this module changes. */
export interface S3rverMultipartStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putObjectMultipart(bucket: string, uploadId: string, parts: Array<{ number: number; etag: string }>): Promise<{ md5: string; size: number }>;
}

/** The AWS form: md5(md5(part 1) ‖ … ‖ md5(part N)) in hex, `-N`; `parts` are the parts' ETags (their MD5s in hex). */
export function multipartEtag(parts: Array<{ number: number; etag: string }>): string {
  const ordered = [...parts].sort((a, b) => a.number - b.number);
  const digest = createHash('md5');
  for (const part of ordered) digest.update(Buffer.from(part.etag.replace(/"/g, ''), 'hex'));
  return `${digest.digest('hex')}-${ordered.length}`;
}

export function awsMultipartEtags(store: S3rverMultipartStore): void {
  const complete = store.putObjectMultipart.bind(store);
  store.putObjectMultipart = async (bucket, uploadId, parts) => {
    // the upload's folder (with the key) is removed once s3rver has stored the object
    const key = await fs.readFile(join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId, 'key'), 'utf8');
    const stored = await complete(bucket, uploadId, parts);
    const etag = multipartEtag(parts);
    await fs.writeFile(store.getResourcePath(bucket, key, 'object.md5'), etag);
    return { ...stored, md5: etag };
  };
}
