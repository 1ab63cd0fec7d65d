// Why a bucket cannot be used: the classification shared by checkBucket (the AWS SDK client, s3-client.ts) and
// probeBucket (the light probe of the status, bucket-probe.ts). No SDK import here. A problem is a neutral fact plus
// the setting that would fix it; the charm (src/charm/s3-wording.ts) and the CLI (src/cli/s3-wording.ts) each name
// that setting where their user changes it: an option of s3-integrator, or a flag.
import { DEFAULT_REQUESTED_BUCKET, type S3Settings } from './settings.ts';
import { effectiveEndpoint, isAwsEndpoint } from './addressing.ts';
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

/** The setting that would fix a problem. */
export type S3Remedy =
  | { setting: 'ca-chain' }
  | { setting: 'endpoint'; what: 'unreachable' | 'invalid' }
  | { setting: 'bucket' }
  /** a bucket name of one's own, then (if the name is one's own after all) the keys and the bucket policy */
  | { setting: 'own-bucket'; track: 1 | 2 | undefined }
  /** the keys, which reach us in a way that depends on the s3-integrator track (absent: the CLI's environment) */
  | { setting: 'credentials'; track: 1 | 2 | undefined; what: 'missing' | 'denied'; key?: 'access-key' | 'secret-key' }
  | { setting: 'region'; region: string }
  | { setting: 'regional-endpoint' }
  | { setting: 'none' };

export interface BucketProblem {
  kind: BucketProblemKind;
  /** what is wrong, without who should change what: no secret, no stack */
  fact: string;
  remedy: S3Remedy;
}

/** One sentence: the fact, then the fix in the words of whoever shows it. */
export function problemSentence(problem: BucketProblem, word: (remedy: S3Remedy) => string): string {
  const fix = word(problem.remedy);
  return fix ? `${problem.fact}; ${fix}` : problem.fact;
}

/** `region`: the bucket's region as S3 named it in x-amz-bucket-region (AWS sends it on every HeadBucket answer). */
export type BucketCheck = { ok: true; region?: string } | { ok: false; problem: BucketProblem };

/** The region an answer names in x-amz-bucket-region, when it is a region name. */
export function regionHeader(headers: Record<string, string | string[] | undefined> | undefined): string | undefined {
  const value = headers?.['x-amz-bucket-region'];
  return typeof value === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(value) ? value : undefined;
}

/** The region S3 says the bucket is in: the x-amz-bucket-region header of a 301 or 400 answer, or the error's Region. */
function bucketRegionOf(error: unknown): string | undefined {
  const e = error as { $response?: { headers?: Record<string, string | undefined> }; Region?: unknown } | undefined;
  const header = e?.$response?.headers?.['x-amz-bucket-region'];
  const region = typeof header === 'string' ? header : typeof e?.Region === 'string' ? e.Region : undefined;
  return region && /^[A-Za-z0-9-]{1,64}$/.test(region) ? region : undefined;
}

/** AWS S3 signs every answer `Server: AmazonS3` (also behind a VPC or PrivateLink endpoint of another name). */
function answeredByAws(error: unknown): boolean {
  const headers = (error as { $response?: { headers?: Record<string, string | undefined> } } | undefined)?.$response?.headers;
  return headers?.server === 'AmazonS3';
}

/** Turns any error of an S3 call into a problem a user can act on. */
export function classifyS3Error(error: unknown, settings: Pick<S3Settings, 'bucket' | 'endpoint' | 'region' | 'track'>): BucketProblem {
  const endpoint = settings.endpoint ?? `the AWS S3 endpoint of ${settings.region}`;
  const codes = errorCodes(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  const tls = codes.find((code) => TLS_CODES.has(code));
  if (tls) {
    return { kind: 'tls', fact: `TLS with ${endpoint} failed (${tls})`, remedy: { setting: 'ca-chain' } };
  }
  if (codes.some(isNetworkCode)) {
    const code = codes.find(isNetworkCode) ?? 'timeout';
    return { kind: 'unreachable', fact: `cannot reach S3 at ${endpoint} (${code})`, remedy: { setting: 'endpoint', what: 'unreachable' } };
  }
  // S3 names the bucket's region on a redirect (301 PermanentRedirect) and on a HeadBucket signed for another
  // region (400): AWS S3 API reference, HeadBucket and "Making requests" (x-amz-bucket-region).
  const actualRegion = bucketRegionOf(error);
  if (actualRegion && actualRegion !== settings.region && (status === 301 || status === 400 || codes.includes('PermanentRedirect') || codes.includes('AuthorizationHeaderMalformed'))) {
    return { kind: 'wrong-region', fact: `bucket "${settings.bucket}" is in region ${actualRegion}, not ${settings.region}`, remedy: { setting: 'region', region: actualRegion } };
  }
  if (status === 404 || codes.includes('NoSuchBucket') || codes.includes('NotFound')) {
    return { kind: 'bucket-missing', fact: `bucket "${settings.bucket}" does not exist at ${endpoint}`, remedy: { setting: 'bucket' } };
  }
  // Bucket names are global across AWS accounts, and HeadBucket on another account's bucket answers 403 (AWS S3 API
  // reference, HeadBucket): on AWS our default name is almost surely someone else's, which no key change fixes.
  const keysRejected = codes.some((c) => ['InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(c));
  if (status === 403 && !keysRejected && settings.bucket === DEFAULT_REQUESTED_BUCKET && (isAwsEndpoint(settings.endpoint) || answeredByAws(error))) {
    return { kind: 'access-denied', fact: `AWS S3 denied access to bucket "${settings.bucket}", a name probably taken by another AWS account (bucket names are global)`, remedy: { setting: 'own-bucket', track: settings.track } };
  }
  if (status === 403 || status === 401 || codes.some((c) => ['AccessDenied', 'Forbidden', 'InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(c))) {
    return { kind: 'access-denied', fact: `S3 at ${endpoint} denied access to bucket "${settings.bucket}"`, remedy: { setting: 'credentials', track: settings.track, what: 'denied' } };
  }
  if (status === 301 || codes.includes('PermanentRedirect') || codes.includes('AuthorizationHeaderMalformed')) {
    // A redirect that names no region: the endpoint is not the bucket's (path style against a global endpoint).
    return { kind: 'wrong-region', fact: `S3 at ${effectiveEndpoint(settings)} redirects requests for bucket "${settings.bucket}" elsewhere`, remedy: { setting: 'regional-endpoint' } };
  }
  const what = status ? `HTTP ${status}` : (codes[0] ?? 'an unexpected error');
  return { kind: 'unknown', fact: `S3 at ${endpoint} answered ${what} for bucket "${settings.bucket}"`, remedy: { setting: 'none' } };
}

/** The problems found before any request: a missing key, an endpoint that is not an http(s) URL. */
export function precheckBucket(settings: S3Settings): BucketCheck | undefined {
  if (!settings.accessKey || !settings.secretKey) {
    return { ok: false, problem: { kind: 'missing-key', fact: `the S3 ${settings.accessKey ? 'secret-key' : 'access-key'} is empty`, remedy: { setting: 'credentials', track: settings.track, what: 'missing', key: settings.accessKey ? 'secret-key' : 'access-key' } } };
  }
  if (settings.endpoint !== undefined) {
    let valid = false;
    try {
      valid = ['http:', 'https:'].includes(new URL(settings.endpoint).protocol);
    } catch {
      valid = false;
    }
    if (!valid) return { ok: false, problem: { kind: 'bad-endpoint', fact: `the S3 endpoint "${settings.endpoint}" is not an http(s) URL`, remedy: { setting: 'endpoint', what: 'invalid' } } };
  }
  return undefined;
}
