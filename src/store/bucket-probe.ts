// The status's S3 requests: one signed HeadBucket with the relation's settings (endpoint or AWS's regional one,
// region, path or host style, tls-ca-chain as trusted CA), and one ListObjectsV2 of one key to tell that there is no
// backup yet, without the AWS SDK's client, whose loading alone costs about a quarter of a second of CPU in every
// update-status. The request is signed by @smithy/signature-v4 (the SDK's own SigV4
// signer) and sent with node:http(s) under the one retry policy; its problems are classified as checkBucket's are
// (bucket-problem.ts). Backups and restores keep the SDK client (s3-client.ts).
import type { IncomingHttpHeaders, RequestOptions } from 'node:http';
import { createRequire } from 'node:module';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { RetryPolicy, type RetrySettings } from '../retry/policy.ts';
import { classifyS3Error as classifyForRetry } from '../retry/s3.ts';
import { classifyS3Error, precheckBucket, regionHeader, type BucketCheck } from './bucket-problem.ts';
import type { S3Settings } from './settings.ts';
import { bucketInHost, effectiveEndpoint } from './addressing.ts';

const nodeRequire = createRequire(import.meta.url);

export interface BucketProbeOptions {
  /** attempts under the one retry policy (default 2, as checkBucket) */
  maxAttempts?: number;
  /** retry settings (tests shorten its delays) */
  retry?: Partial<RetrySettings>;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/** Where HeadBucket goes, as the SDK would send it: the bucket as the first host label in host style, else in the path. */
export function bucketUrl(settings: Pick<S3Settings, 'bucket' | 'endpoint' | 'region' | 'uriStyle'>): URL {
  const url = new URL(effectiveEndpoint(settings));
  const prefix = url.pathname.replace(/\/+$/, '');
  if (bucketInHost(settings)) {
    url.hostname = `${settings.bucket}.${url.hostname}`;
    url.pathname = `${prefix}/`;
  } else {
    url.pathname = `${prefix}/${settings.bucket}`;
  }
  url.search = '';
  url.hash = '';
  return url;
}

/** An answer other than 2xx, shaped as the SDK's errors are ($metadata, $response) for both classifiers. */
class HeadBucketError extends Error {
  readonly $metadata: { httpStatusCode: number };
  readonly $response: { headers: Record<string, string | undefined> };
  constructor(status: number, headers: IncomingHttpHeaders) {
    const name = status === 404 ? 'NotFound' : status === 403 ? 'Forbidden' : status === 301 ? 'PermanentRedirect' : 'UnknownError';
    super(`HeadBucket answered HTTP ${status}`);
    this.name = name;
    this.$metadata = { httpStatusCode: status };
    this.$response = { headers: Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : value])) };
  }
}

function timeoutError(message: string): Error {
  const error = new Error(message);
  error.name = 'TimeoutError';
  return error;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One signed request: resolves with a 2xx answer (and its body), rejects with the network error or a HeadBucketError. */
async function sendOnce(method: 'HEAD' | 'GET', url: URL, headers: Record<string, string>, settings: S3Settings, options: BucketProbeOptions): Promise<Answer> {
  const tls = url.protocol === 'https:';
  // node:https (with tls and http2 behind it) costs tens of milliseconds to load: required here, when the request is
  // sent, and only for an https endpoint. (Why the built charm never imports built-ins as ES modules: scripts/build.ts.)
  const { request: send } = tls ? (nodeRequire('node:https') as typeof import('node:https')) : (nodeRequire('node:http') as typeof import('node:http'));
  const requestOptions: RequestOptions & { ca?: string[] } = {
    method,
    headers,
    // One connection for one request: nothing kept alive holds the hook open.
    agent: false,
    timeout: options.requestTimeoutMs ?? 15_000,
  };
  // A private CA is added to the public roots (as createS3Client does): an endpoint behind a public certificate keeps working.
  if (tls && settings.tlsCaChain?.length) requestOptions.ca = [...(nodeRequire('node:tls') as typeof import('node:tls')).rootCertificates, ...settings.tlsCaChain];
  return new Promise<Answer>((resolve, reject) => {
    const request = send(url, requestOptions);
    const connectTimer = setTimeout(
      () => request.destroy(timeoutError(`connecting to ${url.host} took longer than ${options.connectionTimeoutMs ?? 5_000} ms`)),
      options.connectionTimeoutMs ?? 5_000,
    );
    request.on('socket', (socket) => {
      socket.once(tls ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    request.on('timeout', () => request.destroy(timeoutError(`S3 at ${url.host} did not answer within ${options.requestTimeoutMs ?? 15_000} ms`)));
    request.on('error', (error) => {
      clearTimeout(connectTimer);
      reject(error);
    });
    request.on('response', (response) => {
      clearTimeout(connectTimer);
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        response.resume();
        reject(new HeadBucketError(status, response.headers));
        return;
      }
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => resolve({ status, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    request.end();
  });
}

/** RFC 3986 encoding of a query value, as SigV4 canonicalises it (encodeURIComponent leaves !'()* alone). */
function encodeQueryValue(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** One signed request of the bucket under the one retry policy (2 attempts by default); the last error is thrown as is. */
async function signedRequest(settings: S3Settings, method: 'HEAD' | 'GET', query: Record<string, string>, options: BucketProbeOptions): Promise<Answer> {
  const url = bucketUrl(settings);
  url.search = Object.entries(query).map(([key, value]) => `${encodeQueryValue(key)}=${encodeQueryValue(value)}`).join('&');
  const signer = new SignatureV4({
    service: 's3',
    region: settings.region,
    credentials: { accessKeyId: settings.accessKey, secretAccessKey: settings.secretKey },
    sha256: Sha256,
    // S3 signs the path as sent, and wants the payload's hash (of nothing, here) in x-amz-content-sha256.
    uriEscapePath: false,
    applyChecksum: true,
  });
  const policy = new RetryPolicy({ maxAttempts: options.maxAttempts ?? 2, ...options.retry });
  return policy.run(
    { verb: method === 'HEAD' ? 'HeadBucket' : 'ListObjectsV2', target: `s3://${settings.bucket}/`, idempotent: true },
    (error) => classifyForRetry(error),
    async () => {
      // Signed afresh per attempt: the signature carries the time.
      const signed = await signer.sign({
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query,
        headers: { host: url.host },
      });
      return sendOnce(method, url, signed.headers, settings, options);
    },
    // Keep the last error itself: its code or status is what the problem names.
    { giveUp: (error) => error },
  );
}

/** HeadBucket with the given settings: ok, or the classified problem, as checkBucket says it. Never throws. */
export async function probeBucket(settings: S3Settings, options: BucketProbeOptions = {}): Promise<BucketCheck> {
  const early = precheckBucket(settings);
  if (early) return early;
  try {
    const { headers } = await signedRequest(settings, 'HEAD', {}, options);
    const region = regionHeader(headers);
    return region ? { ok: true, region } : { ok: true };
  } catch (error) {
    return { ok: false, problem: classifyS3Error(error, settings) };
  }
}

/**
 * Whether any object's key starts with `prefix` (a full key, path prefix included): one ListObjectsV2 of at most one
 * key. Undefined when the answer cannot tell (an error, an answer not understood): the caller asks the full client.
 */
export async function anyObjectUnder(settings: S3Settings, prefix: string, options: BucketProbeOptions = {}): Promise<boolean | undefined> {
  if (precheckBucket(settings)) return undefined;
  try {
    const { body } = await signedRequest(settings, 'GET', { 'list-type': '2', 'max-keys': '1', prefix }, options);
    if (!/<ListBucketResult[\s>]/.test(body)) return undefined;
    if (/<Contents>|<CommonPrefixes>/.test(body)) return true;
    return /<KeyCount>0<\/KeyCount>/.test(body) || !/<KeyCount>/.test(body) ? false : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the bucket has Object Lock (backup-immutability): GetObjectLockConfiguration, one signed GET `?object-lock`.
 * S3 answers the configuration, or 404 ObjectLockConfigurationNotFoundError when the bucket was created without it
 * (AWS S3 API reference, GetObjectLockConfiguration; radosgw the same: tests/store/object-lock.rgw.ts). Undefined when
 * the answer cannot tell (any other error).
 */
export async function probeObjectLock(settings: S3Settings, options: BucketProbeOptions = {}): Promise<boolean | undefined> {
  if (precheckBucket(settings)) return undefined;
  try {
    const { body } = await signedRequest(settings, 'GET', { 'object-lock': '' }, options);
    return /<ObjectLockEnabled>\s*Enabled\s*<\/ObjectLockEnabled>/.test(body);
  } catch (error) {
    return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404 ? false : undefined;
  }
}
