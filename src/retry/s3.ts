// The S3 side of the one retry policy: a classifier for AWS SDK v3 errors and a wrapper for any S3 call.
// Give the S3Client `maxAttempts: 1` (s3ClientRetrySettings) so that this policy is the only one retrying.
import { classifyNetworkError, classifyStatus, type Classification } from './classification.ts';
import { parseRetryAfter } from './retry-after.ts';
import type { CallDescription, RetryHooks, RetryPolicy } from './policy.ts';
import type { S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';

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

// Creating a multipart upload twice leaves an orphan upload behind, so it is resent only when the server certainly
// did not act (throttled, refused); every other S3 call we make is idempotent (GET, HEAD, LIST, PUT, DELETE, and
// UploadPart/CompleteMultipartUpload, which address one upload id and part number).
const notIdempotent = new Set(['CreateMultipartUpload']);

/**
 * Puts every request the client sends (ObjectStore calls, a multipart upload's parts, its abort on failure) under the
 * policy, as one build-step middleware: each attempt is signed and sent afresh by the steps after it. Build the
 * client with `maxAttempts: 1` so the SDK's own retries do not multiply ours. A request whose body is a stream
 * cannot be sent twice and gets one attempt.
 */
export function applyS3RetryPolicy(client: S3Client, policy: RetryPolicy): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const verb = (context.commandName ?? 'S3 request').replace(/Command$/, '');
      const input = args.input as { Bucket?: unknown; Key?: unknown };
      const target = `s3://${String(input.Bucket ?? '')}/${typeof input.Key === 'string' ? input.Key : ''}`;
      const body = (args.request as { body?: unknown } | undefined)?.body;
      if (body instanceof Readable) return next(args);
      return policy.run({ verb, target, idempotent: !notIdempotent.has(verb) }, (error) => classifyS3Error(error), () => next(args), {
        // The store turns the SDK's own error (its name and status) into a sentence; keep it rather than wrap it.
        giveUp: (error) => error,
      });
    },
    { step: 'build', priority: 'low', name: 'kubeflowUpgraderRetryPolicy', override: true },
  );
}
