// Upstream: github.com/jamhall/s3rver lib/stores/filesystem.js (listObjects), against Amazon S3's ListObjectsV2
// (docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html, CommonPrefixes: every key holding the delimiter
// after the prefix is rolled up into the prefix up to that delimiter, however deep the key goes).
// s3rver keeps each key's folders as folders and, with a delimiter, does not walk a folder below a common prefix. A
// common prefix none of whose keys sits directly in its first folder is then never seen: with only `w/d/f1` stored, a
// listing of prefix `` with delimiter `/` answers nothing at all, where S3 answers the common prefix `w/`. rclone's
// directory listings (a VFS over S3, as `rclone serve` keeps) then find no folder there. Here each folder the walk skips
// adds its common prefix when an object lies anywhere beneath it, as S3 would have rolled that object up.
import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';

interface ListResult { objects: { key: string }[]; commonPrefixes: string[]; isTruncated: boolean }
interface Store {
  getBucketPath(bucket: string): string;
  listObjects(bucket: string, options: { delimiter?: string; startAfter?: string; prefix?: string; maxKeys?: number }): Promise<ListResult>;
}

/** s3rver's file for an object's body: `<name>._S3rver_object` (lib/stores/filesystem.js S3RVER_SUFFIX). */
const OBJECT_FILE = /\._S3rver_object$/;

function holdsObject(dir: string): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  return entries.some((e) => (e.isDirectory() ? holdsObject(join(dir, e.name)) : OBJECT_FILE.test(e.name)));
}

export function rollUpDeepPrefixes(store: Store): void {
  const original = store.listObjects.bind(store);
  store.listObjects = async (bucket, options) => {
    const result = await original(bucket, options);
    // Only '/' maps onto s3rver's folders; other delimiters are answered as s3rver answers them.
    if (options.delimiter !== '/') return result;
    const prefix = options.prefix ?? '';
    const cut = prefix.lastIndexOf('/') + 1;
    const base = prefix.slice(0, cut);
    const partial = prefix.slice(cut);
    let folders: Dirent[];
    try {
      folders = readdirSync(join(store.getBucketPath(bucket), base), { withFileTypes: true });
    } catch {
      return result;
    }
    const last = result.objects.at(-1)?.key;
    const prefixes = new Set(result.commonPrefixes);
    for (const folder of folders) {
      if (!folder.isDirectory() || !folder.name.startsWith(partial)) continue;
      const common = `${base}${folder.name}/`;
      // after the page's start; and within the page when it was cut short, so that the next page does not repeat it
      if (options.startAfter && common <= options.startAfter) continue;
      if (result.isTruncated && last !== undefined && common > last) continue;
      if (!prefixes.has(common) && holdsObject(join(store.getBucketPath(bucket), base, folder.name))) prefixes.add(common);
    }
    return { ...result, commonPrefixes: [...prefixes].sort() };
  };
}
