// Builds the S3 client from S3Settings (CA chain, path or host style, region) and says, in one sentence a user can act
// on, why a bucket cannot be used.
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Settings } from './settings.ts';
import { RetryPolicy, type RetrySettings } from '../retry/policy.ts';
import { applyS3RetryPolicy, s3ClientRetrySettings } from '../retry/s3.ts';
import { classifyS3Error, precheckBucket, type BucketCheck } from './bucket-problem.ts';

export type { S3Settings } from './settings.ts';
export { classifyS3Error, type BucketCheck, type BucketProblem, type BucketProblemKind } from './bucket-problem.ts';

export interface S3ClientOptions {
  /** attempts per request under the one retry policy (default: the policy's) */
  maxAttempts?: number;
  /** the retry policy, or settings for one (tests shorten its delays) */
  retry?: RetryPolicy | Partial<RetrySettings>;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** false: a 301 naming another region is an error, as it is for rclone in the Jobs (default true: followed) */
  followRegionRedirects?: boolean;
}

export function createS3Client(settings: S3Settings, options: S3ClientOptions = {}): S3Client {
  // A private CA is added to the public roots: an endpoint behind a public certificate keeps working.
  const httpsAgent = settings.tlsCaChain?.length
    ? new Agent({ keepAlive: true, ca: [...rootCertificates, ...settings.tlsCaChain] })
    : new Agent({ keepAlive: true });
  const client = new S3Client({
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    region: settings.region,
    forcePathStyle: settings.uriStyle === 'path',
    // A 301 (or a HeadBucket 400) carrying x-amz-bucket-region is retried once, signed for that region; without an
    // endpoint (AWS) the retry also goes to that region's endpoint (@aws-sdk/middleware-sdk-s3 region-redirect
    // middleware). The status still reports a mismatch (bucket-probe.ts): rclone in the Jobs uses the region as given.
    followRegionRedirects: options.followRegionRedirects ?? true,
    credentials: { accessKeyId: settings.accessKey, secretAccessKey: settings.secretKey },
    // Our policy (below) is the only one retrying: the SDK's own attempts would multiply with it.
    ...s3ClientRetrySettings,
    // Only checksum when an operation needs one: S3-compatible stores (MinIO, Ceph RGW, s3rver) differ in CRC support.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      httpsAgent,
      connectionTimeout: options.connectionTimeoutMs ?? 5_000,
      requestTimeout: options.requestTimeoutMs ?? 60_000,
    },
  });
  const policy = options.retry instanceof RetryPolicy
    ? options.retry
    : new RetryPolicy({ ...options.retry, ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }) });
  applyS3RetryPolicy(client, policy);
  return client;
}

/** HeadBucket with the given settings: ok (with the region S3 names, when it does), or the classified problem. Never throws. */
export async function checkBucket(settings: S3Settings, options: S3ClientOptions = {}): Promise<BucketCheck> {
  const early = precheckBucket(settings);
  if (early) return early;
  const client = createS3Client(settings, { maxAttempts: 2, connectionTimeoutMs: 5_000, requestTimeoutMs: 15_000, ...options });
  try {
    const answer = await client.send(new HeadBucketCommand({ Bucket: settings.bucket }));
    // AWS answers x-amz-bucket-region on every HeadBucket (S3 API reference, HeadBucket: BucketRegion).
    const region = answer.BucketRegion && /^[A-Za-z0-9-]{1,64}$/.test(answer.BucketRegion) ? answer.BucketRegion : undefined;
    return region ? { ok: true, region } : { ok: true };
  } catch (error) {
    return { ok: false, problem: classifyS3Error(error, settings) };
  } finally {
    client.destroy();
  }
}
