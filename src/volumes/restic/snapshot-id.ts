// The full id of the snapshot a backup mover wrote, from the short id restic's summary gives (restic/restic
// internal/ui/backup/json.go Finish: snapshotID.Str(), the first 4 bytes in hex). restic names each snapshot file by its
// id (internal/backend/layout_default.go: `<repository>/snapshots/<id>`, no sub-folders), so the files under
// `<repository>/snapshots/<short id>` are the candidates; listing them costs one S3 request, where `restic snapshots`
// in the Pod would open the repository once more (the key's scrypt KDF, and an index download into an empty cache).
//
// Trust: a bucket writer may plant files there. The id chosen is pinned under the manifest's HMAC, and restic loads a
// snapshot only when the file's SHA-256 is its name and it decrypts and authenticates under the repository's key
// (internal/repository/repository.go LoadUnpacked), which no bucket writer holds. So a planted name can at worst make
// this backup fail (two candidates) or pin an id that no restore will accept (the real file removed): it can never
// make a restore write data the key holder did not store. Deleting the real snapshot does as much harm.
import { createS3Client } from '../../store/s3-client.ts';
import { ObjectStore } from '../../store/objects.ts';
import type { MoverS3Settings } from '../settings.ts';

const FULL_ID = /^[0-9a-f]{64}$/;

export type SnapshotLister = (prefix: string) => AsyncIterable<{ key: string }>;

/** Lists objects of the bucket (keys from the bucket's root) with the product's own S3 client; `close` ends it. */
export function bucketLister(s3: MoverS3Settings): { list: SnapshotLister; close: () => void } {
  // the movers' chain is the store's certificates joined (src/volumes/settings.ts); Node's `ca` reads every PEM in one entry
  const client = createS3Client({
    endpoint: s3.endpoint, bucket: s3.bucket, path: '', region: s3.region ?? 'us-east-1', accessKey: s3.accessKey, secretKey: s3.secretKey,
    uriStyle: s3.uriStyle === 'host' ? 'host' : 'path', ...(s3.tlsCaChain ? { tlsCaChain: [s3.tlsCaChain] } : {}),
  });
  const objects = new ObjectStore({ client, bucket: s3.bucket, prefix: '' });
  return { list: (prefix) => objects.list(prefix), close: () => client.destroy() };
}

/**
 * The one snapshot of `repository` (its key prefix from the bucket's root) whose id starts with `shortId`. Throws one
 * sentence when there is none or more than one.
 */
export async function resolveSnapshotId(list: SnapshotLister, repository: string, shortId: string): Promise<string> {
  const folder = `${repository}/snapshots/`;
  const found: string[] = [];
  for await (const object of list(`${folder}${shortId}`)) {
    const name = object.key.slice(object.key.lastIndexOf('/') + 1);
    if (object.key === `${folder}${name}` && FULL_ID.test(name) && name.startsWith(shortId)) found.push(name);
  }
  if (found.length === 1) return found[0]!;
  throw new Error(found.length === 0
    ? `restic reported snapshot ${shortId}, but ${folder} in the bucket holds no snapshot whose id begins with it`
    : `restic reported snapshot ${shortId}, and ${found.length} snapshots in ${folder} begin with it, so the backup cannot tell which is its own`);
}
