// An ObjectStore whose objects live in a Map: fuzzing reads thousands of archives, which no server per case allows.
// Only the transport is replaced; the archive reader, verify and writer under test are the real ones.
import { S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { ObjectStore, StoreError, type ObjectInfo, type UploadHandle } from '../../src/store/objects.ts';

export class MemoryStore extends ObjectStore {
  readonly objects = new Map<string, Buffer>();
  constructor() {
    super({ client: new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }), bucket: 'memory', prefix: 'fuzz' });
  }
  override startUpload(key: string, body: Readable | Uint8Array | string): UploadHandle {
    const done = (async () => {
      const chunks: Buffer[] = [];
      if (body instanceof Readable) for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
      else chunks.push(Buffer.from(body));
      this.objects.set(key, Buffer.concat(chunks));
    })();
    done.catch(() => undefined);
    return { done: () => done, abort: async () => { if (body instanceof Readable) body.destroy(); } };
  }
  override async put(key: string, body: Readable | Uint8Array | string): Promise<void> {
    await this.startUpload(key, body).done();
  }
  override async getStream(key: string): Promise<Readable> {
    const bytes = this.objects.get(key);
    if (!bytes) throw new StoreError('not-found', `Could not read ${this.url(key)}: the object does not exist.`, key);
    return Readable.from([bytes]);
  }
  override async head(key: string): Promise<ObjectInfo | undefined> {
    const bytes = this.objects.get(key);
    return bytes ? { key, size: bytes.length, lastModified: new Date(0), etag: undefined } : undefined;
  }
  override async *list(prefix: string): AsyncGenerator<ObjectInfo> {
    for (const [key, bytes] of [...this.objects].sort(([a], [b]) => a.localeCompare(b))) {
      if (key.startsWith(prefix)) yield { key, size: bytes.length, lastModified: new Date(0), etag: undefined };
    }
  }
  override async *listFolders(folder: string): AsyncGenerator<string> {
    const seen = new Set<string>();
    for (const key of this.objects.keys()) {
      if (!key.startsWith(folder)) continue;
      const next = key.slice(folder.length).split('/')[0];
      if (next !== undefined && key.length > folder.length + next.length) seen.add(`${folder}${next}/`);
    }
    yield* [...seen].sort();
  }
  override async deleteFolder(folder: string): Promise<number> {
    let n = 0;
    for (const key of [...this.objects.keys()]) if (key.startsWith(folder)) n += Number(this.objects.delete(key));
    return n;
  }
  clone(): MemoryStore {
    const copy = new MemoryStore();
    for (const [k, v] of this.objects) copy.objects.set(k, Buffer.from(v));
    return copy;
  }
}
