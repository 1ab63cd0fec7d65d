// The manifest's bytes as a stream, written as `JSON.stringify(document, null, 1)` would write them, and their sha256
// and (with an encryption key) HMAC for the marker. The entries (two paths per archived object) are written as text a
// few thousand at a time instead of built as one object and one string of 2×N members first, and the pieces are
// streamed to the upload instead of joined: on a large cluster, joining the manifest would be the backup's peak.
import { pipeline, Readable } from 'node:stream';
import { ManifestSigner } from './authenticate.ts';
import { Digest } from './digest.ts';
import type { Manifest } from './manifest.ts';

export interface ManifestDigests {
  sha256: string;
  hmac: string | undefined;
}

function* manifestChunks(manifest: Manifest, entries: Iterable<readonly [string, string]>): Generator<Buffer> {
  const sentinel = '\u0000entries';
  // The document's checksums in the schema's order, the entries a placeholder where their text goes.
  const { algorithm, tarball, files } = manifest.checksums;
  const checksums = { algorithm, tarball, entries: { [sentinel]: '' }, files };
  const text = JSON.stringify({ ...manifest, checksums }, null, 1);
  const marker = `${JSON.stringify(sentinel)}: ""`;
  const at = text.indexOf(marker);
  const lineStart = text.lastIndexOf('\n', at) + 1;
  const indent = text.slice(lineStart, at);
  yield Buffer.from(text.slice(0, lineStart));
  // Entries go out 256 at a time (about 40 kB): pieces of 600 kB, four thousand entries each, left about 11 MiB of
  // spent buffers behind at a P=5000 backup's commit before a GC took them (docs/performance.md).
  let batch: string[] = [];
  let first = true;
  for (const [path, sha] of entries) {
    batch.push(`${first ? '' : ',\n'}${indent}${JSON.stringify(path)}: "${sha}"`);
    first = false;
    if (batch.length === 256) {
      yield Buffer.from(batch.join(''));
      batch = [];
    }
  }
  yield Buffer.from(batch.join(''));
  yield Buffer.from(text.slice(at + marker.length));
}

/**
 * The manifest with `entries` (`[path, sha256 hex]` in tar order) as a stream, and a promise of its digests that
 * settles once whoever reads the stream has read it to its end.
 */
export function streamManifest(
  manifest: Manifest,
  entries: Iterable<readonly [string, string]>,
  encryptionKey: string | Buffer | undefined,
): { stream: Readable; digests: Promise<ManifestDigests> } {
  const signer = encryptionKey !== undefined ? new ManifestSigner(encryptionKey) : undefined;
  const digest = new Digest(signer);
  // pipeline, not pipe: a failure while writing the pieces destroys the digest stream, so the upload fails too
  pipeline(Readable.from(manifestChunks(manifest, entries)), digest, () => undefined);
  const digests = new Promise<ManifestDigests>((resolve, reject) => {
    digest.once('end', () => resolve({ sha256: digest.hash.digest('hex'), hmac: signer?.annotation() }));
    digest.once('error', reject);
  });
  digests.catch(() => undefined); // observed by the marker; a failed upload is reported by the store
  return { stream: digest, digests };
}
