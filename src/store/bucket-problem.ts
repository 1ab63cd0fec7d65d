// Why a bucket cannot be used, in one sentence a user can act on: the classification shared by checkBucket (the AWS
// SDK client, s3-client.ts) and probeBucket (the light probe of the status, bucket-probe.ts). No SDK import here.
import { credentialsFix, type S3Settings } from './settings.ts';
import { effectiveEndpoint } from './addressing.ts';
import { TLS_CODES, errorCodes, isNetworkCode } from '../errors/codes.ts';

export type BucketProblemKind =
  | 'missing-key'
  | 'bad-endpoint'
  | 'unreachable'
  | 'tls'
  | 'bucket-missing'
  | 'access-denied'
  | 'wrong-region'
  | 'unknown';

export interface BucketProblem {
  kind: BucketProblemKind;
  /** one sentence, no secret, no stack */
  message: string;
}

export type BucketCheck = { ok: true } | { ok: false; problem: BucketProblem };

/** The region S3 says the bucket is in: the x-amz-bucket-region header of a 301 or 400 answer, or the error's Region. */
function bucketRegionOf(error: unknown): string | undefined {
  const e = error as { $response?: { headers?: Record<string, string | undefined> }; Region?: unknown } | undefined;
  const header = e?.$response?.headers?.['x-amz-bucket-region'];
  const region = typeof header === 'string' ? header : typeof e?.Region === 'string' ? e.Region : undefined;
  return region && /^[A-Za-z0-9-]{1,64}$/.test(region) ? region : undefined;
}

/** Turns any error of an S3 call into a problem a user can act on. */
export function classifyS3Error(error: unknown, settings: Pick<S3Settings, 'bucket' | 'endpoint' | 'region' | 'track'>): BucketProblem {
  const endpoint = settings.endpoint ?? `the AWS S3 endpoint of ${settings.region}`;
  const codes = errorCodes(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  const tls = codes.find((code) => TLS_CODES.has(code));
  if (tls) {
    return { kind: 'tls', message: `TLS with ${endpoint} failed (${tls}); give s3-integrator the endpoint's CA in tls-ca-chain, or use the right scheme` };
  }
  if (codes.some(isNetworkCode)) {
    const code = codes.find(isNetworkCode) ?? 'timeout';
    return { kind: 'unreachable', message: `cannot reach S3 at ${endpoint} (${code}); check the endpoint option of s3-integrator and the network` };
  }
  // S3 names the bucket's region on a redirect (301 PermanentRedirect) and on a HeadBucket signed for another
  // region (400): AWS S3 API reference, HeadBucket and "Making requests" (x-amz-bucket-region).
  const actualRegion = bucketRegionOf(error);
  if (actualRegion && actualRegion !== settings.region && (status === 301 || status === 400 || codes.includes('PermanentRedirect') || codes.includes('AuthorizationHeaderMalformed'))) {
    return { kind: 'wrong-region', message: `bucket "${settings.bucket}" is in region ${actualRegion}, not ${settings.region}; set region=${actualRegion} on s3-integrator` };
  }
  if (status === 404 || codes.includes('NoSuchBucket') || codes.includes('NotFound')) {
    return { kind: 'bucket-missing', message: `bucket "${settings.bucket}" does not exist at ${endpoint}; create it or fix the bucket option of s3-integrator` };
  }
  if (status === 403 || status === 401 || codes.some((c) => ['AccessDenied', 'Forbidden', 'InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(c))) {
    const keys = settings.track === 2 ? "the keys in s3-integrator's credentials secret" : settings.track === 1 ? 'the keys given to s3-integrator (sync-s3-credentials)' : 'the credentials';
    return { kind: 'access-denied', message: `S3 at ${endpoint} denied access to bucket "${settings.bucket}"; check ${keys} and the bucket policy` };
  }
  if (status === 301 || codes.includes('PermanentRedirect') || codes.includes('AuthorizationHeaderMalformed')) {
    // A redirect that names no region: the endpoint is not the bucket's (path style against a global endpoint).
    return { kind: 'wrong-region', message: `S3 at ${effectiveEndpoint(settings)} redirects requests for bucket "${settings.bucket}" elsewhere; set the bucket's region and its regional endpoint on s3-integrator` };
  }
  const what = status ? `HTTP ${status}` : (codes[0] ?? 'an unexpected error');
  return { kind: 'unknown', message: `S3 at ${endpoint} answered ${what} for bucket "${settings.bucket}"` };
}

/** The problems found before any request: a missing key, an endpoint that is not an http(s) URL. */
export function precheckBucket(settings: S3Settings): BucketCheck | undefined {
  if (!settings.accessKey || !settings.secretKey) {
    return { ok: false, problem: { kind: 'missing-key', message: `the S3 ${settings.accessKey ? 'secret-key' : 'access-key'} is empty; ${credentialsFix(settings.track)}` } };
  }
  if (settings.endpoint !== undefined) {
    let valid = false;
    try {
      valid = ['http:', 'https:'].includes(new URL(settings.endpoint).protocol);
    } catch {
      valid = false;
    }
    if (!valid) return { ok: false, problem: { kind: 'bad-endpoint', message: `the S3 endpoint "${settings.endpoint}" is not an http(s) URL; fix the endpoint option of s3-integrator` } };
  }
  return undefined;
}
