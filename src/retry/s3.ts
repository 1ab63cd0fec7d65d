// The S3 side of the one retry policy: a classifier for AWS SDK v3 errors and a wrapper for any S3 call.
// Give the S3Client `maxAttempts: 1` (s3ClientRetrySettings) so that this policy is the only one retrying.
import { classifyNetworkError, classifyStatus, type Classification } from './classification.ts';
import { parseRetryAfter } from './retry-after.ts';
import type { CallDescription, RetryHooks, RetryPolicy } from './policy.ts';

export const s3ClientRetrySettings = { maxAttempts: 1 } as const;

interface AwsErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
  $retryable?: { throttling?: boolean };
}

const throttlingNames = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'TooManyRequestsException', 'RequestLimitExceeded']);
const transientNames = new Set(['InternalError', 'ServiceUnavailable', 'RequestTimeout', 'RequestTimeoutException']);

export function classifyS3Error(error: unknown, nowMs: number = Date.now()): Classification {
  const network = classifyNetworkError(error);
  if (network) return network;
  if (typeof error !== 'object' || error === null) return { kind: 'unknown', retryable: false, notActedOn: false };
  const e = error as AwsErrorShape;
  const name = e.name ?? e.code ?? 'Error';
  const headers = e.$response?.headers ?? {};
  const retryAfterMs = parseRetryAfter(headers['retry-after'] ?? headers['Retry-After'], nowMs);
  const status = e.$metadata?.httpStatusCode;
  // S3 throttles with 503 SlowDown: the request was refused, not half-done, so even a create may be resent.
  if (throttlingNames.has(name) || e.$retryable?.throttling) {
    return { kind: 'throttled', retryable: true, notActedOn: true, reason: name, ...(status ? { status } : {}), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }
  if (status !== undefined) return classifyStatus(status, name, retryAfterMs);
  if (transientNames.has(name)) return { kind: 'unavailable', retryable: true, notActedOn: false, reason: name };
  return { kind: 'unknown', retryable: false, notActedOn: false, reason: name };
}

/** Runs one S3 call under the policy; `call` must rebuild its request (and any body stream) on each attempt. */
export function withS3Retry<T>(policy: RetryPolicy, what: CallDescription, call: (attempt: number) => Promise<T>, hooks?: RetryHooks): Promise<T> {
  return policy.run(what, (error) => classifyS3Error(error), call, hooks);
}
