// Server-side copies (CopyObject) that cost the test server no copy of the bytes: the new object's body is a hard link
// to the source's file, so a copy takes the same few system calls whatever the object's size.
//
// Why: s3rver's filesystem store (github.com/jamhall/s3rver lib/stores/filesystem.js, copyObject) copies the body file with
// fs-extra's copy, which is fs.copyFile, i.e. copy_file_range: on ext4 the kernel still reads and writes every byte, on
// the same two cores the volume movers run on. A real S3 service performs a copy on its own machines; the cluster that
// asked for it spends only the request. What a client can observe stays as s3rver shows it:
// - the ETag and the stored metadata are what s3rver's copyObject leaves: the source's `.md5` and `metadata.json`
//   files beside the body are copied (COPY directive) or the request's headers stored (REPLACE directive);
// - Last-Modified is the time of the copy (s3rver reads it from the body file's mtime, which a link shares with its
//   source, so the copy's time is kept in a marker file beside the body and read back in its place);
// - objects stay independent: every write of a body (PUT, CompleteMultipartUpload, another copy onto the key) first
//   unlinks the old file, so it never writes through a link into another object, and a delete unlinks only its own.
import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';

/** The part of s3rver's FilesystemStore (lib/stores/filesystem.js) this module changes. */
export interface S3rverFilesystemStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
  putMetadata(bucket: string, key: string, metadata: unknown, md5?: string): Promise<void>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata: unknown): Promise<Record<string, unknown>>;
  deleteObject(bucket: string, key: string): Promise<void>;
}

/** the marker beside a copied body holding the copy's time; its name does not end in `object`, so listings skip it */
const COPIED_AT = 'object.copied-at';

async function removeIfPresent(path: string): Promise<void> {
  await fs.unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** Makes `store`'s CopyObject link the body instead of copying it; everything else it answers stays the same. */
export function shareCopiedBodies(store: S3rverFilesystemStore): void {
  const original = {
    getMetadata: store.getMetadata.bind(store),
    putObject: store.putObject.bind(store),
    copyObject: store.copyObject.bind(store),
    deleteObject: store.deleteObject.bind(store),
  };
  const body = (bucket: string, key: string) => store.getResourcePath(bucket, key, 'object');
  const copiedAt = (bucket: string, key: string) => store.getResourcePath(bucket, key, COPIED_AT);
  /** a key about to get a new body: its old file and copy time go, so nothing is written through a shared link */
  const release = async (bucket: string, key: string) => {
    await removeIfPresent(copiedAt(bucket, key));
    await removeIfPresent(body(bucket, key));
  };

  store.getMetadata = async (bucket, key) => {
    const metadata = await original.getMetadata(bucket, key);
    const copied = await fs.readFile(copiedAt(bucket, key), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    return copied ? { ...metadata, 'last-modified': copied } : metadata;
  };

  store.putObject = async (object) => {
    await release(object.bucket, object.key);
    return original.putObject(object);
  };

  store.copyObject = async (srcBucket, srcKey, destBucket, destKey, replacementMetadata) => {
    const source = body(srcBucket, srcKey);
    const target = body(destBucket, destKey);
    // A copy onto itself changes only the metadata (s3rver refuses it without REPLACE): its own code handles that.
    if (source === target) return original.copyObject(srcBucket, srcKey, destBucket, destKey, replacementMetadata);
    await fs.mkdir(dirname(target), { recursive: true });
    await release(destBucket, destKey);
    try {
      await fs.link(source, target);
    } catch (error) {
      // too many links to one file, or another file system: the bytes are copied as s3rver always did
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EMLINK' && code !== 'EXDEV') throw error;
      await fs.copyFile(source, target);
    }
    await fs.writeFile(copiedAt(destBucket, destKey), new Date().toUTCString());
    // The metadata as s3rver's copyObject leaves it: REPLACE stores the request's headers (and no new .md5, so the
    // ETag is the body's MD5 as s3rver computes it on the next read), COPY takes the source's metadata and .md5.
    if (replacementMetadata) {
      await store.putMetadata(destBucket, destKey, replacementMetadata);
    } else {
      await Promise.all(['metadata.json', 'object.md5'].map((resource) =>
        fs.copyFile(store.getResourcePath(srcBucket, srcKey, resource), store.getResourcePath(destBucket, destKey, resource))));
    }
    return store.getMetadata(destBucket, destKey);
  };

  store.deleteObject = async (bucket, key) => {
    await removeIfPresent(copiedAt(bucket, key));
    return original.deleteObject(bucket, key);
  };
}
