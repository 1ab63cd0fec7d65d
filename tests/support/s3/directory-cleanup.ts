// Upstream: github.com/jamhall/s3rver lib/stores/filesystem.js.
// s3rver's filesystem store removes the folders a delete leaves empty (jamhall/s3rver lib/stores/filesystem.js
// deleteObject). A PUT into the same folder at that moment (restic's movers write and delete their lock files under one
// locks/ prefix, several at once) then opens its file in a folder that was just removed: its write stream fails with
// ENOENT, and since s3rver's putObject attaches no error handler to that stream, the whole server process dies. Real S3
// has no folders: a PUT never fails because another key was deleted. So a folder is removed only while no write under
// it is under way, and a write waits for a removal of one of its folders to finish before it makes them again.
import { promises as fs, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

interface Store {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getBucketPath(bucket: string): string;
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata: unknown): Promise<Record<string, unknown>>;
  deleteObject(bucket: string, key: string): Promise<void>;
}

export function guardDirectoryCleanup(store: Store): void {
  const writers = new Map<string, number>();
  const removing = new Map<string, Promise<void>>();
  const foldersOf = (bucket: string, key: string): string[] => {
    const root = store.getBucketPath(bucket);
    const folders: string[] = [];
    for (let dir = dirname(store.getResourcePath(bucket, key, 'object')); dir.startsWith(root) && dir !== root; dir = dirname(dir)) folders.push(dir);
    return folders;
  };
  const writing = async <T>(bucket: string, key: string, write: () => Promise<T>): Promise<T> => {
    const folders = foldersOf(bucket, key);
    for (const dir of folders) writers.set(dir, (writers.get(dir) ?? 0) + 1);
    try {
      await Promise.all(folders.map((dir) => removing.get(dir)));
      return await write();
    } finally {
      for (const dir of folders) {
        const left = (writers.get(dir) ?? 1) - 1;
        if (left === 0) writers.delete(dir);
        else writers.set(dir, left);
      }
    }
  };
  const putObject = store.putObject.bind(store);
  store.putObject = (object) => writing(object.bucket, object.key, () => putObject(object));
  const copyObject = store.copyObject.bind(store);
  store.copyObject = (srcBucket, srcKey, destBucket, destKey, metadata) => writing(destBucket, destKey, () => copyObject(srcBucket, srcKey, destBucket, destKey, metadata));
  store.deleteObject = async (bucket, key) => {
    await Promise.all(['object', 'object.md5', 'metadata.json', 'object.copied-at'].map((resource) =>
      fs.unlink(store.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      })));
    for (const dir of foldersOf(bucket, key)) {
      if (writers.has(dir)) return;
      let entries: string[];
      try {
        entries = readdirSync(dir);
      } catch {
        return;
      }
      if (entries.length > 0) return;
      const removal = fs.rmdir(dir).catch(() => undefined);
      removing.set(dir, removal);
      await removal;
      removing.delete(dir);
    }
  };
}
