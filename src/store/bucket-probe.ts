// The status's S3 check: one signed HeadBucket with the relation's settings (endpoint or AWS's regional one, region,
// path or host style, tls-ca-chain as trusted CA), without the AWS SDK's client, whose loading alone costs about a
// quarter of a second of CPU in every update-status. The request is signed by @smithy/signature-v4 (the SDK's own SigV4
// signer) and sent with node:http(s) under the one retry policy; its problems are classified as checkBucket's are
// (bucket-problem.ts). Backups and restores keep the SDK client (s3-client.ts).
import type { IncomingHttpHeaders, RequestOptions } from 'node:http';
import { isIP } from 'node:net';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { RetryPolicy, type RetrySettings } from '../retry/policy.ts';
import { classifyS3Error as classifyForRetry } from '../retry/s3.ts';
import { classifyS3Error, precheckBucket, type BucketCheck } from './bucket-problem.ts';
import type { S3Settings } from './settings.ts';

export interface BucketProbeOptions {
  /** attempts under the one retry policy (default 2, as checkBucket) */
  maxAttempts?: number;
  /** retry settings (tests shorten its delays) */
  retry?: Partial<RetrySettings>;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/**
 * Where HeadBucket goes, as the SDK would send it: the bucket as the first host label in host style, else in the
 * path. An IP endpoint, or a dotted bucket name over TLS (a certificate's wildcard covers one label), stays in path
 * style whatever the setting.
 */
export function bucketUrl(settings: Pick<S3Settings, 'bucket' | 'endpoint' | 'region' | 'uriStyle'>): URL {
  const url = new URL(settings.endpoint ?? `https://s3.${settings.region}.amazonaws.com`);
  const prefix = url.pathname.replace(/\/+$/, '');
  const hostStyle = settings.uriStyle === 'host' && isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0 && !(url.protocol === 'https:' && settings.bucket.includes('.'));
  if (hostStyle) {
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

/** One HEAD of the signed request: resolves on 2xx, rejects with the network error or a HeadBucketError. */
async function headOnce(url: URL, headers: Record<string, string>, settings: S3Settings, options: BucketProbeOptions): Promise<void> {
  const tls = url.protocol === 'https:';
  // node:https (with tls, http2 and undici behind it) costs tens of milliseconds to load: only for an https endpoint.
  const { request: send } = tls ? await import('node:https') : await import('node:http');
  const requestOptions: RequestOptions & { ca?: string[] } = {
    method: 'HEAD',
    headers,
    // One connection for one request: nothing kept alive holds the hook open.
    agent: false,
    timeout: options.requestTimeoutMs ?? 15_000,
  };
  // A private CA is added to the public roots (as createS3Client does): an endpoint behind a public certificate keeps working.
  if (tls && settings.tlsCaChain?.length) requestOptions.ca = [...(await import('node:tls')).rootCertificates, ...settings.tlsCaChain];
  return new Promise<void>((resolve, reject) => {
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
      response.resume();
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) resolve();
      else reject(new HeadBucketError(status, response.headers));
    });
    request.end();
  });
}

/** HeadBucket with the given settings: ok, or the classified problem, as checkBucket says it. Never throws. */
export async function probeBucket(settings: S3Settings, options: BucketProbeOptions = {}): Promise<BucketCheck> {
  const early = precheckBucket(settings);
  if (early) return early;
  try {
    const url = bucketUrl(settings);
    const signer = new SignatureV4({
      service: 's3',
      region: settings.region,
      credentials: { accessKeyId: settings.accessKey, secretAccessKey: settings.secretKey },
      sha256: Sha256,
      // S3 signs the path as sent, and wants the payload's hash (of nothing, for HEAD) in x-amz-content-sha256.
      uriEscapePath: false,
      applyChecksum: true,
    });
    const policy = new RetryPolicy({ maxAttempts: options.maxAttempts ?? 2, ...options.retry });
    await policy.run(
      { verb: 'HeadBucket', target: `s3://${settings.bucket}/`, idempotent: true },
      (error) => classifyForRetry(error),
      async () => {
        // Signed afresh per attempt: the signature carries the time.
        const signed = await signer.sign({
          method: 'HEAD',
          protocol: url.protocol,
          hostname: url.hostname,
          ...(url.port ? { port: Number(url.port) } : {}),
          path: url.pathname,
          query: {},
          headers: { host: url.host },
        });
        await headOnce(url, signed.headers, settings, options);
      },
      // Keep the last error itself: its code or status is what the problem names.
      { giveUp: (error) => error },
    );
    return { ok: true };
  } catch (error) {
    return { ok: false, problem: classifyS3Error(error, settings) };
  }
}
