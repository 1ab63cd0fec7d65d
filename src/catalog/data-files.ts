// The index of a backup's data files: every object the volume movers and the control-plane copies left under the
// backup's volumes/ and control-plane/ folders, with its size and the ETag the S3 server gave it. The index is a file
// of the backup whose sha256 the manifest records, so with an encryption key the manifest's HMAC covers the volume
// files too, and a restore compares the folders with the index (one listing, no download) before its first write.
//
// Why the server's ETag and not rclone's hash: for a multipart upload, rclone's S3 backend keeps the file's MD5 in
// user metadata it writes itself (X-Amz-Meta-Md5chksum, rclone/rclone backend/s3/s3.go), which anyone who can write
// the bucket can set to anything. The ETag is computed by the server from the bytes it stored (the MD5 of a plaintext
// single-part upload, an MD5 over the parts' MD5s and `-<parts>` for a multipart one, another server-made value under
// SSE-C or SSE-KMS: AWS's S3 API reference, Object.ETag; minio/minio internal/etag/etag.go): a rewrite of the object
// gets a new one, whatever the writer claims.
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { DATA_FILES_INDEX } from '../store/layout.ts';
import type { BackupStore } from '../store/backup-store.ts';
import type { Manifest } from '../archive/manifest.ts';
import type { Problem } from '../archive/reader.ts';

// Velero ignores the files of a backup folder it does not know, the index among them.
export { DATA_FILES_INDEX };

const IndexSchema = z.object({
  version: z.literal(1),
  /**
   * key relative to the backup folder → what the server said of it, and for a MinIO mirror's objects the sha256 of
   * their bytes, from the listing the mirror Job made by reading them back (src/controlplane/scripts.ts)
   */
  files: z.record(z.string(), z.object({ size: z.number().int().nonnegative(), etag: z.string().optional(), sha256: z.string().regex(/^[0-9a-f]{64}$/).optional() })),
});
type DataFilesIndex = z.infer<typeof IndexSchema>;

function foldersOf(store: BackupStore, id: string): string[] {
  const keys = store.keys(id);
  return [keys.volumesFolder, keys.controlPlaneFolder];
}

async function listDataFiles(store: BackupStore, id: string): Promise<DataFilesIndex['files']> {
  const folder = store.keys(id).folder;
  const files: DataFilesIndex['files'] = {};
  for (const prefix of foldersOf(store, id)) {
    for await (const object of store.listObjects(prefix)) {
      files[object.key.slice(folder.length)] = { size: object.size, ...(object.etag ? { etag: object.etag } : {}) };
    }
  }
  return files;
}

/** What a MinIO mirror Job leaves beside each bucket's copy: `<sha256>  <path>` per object (rclone hashsum's format). */
const MIRROR_LISTING = /^(control-plane\/minio\/.+)\.sha256sums$/;

/** Adds each mirrored object's sha256 from its bucket's listing; an unreadable line leaves that object without one. */
async function addMirrorSha256s(store: BackupStore, id: string, files: DataFilesIndex['files']): Promise<void> {
  for (const name of Object.keys(files)) {
    const folder = MIRROR_LISTING.exec(name)?.[1];
    if (!folder) continue;
    const listing = await store.readFile(id, name);
    for (const line of (listing?.toString('utf8') ?? '').split('\n')) {
      const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
      const entry = m ? files[`${folder}/${m[2]}`] : undefined;
      if (m && entry) entry.sha256 = m[1]!;
    }
  }
}

/** The gzipped index of what is under the backup's data folders now, or undefined when they are empty. */
export async function indexDataFiles(store: BackupStore, id: string): Promise<Buffer | undefined> {
  const files = await listDataFiles(store, id);
  await addMirrorSha256s(store, id, files);
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  if (Object.keys(sorted).length === 0) return undefined;
  return gzipSync(JSON.stringify({ version: 1, files: sorted } satisfies DataFilesIndex));
}

/**
 * Compares the backup's data folders with its index. A backup whose manifest records no index (older, or one without
 * volume or control-plane data) has nothing to compare: `[]`. Each difference is one problem naming the file.
 * `readBytes` (verify-backup): the files the index gives a sha256 are downloaded and hashed too.
 */
export async function checkDataFiles(store: BackupStore, id: string, manifest: Manifest, options: { readBytes?: boolean } = {}): Promise<Problem[]> {
  const expectedSha = manifest.checksums.files[DATA_FILES_INDEX];
  if (expectedSha === undefined) return [];
  const key = store.keys(id).dataFilesIndex;
  const problem = (message: string, path = key): Problem => ({ kind: 'data-file', path, message });
  const bytes = await store.readFile(id, DATA_FILES_INDEX);
  if (!bytes) return [problem(`The index of the volume and control-plane files of backup ${id} is missing.`)];
  if (createHash('sha256').update(bytes).digest('hex') !== expectedSha) {
    return [problem(`The index of the volume and control-plane files of backup ${id} does not match its checksum in the manifest.`)];
  }
  let index: DataFilesIndex;
  try {
    index = IndexSchema.parse(JSON.parse(gunzipSync(bytes).toString('utf8')));
  } catch {
    return [problem(`The index of the volume and control-plane files of backup ${id} cannot be read.`)];
  }
  const found = await listDataFiles(store, id);
  const problems: Problem[] = [];
  for (const [path, expected] of Object.entries(index.files)) {
    const actual = found[path];
    if (!actual) problems.push(problem(`File ${path} of backup ${id} is missing from the bucket.`, path));
    else if (actual.size !== expected.size || (expected.etag !== undefined && actual.etag !== expected.etag)) {
      problems.push(problem(`File ${path} of backup ${id} was changed in the bucket after the backup was made.`, path));
    } else if (options.readBytes && expected.sha256 !== undefined && (await sha256Of(store, id, path)) !== expected.sha256) {
      problems.push(problem(`File ${path} of backup ${id} does not match its sha256 in the index.`, path));
    }
  }
  for (const path of Object.keys(found)) {
    if (!Object.hasOwn(index.files, path)) problems.push(problem(`File ${path} of backup ${id} was added to the bucket after the backup was made.`, path));
  }
  return problems;
}

async function sha256Of(store: BackupStore, id: string, path: string): Promise<string | undefined> {
  const body = await store.openFile(id, path);
  if (!body) return undefined;
  const digest = createHash('sha256');
  for await (const chunk of body) digest.update(chunk as Buffer);
  return digest.digest('hex');
}
