// What a failed outbound call means for a retry: the one vocabulary shared by the Kubernetes and S3 sides.
import { CONNECTION_REFUSED_CODES, CONNECTION_RESET_CODES, TIMEOUT_CODES, errorCodes } from '../errors/codes.ts';

export type FailureKind =
  | 'throttled' // 429, S3 SlowDown: the server refused before acting
  | 'unavailable' // 502/503/504: the server or a proxy in front of it could not answer
  | 'server-error' // 500 and other 5xx: the server may or may not have acted
  | 'connection-refused' // nothing reached the server
  | 'connection-reset' // the connection broke; the request may or may not have been acted on
  | 'timeout' // no answer in time; the request may or may not have been acted on
  | 'expired' // 410 Gone: a list continue token or watch resourceVersion is too old
  | 'client-error' // 4xx other than the above: retrying cannot help
  | 'unknown';

export interface Classification {
  kind: FailureKind;
  /** worth trying again at all (for an idempotent call) */
  retryable: boolean;
  /** the server certainly did not act, so even a non-idempotent call may be sent again */
  notActedOn: boolean;
  /** what the server asked us to wait (Retry-After), in milliseconds */
  retryAfterMs?: number;
  status?: number;
  reason?: string;
}

export type Classifier = (error: unknown) => Classification;

/** Classifies a low-level network error (Node's `code`, or the SDK's error name); undefined when it is not one. */
export function classifyNetworkError(error: unknown): Classification | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const codes = errorCodes(error);
  const message = String((error as { message?: unknown }).message ?? '');
  const refused = codes.find((c) => CONNECTION_REFUSED_CODES.has(c));
  if (refused) return { kind: 'connection-refused', retryable: true, notActedOn: true, reason: refused };
  const reset = codes.find((c) => CONNECTION_RESET_CODES.has(c));
  if (reset || /socket hang up/i.test(message)) {
    return { kind: 'connection-reset', retryable: true, notActedOn: false, reason: reset ?? 'socket hang up' };
  }
  const timeout = codes.find((c) => TIMEOUT_CODES.has(c));
  if (timeout) return { kind: 'timeout', retryable: true, notActedOn: false, reason: timeout };
  return undefined;
}

/** Classifies an HTTP status the way both Kubernetes and S3 use it. */
export function classifyStatus(status: number, reason?: string, retryAfterMs?: number): Classification {
  const base = { status, ...(reason === undefined ? {} : { reason }), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  if (status === 429) return { ...base, kind: 'throttled', retryable: true, notActedOn: true };
  if (status === 502 || status === 503 || status === 504) return { ...base, kind: 'unavailable', retryable: true, notActedOn: false };
  // 501 Not Implemented is a permanent answer (an S3-compatible store without that call): asking again cannot help.
  if (status === 501) return { ...base, kind: 'client-error', retryable: false, notActedOn: true };
  if (status >= 500) return { ...base, kind: 'server-error', retryable: true, notActedOn: false };
  if (status === 410) return { ...base, kind: 'expired', retryable: false, notActedOn: true };
  return { ...base, kind: 'client-error', retryable: false, notActedOn: true };
}

export const notRetryable: Classification = { kind: 'unknown', retryable: false, notActedOn: false };
