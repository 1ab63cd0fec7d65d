// The one seam to the object store for the archive: streaming put/get, head, list, delete, all relative to a
// location prefix, with every failure turned into one sentence that names the object but never a credential.
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  PutObjectCommand,
  type StorageClass,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
import { normalizePrefix } from './layout.ts';
import { PartBuffers, uploadStream } from './part-upload.ts';
import { READ_AT_ONCE_CLASS } from './storage-class.ts';
import { lockedWriteParams, type WriteLock } from './lock-params.ts';
import { TIMEOUT_CODES, TLS_CODES, errorCodes, isNetworkCode } from '../errors/codes.ts';
import { KfuError, type ErrorKind } from '../errors/index.ts';

export type StoreErrorKind =
  | 'not-found'
  | 'no-bucket'
  | 'denied'
  | 'bad-credentials'
  | 'unreachable'
  | 'tls'
  | 'timeout'
  /** archived (GLACIER, DEEP_ARCHIVE): unreadable until restored */
  | 'cold'
  /** the store does not offer the storage class the upload asked for */
  | 'storage-class'
  | 'aborted'
  | 'other';

/** A failed object-store call, already phrased for the user. */
const KIND_OF: Record<StoreErrorKind, ErrorKind> = {
  'not-found': 'input', 'no-bucket': 'input', denied: 'refused', 'bad-credentials': 'refused',
  unreachable: 'unavailable', tls: 'unavailable', timeout: 'unavailable', cold: 'refused', 'storage-class': 'refused', aborted: 'failed', other: 'unavailable',
};

export class StoreError extends KfuError {
  static override readonly errorId = 'StoreError';
  /** what went wrong with the store, finer than `kind` */
  readonly condition: StoreErrorKind;
  readonly key: string | undefined;
  constructor(condition: StoreErrorKind, message: string, key?: string) {
    super(message, { kind: KIND_OF[condition], retryable: condition === 'unreachable' || condition === 'timeout' });
    this.condition = condition;
    this.key = key;
  }
}

/** The S3 error name (`Code` or `name`), the innermost low-level code, and the HTTP status of an SDK error. */
function describeCodes(error: unknown): { name: string; code: string; status: number | undefined } {
  const codes = errorCodes(error);
  const obj = (error && typeof error === 'object' ? error : {}) as {
    name?: unknown; Code?: unknown; $metadata?: { httpStatusCode?: number };
  };
  const name = typeof obj.Code === 'string' ? obj.Code : typeof obj.name === 'string' ? obj.name : '';
  // Network and TLS failures arrive wrapped; the useful code sits on a cause.
  const code = codes.find((c) => isNetworkCode(c) || TLS_CODES.has(c) || c === 'ABORT_ERR') ?? codes.find((c) => /^[A-Z][A-Z_]+$/.test(c)) ?? '';
  return { name, code, status: obj.$metadata?.httpStatusCode };
}

/**
 * Turns any S3 SDK or network error into a StoreError whose message is one sentence: what we tried, on which
 * object, and why. Only the error's code is consulted, never its text, so signatures and keys cannot leak.
 */
export function classifyStoreError(error: unknown, doing: string, where: string, key?: string): StoreError {
  if (error instanceof StoreError) return error;
  const { name, code, status } = describeCodes(error);
  const say = (kind: StoreErrorKind, why: string) => new StoreError(kind, `Could not ${doing} ${where}: ${why}.`, key);
  if (name === 'AbortError' || code === 'ABORT_ERR') return say('aborted', 'the operation was cancelled');
  if (name === 'NoSuchBucket') return say('no-bucket', 'the bucket does not exist');
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) return say('not-found', 'the object does not exist');
  if (name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch' || name === 'InvalidToken' || name === 'ExpiredToken') {
    return say('bad-credentials', 'the S3 credentials were rejected; check the access key and secret key');
  }
  // GetObject on an object in GLACIER or DEEP_ARCHIVE (or an archive tier of INTELLIGENT_TIERING) answers 403
  // InvalidObjectState until the object is restored (AWS S3 API reference, GetObject): not a policy problem.
  if (name === 'InvalidObjectState') {
    return say('cold', 'the object is in an archive storage class and must be restored (S3 RestoreObject) before it can be read');
  }
  if (name === 'AccessDenied' || name === 'Forbidden' || status === 403) return say('denied', 'access was denied by the bucket policy');
  if (TLS_CODES.has(code) || /CERT|SSL|TLS/.test(code)) {
    return say('tls', `the TLS certificate of the endpoint could not be verified (${code}); check the CA chain`);
  }
  if (name === 'TimeoutError' || TIMEOUT_CODES.has(code) || name === 'RequestTimeout') return say('timeout', 'the request timed out');
  if (isNetworkCode(code)) return say('unreachable', `the endpoint is unreachable (${code})`);
  const detail = name || code || (status ? `HTTP ${status}` : 'unknown error');
  return say('other', `the object store answered ${detail}`);
}

/**
 * The answers of a store that does not offer the storage class a request asked for: AWS names it InvalidStorageClass;
 * Ceph's radosgw 16 (Pacific) checks every request on a bucket that carries x-amz-storage-class against its zone's
 * placement targets and refuses one they do not define with -EINVAL, answered 400 InvalidArgument (ceph/ceph
 * src/rgw/rgw_op.cc rgw_build_bucket_policies, "invalid dest placement"; src/rgw/rgw_common.cc, EINVAL). A default
 * radosgw defines only STANDARD, so STANDARD_IA, which the status accepts as a class a restore reads at once, fails
 * every backup there (measured: shared reference note rgw.md).
 */
const STORAGE_CLASS_REFUSALS = new Set(['InvalidStorageClass', 'InvalidArgument']);

export interface ObjectStoreOptions {
  client: S3Client;
  bucket: string;
  /** the location's path prefix inside the bucket; '' or undefined for the bucket root */
  prefix?: string;
  /** multipart part size; S3 needs at least 5 MiB. Memory held by one upload is at most partSize × (queueSize + 1). */
  partSizeBytes?: number;
  queueSize?: number;
  /**
   * storage class of the backup data (s3-integrator's storage-class): uploads marked `data` ask for it, every other
   * object (markers, manifests, indexes, side files: what a restore or list reads first) asks for STANDARD, so a
   * colder class never stands between a user and the list of their backups. Absent: the bucket's default for all.
   */
  storageClass?: string;
}

/** What an upload holds: the backup data (the tarball) or a file read before it (everything `put` writes). */
export type UploadRole = 'data' | 'read-first';

export interface ObjectInfo {
  /** key relative to the prefix */
  key: string;
  size: number;
  lastModified: Date | undefined;
  etag: string | undefined;
  /** the current version's Object Lock retention, when a HEAD answered one (immutability.ts) */
  retainUntil?: Date;
  lockMode?: string;
}

/** An upload in flight; `done()` resolves when the object exists, `abort()` cancels it and leaves nothing. */
export interface UploadHandle {
  done(): Promise<void>;
  abort(): Promise<void>;
}

const MIN_PART = 5 * 1024 * 1024;

export class ObjectStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  private readonly partSize: number;
  private readonly queueSize: number;
  /** part buffers a finished streaming upload leaves to the next one (the manifest takes the tarball's) */
  private readonly partBuffers: PartBuffers;
  /** sent as x-amz-storage-class, by the role of the upload */
  private readonly storageClass: Record<UploadRole, { StorageClass?: StorageClass }>;

  constructor(options: ObjectStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = normalizePrefix(options.prefix);
    this.partSize = Math.max(MIN_PART, options.partSizeBytes ?? MIN_PART);
    // 4 parts in flight, as the SDK's own default: fewer left the upload well short of a raw multipart PUT of the same
    // bytes (bench/archive-upload, docs/performance.md), for one part size more memory per extra part in flight.
    this.queueSize = Math.max(1, options.queueSize ?? 4);
    // two spare: what a one-part-in-flight upload (the manifest) uses, with one part filling while one goes up
    this.partBuffers = new PartBuffers(this.partSize, 2);
    this.storageClass = options.storageClass
      ? { data: { StorageClass: options.storageClass as StorageClass }, 'read-first': { StorageClass: READ_AT_ONCE_CLASS } }
      : { data: {}, 'read-first': {} };
  }

  /** The full bucket key for a key relative to the prefix. */
  fullKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  /** `s3://bucket/prefix/key`, for messages and results. */
  url(key = ''): string {
    return `s3://${this.bucket}/${this.fullKey(key)}`;
  }

  private fail(error: unknown, doing: string, key: string, role?: UploadRole): StoreError {
    const asked = role === undefined ? undefined : this.storageClass[role].StorageClass;
    if (asked !== undefined && asked !== READ_AT_ONCE_CLASS && !(error instanceof StoreError)) {
      const name = (error as { name?: unknown } | undefined)?.name;
      if (typeof name === 'string' && STORAGE_CLASS_REFUSALS.has(name)) {
        return new StoreError('storage-class', `Could not ${doing} ${this.url(key)}: the object store refused the storage class "${asked}" (${name}); choose a storage class this store offers, or none for the bucket's default.`, key);
      }
    }
    return classifyStoreError(error, doing, this.url(key), key);
  }

  /**
   * Starts a streaming multipart upload. The body is consumed as parts fill, so a producer that respects the
   * body stream's backpressure never holds more than partSize × (queueSize + 1) in part buffers; a stream's parts are
   * written into buffers reused from part to part and from upload to upload (src/store/part-upload.ts). On failure the
   * multipart upload is aborted, so no half object remains.
   */
  startUpload(key: string, body: Readable | Uint8Array | string, contentType?: string, role: UploadRole = 'read-first', queueSize = this.queueSize, lock?: WriteLock): UploadHandle {
    const params = { Bucket: this.bucket, Key: this.fullKey(key), ContentType: contentType, ...this.storageClass[role] };
    const cancel = new AbortController();
    let upload: Upload | undefined;
    // a retained write goes through uploadStream, which gives every request its Content-MD5 (object-lock.ts)
    if (lock && !(body instanceof Readable)) body = Readable.from([Buffer.from(body)]);
    const running = body instanceof Readable
      ? uploadStream(this.client, { ...params, ...(lock ? { lock } : {}) }, body, { buffers: this.partBuffers, queueSize, signal: cancel.signal })
      // a body already in memory is cut into parts without a copy (lib-storage's subarrays)
      : (upload = new Upload({ client: this.client, params: { ...params, Body: body }, partSize: this.partSize, queueSize, leavePartsOnError: false })).done();
    const finished = running.then(
      () => undefined,
      (error: unknown) => {
        throw cancel.signal.aborted ? new StoreError('aborted', `The upload of ${this.url(key)} was cancelled.`, key) : this.fail(error, 'upload', key, role);
      },
    );
    finished.catch(() => undefined); // observed by done(); avoid an unhandled rejection when only abort() is used
    return {
      done: () => finished,
      abort: async () => {
        cancel.abort();
        await upload?.abort().catch(() => undefined);
        await finished.catch(() => undefined);
        if (body instanceof Readable && !body.destroyed) body.destroy();
      },
    };
  }

  /**
   * Uploads a whole file read before the data (in STANDARD, see `storageClass`); small bodies take one PUT, streams go
   * multipart with one part in flight: such a stream is the manifest, written at the backup's commit on top of what the
   * listing left, where four parts in flight made the backup's peak memory (docs/performance.md).
   */
  async put(key: string, body: Readable | Uint8Array | string, contentType?: string, lock?: WriteLock): Promise<void> {
    if (body instanceof Readable) return this.startUpload(key, body, contentType, 'read-first', 1, lock).done();
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Body: bytes, ContentType: contentType, ...this.storageClass['read-first'], ...lockedWriteParams(bytes, lock) }));
    } catch (error) {
      throw this.fail(error, 'upload', key, 'read-first');
    }
  }

  /** A stream of the object's bytes; throws StoreError kind 'not-found' when absent. */
  async getStream(key: string): Promise<Readable> {
    return (await this.getSized(key)).body;
  }

  /** The object's bytes as a stream, with its length when the answer gave one (a reader can then keep them in one buffer). */
  async getSized(key: string): Promise<{ body: Readable; size: number | undefined }> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
      const body = answer.Body;
      if (!(body instanceof Readable)) throw new StoreError('other', `Could not read ${this.url(key)}: the answer had no body.`, key);
      return { body, size: answer.ContentLength };
    } catch (error) {
      throw this.fail(error, 'read', key);
    }
  }

  /** The whole object in memory: only for small files (manifests, markers). */
  async getBytes(key: string): Promise<Buffer> {
    const stream = await this.getStream(key);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk as Buffer);
    } catch (error) {
      throw this.fail(error, 'read', key);
    }
    return Buffer.concat(chunks);
  }

  /** The object's size and date, or undefined when it does not exist. */
  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
      return {
        key, size: answer.ContentLength ?? 0, lastModified: answer.LastModified, etag: answer.ETag,
        ...(answer.ObjectLockRetainUntilDate ? { retainUntil: answer.ObjectLockRetainUntilDate } : {}), ...(answer.ObjectLockMode ? { lockMode: answer.ObjectLockMode } : {}),
      };
    } catch (error) {
      const failure = this.fail(error, 'look up', key);
      if (failure.condition === 'not-found') return undefined;
      throw failure;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.head(key)) !== undefined;
  }

  // ListObjects (v1) with markers rather than v2 continuation tokens: every S3-compatible store pages v1 the
  // same way, while some (s3rver on Node 24: its tokens need DES) cannot produce v2 tokens at all.
  private async *pages(prefix: string, delimiter?: string, pageSize?: number) {
    let marker: string | undefined;
    for (;;) {
      let answer;
      try {
        answer = await this.client.send(new ListObjectsCommand({
          Bucket: this.bucket, Prefix: this.fullKey(prefix), Delimiter: delimiter, Marker: marker, MaxKeys: pageSize,
        }));
      } catch (error) {
        throw this.fail(error, 'list', prefix);
      }
      yield answer;
      if (!answer.IsTruncated) return;
      const lastKey = answer.Contents?.at(-1)?.Key ?? '';
      const lastPrefix = answer.CommonPrefixes?.at(-1)?.Prefix ?? '';
      const next = answer.NextMarker ?? (lastKey > lastPrefix ? lastKey : lastPrefix);
      if (!next || next === marker) return;
      marker = next;
    }
  }

  private relative(fullKey: string): string {
    return this.prefix ? fullKey.slice(this.prefix.length + 1) : fullKey;
  }

  /** Every object under a relative prefix, page by page (keys relative to the location prefix). */
  async *list(prefix: string, options: { pageSize?: number } = {}): AsyncGenerator<ObjectInfo> {
    for await (const page of this.pages(prefix, undefined, options.pageSize)) {
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined) continue;
        yield { key: this.relative(o.Key), size: o.Size ?? 0, lastModified: o.LastModified, etag: o.ETag };
      }
    }
  }

  /** The immediate sub-folders of a relative folder ending in '/', e.g. the backup folders under 'backups/'. */
  async *listFolders(folder: string): AsyncGenerator<string> {
    for await (const page of this.pages(folder, '/')) {
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix) yield this.relative(p.Prefix);
    }
  }

  /** Deletes one object; deleting one that does not exist is not an error (S3's DeleteObject answers 204 either way). */
  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
    } catch (error) {
      throw this.fail(error, 'delete', key);
    }
  }

  /**
   * Aborts the multipart uploads under a relative folder that were started before `startedBefore` (a crashed run's
   * leftovers), or only counts them with `dryRun`. Throws a StoreError; condition 'other' when the store cannot list
   * them (s3rver and some gateways do not implement ListMultipartUploads).
   */
  async abortUploadsUnder(folder: string, startedBefore: Date, dryRun: boolean): Promise<number> {
    let aborted = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    try {
      for (;;) {
        const page = await this.client.send(new ListMultipartUploadsCommand({
          Bucket: this.bucket, Prefix: this.fullKey(folder), KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker,
        }));
        for (const upload of page.Uploads ?? []) {
          if (!upload.Key || !upload.UploadId || !upload.Initiated) continue;
          if (upload.Initiated.getTime() > startedBefore.getTime()) continue;
          if (!dryRun) await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }));
          aborted++;
        }
        if (!page.IsTruncated) break;
        keyMarker = page.NextKeyMarker;
        uploadIdMarker = page.NextUploadIdMarker;
      }
    } catch (error) {
      throw classifyStoreError(error, 'list the unfinished uploads of', this.url(folder));
    }
    return aborted;
  }

  /** Deletes every object under a relative folder (which must end in '/'); returns how many were deleted. */
  async deleteFolder(folder: string): Promise<number> {
    if (!folder.endsWith('/') || folder === '/') throw new Error(`Refusing to delete "${folder}": only a folder ending in "/" can be deleted.`);
    let deleted = 0;
    let batch: string[] = [];
    const deleteOneByOne = async (keys: string[]) => {
      for (const k of keys) {
        try {
          await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.fullKey(k) }));
        } catch (error) {
          throw this.fail(error, 'delete', k);
        }
      }
    };
    const flush = async () => {
      if (batch.length === 0) return;
      try {
        const answer = await this.client.send(new DeleteObjectsCommand({
          Bucket: this.bucket, Delete: { Objects: batch.map((k) => ({ Key: this.fullKey(k) })), Quiet: true },
        }));
        const refused = answer.Errors ?? [];
        if (refused.length) {
          throw new StoreError('other', `Could not delete ${this.url(folder)}: ${refused.length} objects were refused (${refused[0]!.Code ?? 'unknown'}).`, folder);
        }
      } catch (error) {
        const failure = this.fail(error, 'delete', folder);
        // Some S3-compatible stores lack or fumble the batch call; single deletes work everywhere.
        if (failure.condition !== 'other' || error instanceof StoreError) throw failure;
        await deleteOneByOne(batch);
      }
      deleted += batch.length;
      batch = [];
    };
    for await (const o of this.list(folder)) {
      batch.push(o.key);
      if (batch.length === 1000) await flush();
    }
    await flush();
    return deleted;
  }
}

/** What the backup store asks of an object store: ObjectStore's methods, keys relative to the location's prefix. */
export type BackupObjects = Pick<
  ObjectStore,
  'url' | 'startUpload' | 'put' | 'getStream' | 'getSized' | 'getBytes' | 'head' | 'exists' | 'list' | 'listFolders' | 'delete' | 'deleteFolder' | 'abortUploadsUnder'
>;
