// Starts and stops a real s3rver process (tests/support/s3/server-main.ts) for a test suite.
// (upstream: jamhall/s3rver; its account model answers S3RVER/S3RVER, lib/models/account.js)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stopOnExit } from '../cleanup.ts';

/** s3rver's fixed credentials; any other key pair is refused with InvalidAccessKeyId / SignatureDoesNotMatch. */
export const S3RVER_ACCESS_KEY = 'S3RVER';
export const S3RVER_SECRET_KEY = 'S3RVER';

export interface S3ServerHandle {
  endpoint: string;
  port: number;
  /** the s3rver process */
  pid: number;
  directory: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

export interface S3ServerOptions {
  buckets?: string[];
  tlsKeyFile?: string;
  tlsCertFile?: string;
  /** more access key ids s3rver accepts (it checks the id only, never the secret) */
  accessKeys?: string[];
  /** a key pair the server accepts besides S3RVER/S3RVER, and the one the handle reports */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** more key pairs it accepts, secrets included: a streaming upload's chunk signatures are checked with the secret */
  keyPairs?: { accessKeyId: string; secretAccessKey: string }[];
  /** keep the data folder after stop (default: removed) */
  keepDirectory?: boolean;
  /** a file the server appends one JSON line to per request (see RequestLogEntry) */
  requestLog?: string;
  /**
   * how a server-side copy stores the new object's body: 'link' (default) shares the source's file, costing this
   * machine no copy of the bytes, as a real S3's copy costs the client's machines none (shared-copies.ts); 'bytes'
   * copies them as s3rver as published does
   */
  serverSideCopy?: 'link' | 'bytes';
  /**
   * the ETag of a multipart upload: 'md5' (default) the MD5 of the whole object, as s3rver as published gives it;
   * 'aws' the MD5 of the parts' binary MD5s and `-<parts>`, as AWS S3 and MinIO give it (multipart-etag.ts)
   */
  multipartEtag?: 'md5' | 'aws';
  /**
   * answer as Ceph's radosgw 16 where it differs from s3rver and AWS (radosgw-answers.ts): storage classes other than
   * STANDARD refused, empty error messages, GetBucketLocation "default", an empty CompleteMultipartUpload ETag,
   * aws-chunked bodies with trailing checksums refused 411
   */
  radosgw?: boolean;
}

/** One request as the test server's request log records it (tests/support/s3/server-main.ts). */
export interface RequestLogEntry {
  method: string;
  /** `/<bucket>/<key>`, decoded */
  path: string;
  query: string;
  /** the Content-Length header: the size of the body the client sent */
  contentLength: number;
  /** `/<bucket>/<key>` of a server-side copy's source */
  copySource?: string;
}

/** The request log's entries; an absent log has none. */
export function readRequestLog(file: string): RequestLogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as RequestLogEntry);
}

const here = dirname(fileURLToPath(import.meta.url));

export async function startS3Server(options: S3ServerOptions = {}): Promise<S3ServerHandle> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const args = ['--import', 'tsx', join(here, 'server-main.ts'), '--dir', directory];
  for (const bucket of options.buckets ?? []) args.push('--bucket', bucket);
  for (const id of options.accessKeys ?? []) args.push('--key-pair', `${id}:${id}`);
  if (options.tlsKeyFile && options.tlsCertFile) args.push('--tls-key', options.tlsKeyFile, '--tls-cert', options.tlsCertFile);
  if (options.requestLog) args.push('--request-log', options.requestLog);
  if (options.serverSideCopy === 'bytes') args.push('--copy-bytes');
  // radosgw's multipart ETag is AWS's `<md5 of the parts' md5s>-<parts>` (ceph/ceph src/rgw/rgw_op.cc RGWCompleteMultipart)
  if (options.multipartEtag === 'aws' || options.radosgw) args.push('--aws-multipart-etag');
  if (options.radosgw) args.push('--radosgw');
  for (const pair of [...(options.keyPairs ?? []), ...(options.credentials ? [options.credentials] : [])]) args.push('--key-pair', `${pair.accessKeyId}:${pair.secretAccessKey}`);
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = stopOnExit('s3rver', async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (!options.keepDirectory) rmSync(directory, { recursive: true, force: true });
  });
  const lines = createInterface({ input: child.stdout! });
  const ready = await new Promise<{ port: number; endpoint: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited with code ${code} before it was ready`)));
    lines.once('line', (line) => resolve(JSON.parse(line)));
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  child.removeAllListeners('exit');
  return {
    ...ready,
    pid: child.pid!,
    directory,
    accessKeyId: options.credentials?.accessKeyId ?? S3RVER_ACCESS_KEY,
    secretAccessKey: options.credentials?.secretAccessKey ?? S3RVER_SECRET_KEY,
    stop,
  };
}
