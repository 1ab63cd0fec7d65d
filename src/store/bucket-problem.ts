// Why a bucket cannot be used, in one sentence a user can act on: the classification shared by checkBucket (the AWS
// SDK client, s3-client.ts) and probeBucket (the light probe of the status, bucket-probe.ts). No SDK import here.
import type { S3Settings } from './settings.ts';

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

/** Turns any error of an S3 call into a problem a user can act on. */
export function classifyS3Error(error: unknown, settings: Pick<S3Settings, 'bucket' | 'endpoint' | 'region'>): BucketProblem {
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
  if (status === 404 || codes.includes('NoSuchBucket') || codes.includes('NotFound')) {
    return { kind: 'bucket-missing', message: `bucket "${settings.bucket}" does not exist at ${endpoint}; create it or fix the bucket option of s3-integrator` };
  }
  if (status === 403 || status === 401 || codes.some((c) => ['AccessDenied', 'Forbidden', 'InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(c))) {
    return { kind: 'access-denied', message: `S3 at ${endpoint} denied access to bucket "${settings.bucket}"; check the credentials given to s3-integrator and the bucket policy` };
  }
  if (status === 301 || codes.includes('PermanentRedirect') || codes.includes('AuthorizationHeaderMalformed')) {
    return { kind: 'wrong-region', message: `bucket "${settings.bucket}" is in another region than "${settings.region}"; fix the region option of s3-integrator` };
  }
  const what = status ? `HTTP ${status}` : (codes[0] ?? 'an unexpected error');
  return { kind: 'unknown', message: `S3 at ${endpoint} answered ${what} for bucket "${settings.bucket}"` };
}

/** The problems found before any request: a missing key, an endpoint that is not an http(s) URL. */
export function precheckBucket(settings: S3Settings): BucketCheck | undefined {
  if (!settings.accessKey || !settings.secretKey) {
    return { ok: false, problem: { kind: 'missing-key', message: `the S3 ${settings.accessKey ? 'secret-key' : 'access-key'} is empty; set it with the sync-s3-credentials action of s3-integrator` } };
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
