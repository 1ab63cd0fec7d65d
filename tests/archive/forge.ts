// What someone who can write the bucket but does not hold the encryption key can do to a backup: rewrite tar entries,
// then recompute every sha256 the manifest records, the manifest's own sha256 in the marker, and either drop the HMAC
// or leave the old one in place. Everything is rewritten consistently, so only the keyed HMAC (or the sealing's AAD)
// can tell.
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { TarDecoder } from '../../src/archive/tar-decode.ts';
import { TarEncoder } from '../../src/archive/tar.ts';
import { MANIFEST_HMAC_ANNOTATION } from '../../src/archive/authenticate.ts';
import { MANIFEST_SHA256_ANNOTATION } from '../../src/archive/velero-backup.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { ObjectStore } from '../../src/store/objects.ts';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** Every tar entry of a backup, by path, in archive order. */
export async function tarEntries(store: ObjectStore, id: string): Promise<Map<string, Buffer>> {
  const decoder = new TarDecoder({ maxBodyBytes: 16 * 1024 * 1024 });
  const entries = new Map<string, Buffer>();
  for (const entry of decoder.push(gunzipSync(await store.getBytes(backupKeys(id).tarball)))) {
    if (entry.type === 'file' && entry.body) entries.set(entry.name, entry.body);
  }
  decoder.end();
  return entries;
}

export type HmacForgery = 'drop' | 'keep-old';

/** Rewrites backup `id` as `edit` leaves its entries, with fresh sha256s everywhere and the HMAC dropped or kept stale. */
export async function forgeBackup(
  store: ObjectStore, id: string, edit: (entries: Map<string, Buffer>) => void | Promise<void>, hmac: HmacForgery,
  editManifest: (manifest: Record<string, unknown>) => void = () => undefined,
): Promise<void> {
  const keys = backupKeys(id);
  const entries = await tarEntries(store, id);
  await edit(entries);
  const chunks: Buffer[] = [];
  const tar = new TarEncoder(64 * 1024, (chunk) => chunks.push(Buffer.from(chunk)));
  for (const [name, body] of entries) tar.add({ name, mode: 0o755, mtimeSeconds: 0 }, body);
  tar.finish();
  const tarball = gzipSync(Buffer.concat(chunks));

  const manifest = JSON.parse((await store.getBytes(keys.manifest)).toString('utf8')) as {
    bytes: number; checksums: { tarball: string; entries: Record<string, string> };
  };
  manifest.checksums.entries = Object.fromEntries([...entries].map(([name, body]) => [name, sha256(body)]));
  manifest.checksums.tarball = sha256(tarball);
  manifest.bytes = tarball.length;
  editManifest(manifest);
  const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 1));

  const marker = JSON.parse((await store.getBytes(keys.marker)).toString('utf8')) as { metadata: { annotations: Record<string, string> } };
  marker.metadata.annotations[MANIFEST_SHA256_ANNOTATION] = sha256(manifestBytes);
  if (hmac === 'drop') delete marker.metadata.annotations[MANIFEST_HMAC_ANNOTATION];

  await store.put(keys.tarball, tarball, 'application/gzip');
  await store.put(keys.manifest, manifestBytes, 'application/json');
  await store.put(keys.marker, Buffer.from(JSON.stringify(marker, null, 1)), 'application/json');
}
