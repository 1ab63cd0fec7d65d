// Decodes a backup from the streams the store opens: sha256 of the tarball → gunzip → tar entries → items checked against the
// manifest as they pass. Entry names are untrusted and only ever parsed, never used as paths.
import { createHash, hash } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { KubeObject } from '../kube/types.ts';
import type { ChecksumIndex } from './checksum-index.ts';
import { parseManifest, type Manifest } from './manifest.ts';
import { METADATA_VERSION_PATH, parseItemPath, VELERO_FORMAT_VERSION, type ParsedItemPath } from './paths.ts';
import { TarDecoder } from './tar-decode.ts';
import { MANIFEST_SHA256_ANNOTATION, MarkerSchema, type Marker } from './velero-backup.ts';
import { MANIFEST_HMAC_ANNOTATION, ManifestVerifier, type Authentication } from './authenticate.ts';
import { KfuError } from '../errors/index.ts';

export type ProblemKind =
  | 'missing-marker'
  | 'bad-marker'
  | 'missing-manifest'
  | 'bad-manifest'
  | 'missing-tarball'
  | 'corrupt-tarball'
  | 'tarball-checksum'
  | 'checksum-mismatch'
  | 'missing-item'
  | 'extra-item'
  | 'duplicate-item'
  | 'unsafe-path'
  | 'unreadable-item'
  | 'missing-file'
  | 'file-checksum'
  | 'unsupported-format'
  | 'sealed-value'
  | 'data-file';

export interface Problem {
  kind: ProblemKind;
  /** the tar entry or file concerned, when there is one */
  path?: string;
  message: string;
}

/** A problem found while reading, thrown when the caller did not ask to collect problems. */
export class ArchiveError extends KfuError {
  static override readonly errorId = 'ArchiveError';
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.message, { kind: 'corrupt' });
    this.problem = problem;
  }
}

export interface ArchiveItem extends ParsedItemPath {
  object: KubeObject;
  /** the entry's bytes, which `object` was parsed from (and `sha256` is of) */
  json: Buffer;
  sha256: string;
  /** true when the manifest listed this path with the same checksum; false when there is no manifest */
  verified: boolean;
}

/** Kubernetes caps objects near 1.5 MiB; anything far larger in an archive is refused instead of buffered. */
const MAX_ENTRY_BYTES = 16 * 1024 * 1024;

/**
 * `changed` is set when the marker records the manifest's sha256 and the manifest no longer matches it: the manifest
 * was altered after the backup was committed (its item checksums can still be used to find which items differ).
 * `authentication` is set only when an encryption key was given: what the marker's HMAC says of the manifest's bytes.
 * `checksums` are the manifest's entries, packed and read-only, apart from the manifest so a caller can let them go.
 */
export type ManifestRead =
  | { state: 'present'; manifest: Manifest; checksums: ChecksumIndex; changed?: string; authentication?: Authentication }
  | { state: 'absent' }
  | { state: 'invalid'; reason: string };

/**
 * Decodes manifest bytes as they arrive, hashing them (and with a key checking the marker's HMAC over them) in the
 * same pass, against the marker already read.
 */
export async function decodeManifest(
  body: AsyncIterable<Buffer | Uint8Array>,
  id: string,
  marker: MarkerRead,
  encryptionKey?: string | Buffer,
  /** the manifest's length when the store said it: the bytes then go into one buffer as they arrive */
  size?: number,
): Promise<ManifestRead> {
  // Older backups and Velero's own markers carry no manifest digest: nothing to compare, as before.
  const annotations = marker.state === 'present' ? (marker.marker.metadata.annotations as Record<string, unknown> | undefined) : undefined;
  const verifier = encryptionKey !== undefined && encryptionKey.length > 0
    ? new ManifestVerifier(encryptionKey, annotations?.[MANIFEST_HMAC_ANNOTATION])
    : undefined;
  // Hashed as it arrives; the bytes are kept (not decoded to text: parseManifest reads the checksum entries, nearly
  // all of a large manifest, straight from them into the packed index, and JSON.parse only sees the rest).
  const hasher = createHash('sha256');
  const received = new ManifestBytes(size);
  for await (const chunk of body) {
    hasher.update(chunk);
    verifier?.update(chunk as Buffer);
    received.add(chunk as Buffer);
  }
  const digest = hasher.digest('hex');
  const authentication = verifier?.verdict();
  const bytes = received.bytes();
  const check = parseManifest(bytes);
  if (!check.ok) return { state: 'invalid', reason: check.reason };
  if (check.manifest.backupId !== id) return { state: 'invalid', reason: `it names backup ${check.manifest.backupId}` };
  const recorded = annotations?.[MANIFEST_SHA256_ANNOTATION];
  const read: ManifestRead = { state: 'present', manifest: check.manifest, checksums: check.checksums, ...(authentication ? { authentication } : {}) };
  if (typeof recorded === 'string' && recorded !== digest) {
    return { ...read, changed: 'its sha256 differs from the one velero-backup.json recorded when the backup was committed' };
  }
  return read;
}

const MAX_PREALLOCATED = 256 * 1024 * 1024;

/**
 * A manifest's bytes as they arrive. With its length known they are copied into one buffer of that length, so the
 * chunks and a concatenated copy of them are never held together (at P=5000 a manifest is ~10 MB, and that double was
 * part of a restore's peak, docs/performance.md); otherwise, or when more bytes come than were announced, the chunks
 * are kept and joined at the end.
 */
class ManifestBytes {
  private whole: Buffer | undefined;
  private filled = 0;
  private chunks: Buffer[] = [];
  private length = 0;

  constructor(expected: number | undefined) {
    // a length past any real manifest's is not trusted with one allocation up front: the chunks then grow as they come
    if (expected !== undefined && Number.isInteger(expected) && expected > 0 && expected <= MAX_PREALLOCATED) this.whole = Buffer.allocUnsafe(expected);
  }

  add(chunk: Buffer): void {
    this.length += chunk.length;
    if (this.whole && this.filled + chunk.length <= this.whole.length) {
      this.filled += chunk.copy(this.whole, this.filled);
      return;
    }
    if (this.whole) {
      // longer than announced: what was copied so far becomes the first chunk
      this.chunks.push(this.whole.subarray(0, this.filled));
      this.whole = undefined;
    }
    this.chunks.push(chunk);
  }

  bytes(): Buffer {
    if (this.whole) return this.whole.subarray(0, this.filled);
    const joined = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    this.chunks = [];
    return joined;
  }
}

export type MarkerRead = { state: 'present'; marker: Marker } | { state: 'absent' } | { state: 'invalid'; reason: string };

/** Decodes the bytes of a velero-backup.json. */
export function decodeMarker(bytes: Buffer): MarkerRead {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { state: 'invalid', reason: 'it is not valid JSON' };
  }
  const parsed = MarkerSchema.safeParse(json);
  if (!parsed.success) return { state: 'invalid', reason: 'it is not a Velero Backup object' };
  return { state: 'present', marker: parsed.data };
}

export interface ReadItemsOptions {
  /**
   * the manifest and its entry checksums to check the archive against (a present ManifestRead is one); null for a
   * foreign archive (nothing to check against)
   */
  expected: ExpectedArchive | null;
  /**
   * which copies to yield: the unversioned ones (default, what restore uses), the preferred-version ones, or every
   * copy (preferred, unversioned and those in other version folders)
   */
  copies?: 'unversioned' | 'preferred' | 'all';
  /**
   * Collects problems and carries on past them. Without it the first problem throws an ArchiveError, which is
   * what a restore wants: never apply an archive that does not match its manifest.
   */
  onProblem?: (problem: Problem) => void;
}

/** What a backup's manifest says its archive holds. */
export interface ExpectedArchive {
  manifest: Manifest;
  checksums: ChecksumIndex;
}

export interface TarballStats {
  bytes: number;
  sha256: string;
  entries: number;
}

/** Writes to a stream honouring its backpressure; false when the stream broke. */
async function writeTo(sink: Writable, chunk: Buffer): Promise<boolean> {
  if (sink.destroyed || sink.writableEnded) return false;
  if (sink.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      sink.off('drain', done);
      sink.off('close', done);
      resolve();
    };
    sink.on('drain', done);
    sink.on('close', done);
  });
  return !sink.destroyed;
}

/**
 * Decodes the tarball of backup `id` from `source`, checking each item against the manifest as it passes; `path` is
 * how problems name the tarball. When the iteration completes, the tarball checksum and the set of
 * entries are compared with the manifest too, so a full pass is a full verification. `stats` is filled at the end.
 */
export async function* decodeItems(
  source: Readable,
  id: string,
  path: string,
  options: ReadItemsOptions,
  stats: Partial<TarballStats> = {},
): AsyncGenerator<ArchiveItem> {
  const manifest = options.expected?.manifest ?? null;
  const copies = options.copies ?? 'unversioned';
  const report = (problem: Problem) => {
    if (!options.onProblem) throw new ArchiveError(problem);
    options.onProblem(problem);
  };

  const tarballHash = createHash('sha256');
  let tarballBytes = 0;
  // 64 KiB of output per call into zlib instead of 16: a quarter of the round trips to the thread pool
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  let gunzipError: Error | undefined;
  gunzip.on('error', (error) => {
    gunzipError = error;
  });
  // The pump hashes every downloaded byte even after gunzip gave up, so a corrupt tarball still gets its checksum compared.
  let downloadError: Error | undefined;
  const pump = (async () => {
    try {
      let feeding = true;
      for await (const chunk of source) {
        tarballHash.update(chunk as Buffer);
        tarballBytes += (chunk as Buffer).length;
        if (feeding) feeding = await writeTo(gunzip, chunk as Buffer);
      }
      if (feeding) gunzip.end();
    } catch (error) {
      downloadError = error as Error;
      gunzip.destroy(error as Error);
    }
  })();

  // Which of the manifest's entries were met, by position: one byte each, beside the read-only index (a set of the
  // paths not met yet would be a second hash table of every path). Names outside the manifest (every name of a
  // foreign archive) are remembered apart, to tell a duplicate.
  const index = options.expected?.checksums;
  const positionOf = index?.orderedLookup();
  const met = index ? new Uint8Array(index.size) : undefined;
  const seenOutside = new Set<string>();
  let entries = 0;
  let completed = false;
  try {
    try {
      const decoder = new TarDecoder({ maxBodyBytes: MAX_ENTRY_BYTES });
      for await (const chunk of gunzip) {
        for (const entry of decoder.push(chunk as Buffer)) {
          const { name, type } = entry;
          entries++;
          if (type === 'directory') continue;
          const parsed = name === METADATA_VERSION_PATH ? undefined : parseItemPath(name);
          if (type !== 'file' || (parsed && !parsed.ok)) {
            const why = type !== 'file' ? `is a ${type} entry, not a file` : (parsed as { reason: string }).reason;
            report({ kind: 'unsafe-path', path: JSON.stringify(name), message: `Entry ${JSON.stringify(name)} ${why}; it was ignored.` });
            continue;
          }
          if (entry.body === undefined) {
            report({ kind: 'unreadable-item', path: name, message: `Entry ${name} is ${entry.size} bytes, too large to be an object.` });
            continue;
          }
          const content = entry.body;
          // one-shot: a Hash object per entry cost twice as much for objects of a few KiB
          const digest = hash('sha256', content, 'hex');
          let expected: string | undefined;
          let duplicate: boolean;
          const at = positionOf?.(name);
          if (at !== undefined) {
            duplicate = met![at] === 1;
            if (!duplicate) {
              expected = index!.digestAt(at);
              met![at] = 1;
            }
          } else duplicate = false;
          if (expected === undefined && !duplicate) {
            duplicate = seenOutside.has(name);
            seenOutside.add(name);
          }
          if (duplicate) {
            report({ kind: 'duplicate-item', path: name, message: `Entry ${name} appears more than once in the tarball.` });
            continue;
          }
          let verified = false;
          if (manifest) {
            if (expected === undefined) {
              report({ kind: 'extra-item', path: name, message: `Entry ${name} is in the tarball but not in the manifest.` });
              continue;
            }
            if (expected !== digest) {
              report({ kind: 'checksum-mismatch', path: name, message: `Entry ${name} does not match its checksum in the manifest.` });
              continue;
            }
            verified = true;
          }
          if (!parsed) {
            const version = content.toString('utf8').trim();
            if (version.split('.')[0] !== VELERO_FORMAT_VERSION.split('.')[0]) {
              report({ kind: 'unsupported-format', path: name, message: `The archive format is ${version}; only ${VELERO_FORMAT_VERSION} is supported.` });
            }
            continue;
          }
          const item = parsed.item;
          // Copies in other version folders are checked like the rest, and yielded only to a caller that asks for all.
          const copy = item.preferredVersion !== undefined ? 'preferred' : item.otherVersion !== undefined ? 'other' : 'unversioned';
          const wanted = copies === 'all' || copies === copy;
          if (!wanted) continue;
          let object: KubeObject;
          try {
            object = JSON.parse(content.toString('utf8')) as KubeObject;
            if (!object || typeof object !== 'object' || typeof object.kind !== 'string' || typeof object.metadata !== 'object' || object.metadata === null) {
              throw new Error('not an object');
            }
          } catch {
            report({ kind: 'unreadable-item', path: name, message: `Entry ${name} is not a Kubernetes object in JSON.` });
            continue;
          }
          if (object.metadata.name !== item.name || (object.metadata.namespace ?? undefined) !== item.namespace) {
            report({ kind: 'unreadable-item', path: name, message: `Entry ${name} holds an object named differently from its path.` });
            continue;
          }
          yield { ...item, object, json: content, sha256: digest, verified };
        }
      }
      decoder.end();
    } catch (error) {
      if (error instanceof ArchiveError) throw error;
      if (!gunzipError && !downloadError) gunzipError = error as Error;
    }
    await pump;
    if (downloadError) throw downloadError;
    if (gunzipError) {
      report({
        kind: 'corrupt-tarball', path,
        message: `The tarball of backup ${id} is damaged or truncated and could not be read to the end.`,
      });
    }
    const sha = tarballHash.digest('hex');
    Object.assign(stats, { bytes: tarballBytes, sha256: sha, entries });
    if (manifest) {
      if (sha !== manifest.checksums.tarball || tarballBytes !== manifest.bytes) {
        report({ kind: 'tarball-checksum', path, message: `The tarball of backup ${id} does not match the checksum in its manifest.` });
      }
      let at = 0;
      for (const path of index!.paths()) if (met![at++] !== 1) report({ kind: 'missing-item', path, message: `Entry ${path} is in the manifest but missing from the tarball.` });
    }
    completed = true;
  } finally {
    if (!completed) {
      source.destroy();
      gunzip.destroy();
      await pump.catch(() => undefined);
    }
  }
}
