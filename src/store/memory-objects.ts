// Objects in a Map, behind the same methods the backup store asks of ObjectStore (BackupObjects): what engine unit
// tests, fuzzing and benches put under a MemoryBackupStore, where a server per case would cost more than the case.
// It answers as S3 does where the backup store depends on it: keys listed in byte order, a missing key is a
// StoreError with condition 'not-found', and an aborted upload leaves no object.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { normalizePrefix } from './layout.ts';
import { StoreError, type BackupObjects, type ObjectInfo, type UploadHandle } from './objects.ts';

interface Stored {
  bytes: Buffer;
  lastModified: Date;
  etag: string;
}

export class MemoryObjects implements BackupObjects {
  readonly bucket: string;
  readonly prefix: string;
  /** key relative to the prefix → bytes; tests reach in to tamper with an archive as a bad disk or an attacker would */
  private readonly objects = new Map<string, Stored>();
  private readonly now: () => Date;

  constructor(options: { bucket?: string; prefix?: string; now?: () => Date } = {}) {
    this.bucket = options.bucket ?? 'memory';
    this.prefix = normalizePrefix(options.prefix);
    this.now = options.now ?? (() => new Date());
  }

  url(key = ''): string {
    return `s3://${this.bucket}/${this.prefix ? `${this.prefix}/${key}` : key}`;
  }

  /** The bytes stored under a key, or undefined. */
  bytesOf(key: string): Buffer | undefined {
    return this.objects.get(key)?.bytes;
  }

  /** A copy with the same objects, for a test that damages one copy per case. */
  clone(): MemoryObjects {
    const copy = new MemoryObjects({ bucket: this.bucket, prefix: this.prefix, now: this.now });
    for (const [key, stored] of this.objects) copy.objects.set(key, { ...stored, bytes: Buffer.from(stored.bytes) });
    return copy;
  }

  /** Every key, in the order S3 lists them. */
  keys(): string[] {
    return [...this.objects.keys()].sort(byteOrder);
  }

  private store(key: string, bytes: Buffer): void {
    // A single-part upload's ETag is the quoted MD5 of its bytes (AWS S3 API reference, Object.ETag).
    this.objects.set(key, { bytes, lastModified: this.now(), etag: `"${createHash('md5').update(bytes).digest('hex')}"` });
  }

  startUpload(key: string, body: Readable | Uint8Array | string): UploadHandle {
    let aborted = false;
    const done = (async () => {
      const chunks: Buffer[] = [];
      if (body instanceof Readable) for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
      else chunks.push(Buffer.from(body));
      if (aborted) throw new StoreError('aborted', `The upload of ${this.url(key)} was cancelled.`, key);
      this.store(key, Buffer.concat(chunks));
    })();
    done.catch(() => undefined);
    return {
      done: () => done,
      abort: async () => {
        aborted = true;
        if (body instanceof Readable && !body.destroyed) body.destroy();
        await done.catch(() => undefined);
      },
    };
  }

  async put(key: string, body: Readable | Uint8Array | string): Promise<void> {
    await this.startUpload(key, body).done();
  }

  async getStream(key: string): Promise<Readable> {
    const found = this.objects.get(key);
    if (!found) throw new StoreError('not-found', `Could not read ${this.url(key)}: the object does not exist.`, key);
    return Readable.from([found.bytes]);
  }

  async getSized(key: string): Promise<{ body: Readable; size: number | undefined }> {
    const body = await this.getStream(key);
    return { body, size: this.objects.get(key)!.bytes.length };
  }

  async getBytes(key: string): Promise<Buffer> {
    const found = this.objects.get(key);
    if (!found) throw new StoreError('not-found', `Could not read ${this.url(key)}: the object does not exist.`, key);
    return found.bytes;
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const found = this.objects.get(key);
    return found ? { key, size: found.bytes.length, lastModified: found.lastModified, etag: found.etag } : undefined;
  }

  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }

  async *list(prefix: string): AsyncGenerator<ObjectInfo> {
    for (const key of this.keys()) {
      if (!key.startsWith(prefix)) continue;
      const found = this.objects.get(key);
      if (found) yield { key, size: found.bytes.length, lastModified: found.lastModified, etag: found.etag };
    }
  }

  async *listFolders(folder: string): AsyncGenerator<string> {
    const seen = new Set<string>();
    for (const key of this.keys()) {
      if (!key.startsWith(folder)) continue;
      const rest = key.slice(folder.length);
      const slash = rest.indexOf('/');
      if (slash > 0) seen.add(`${folder}${rest.slice(0, slash)}/`);
    }
    yield* [...seen].sort(byteOrder);
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }

  async deleteFolder(folder: string): Promise<number> {
    if (!folder.endsWith('/') || folder === '/') throw new Error(`Refusing to delete "${folder}": only a folder ending in "/" can be deleted.`);
    let deleted = 0;
    for (const key of this.keys()) if (key.startsWith(folder)) deleted += Number(this.objects.delete(key));
    return deleted;
  }

  /** An upload here is whole or absent: there is never an unfinished one to abort. */
  async abortUploadsUnder(): Promise<number> {
    return 0;
  }
}

/** S3 lists keys in UTF-8 byte order, which is not the order of String.prototype.localeCompare. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
