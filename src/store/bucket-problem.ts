// Why a bucket cannot be used, in one sentence a user can act on: the classification shared by checkBucket (the AWS
// SDK client, s3-client.ts) and probeBucket (the light probe of the status, bucket-probe.ts). No SDK import here.
import { credentialsFix, type S3Settings } from './settings.ts';
import { effectiveEndpoint } from './addressing.ts';

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

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);

/** Every error code in an error, its cause chain and an AggregateError's members (happy-eyeballs connects). */
function errorCodes(error: unknown, depth = 0): string[] {
  if (!error || typeof error !== 'object' || depth > 4) return [];
  const e = error as { code?: unknown; name?: unknown; cause?: unknown; errors?: unknown; message?: unknown };
  const codes: string[] = [];
  if (typeof e.code === 'string') codes.push(e.code);
  if (typeof e.name === 'string') codes.push(e.name);
  if (typeof e.message === 'string' && /wrong version number|ssl3_get_record|packet length too long/i.test(e.message)) codes.push('ERR_SSL_WRONG_VERSION_NUMBER');
  codes.push(...errorCodes(e.cause, depth + 1));
  if (Array.isArray(e.errors)) for (const inner of e.errors) codes.push(...errorCodes(inner, depth + 1));
  return codes;
}

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
  if (codes.some((code) => NETWORK_CODES.has(code) || code === 'TimeoutError')) {
    const code = codes.find((c) => NETWORK_CODES.has(c)) ?? 'timeout';
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
