// Errors of the Kubernetes API, built from the Status body the server answers with, named by what was asked.
import { classifyNetworkError, classifyStatus, type Classification } from '../retry/classification.ts';
import { KfuError } from '../errors/index.ts';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: Array<{ reason?: string; message?: string; field?: string }>;
  retryAfterSeconds?: number;
}

/** What a request was about, for messages: 'create notebooks kubeflow-user-alice/nb1'. */
export interface RequestSubject {
  verb: string;
  resource: string;
  namespace?: string | undefined;
  name?: string | undefined;
}

export function describeSubject(subject: RequestSubject): string {
  const where = [subject.namespace, subject.name].filter(Boolean).join('/');
  return `${subject.verb} ${subject.resource}${where ? ` ${where}` : ''}`;
}

export class KubeApiError extends KfuError {
  static override readonly errorId = 'KubeApiError';
  constructor(
    readonly status: number,
    readonly reason: string,
    /** the server's own message, without our prefix */
    readonly serverMessage: string,
    readonly details: StatusDetails | undefined,
    readonly subject: RequestSubject,
    /** what the server asked us to wait (Retry-After header or details.retryAfterSeconds) */
    readonly retryAfterMs?: number,
    /** a continue token offered with 410 Expired, to go on with an inconsistent list */
    readonly continueToken?: string,
  ) {
    // 5xx and 429 are the server's trouble and may pass; any other answer is its refusal of this request.
    super(`${describeSubject(subject)} failed: ${status} ${reason}${serverMessage ? `: ${serverMessage.replace(/\.$/, '')}` : ''}.`,
      { kind: status >= 500 || status === 429 ? 'unavailable' : 'refused', retryable: status >= 500 || status === 429 });
  }

  /** The same error, retold after the retry policy gave up. */
  afterAttempts(attempts: number, elapsedMs: number): KubeApiError {
    const retold = new KubeApiError(this.status, this.reason, this.serverMessage, this.details, this.subject, this.retryAfterMs, this.continueToken);
    retold.message = retold.message.replace(/\.$/, ` (gave up after ${attempts} attempts over ${(elapsedMs / 1000).toFixed(1)}s).`);
    return retold;
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 404;
}
export function isAlreadyExists(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 409 && error.reason === 'AlreadyExists';
}
export function isConflict(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 409 && error.reason === 'Conflict';
}

const reasonsByStatus: Record<number, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict',
  410: 'Expired', 415: 'UnsupportedMediaType', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError',
  503: 'ServiceUnavailable', 504: 'Timeout',
};

/** Builds the error from a non-2xx answer; the body is a metav1.Status when the API server itself answered. */
export function kubeApiErrorFrom(status: number, body: string, retryAfterMs: number | undefined, subject: RequestSubject): KubeApiError {
  let parsed: { kind?: string; reason?: string; message?: string; details?: StatusDetails; metadata?: { continue?: string } } | undefined;
  try {
    const value: unknown = JSON.parse(body);
    if (value && typeof value === 'object') parsed = value as typeof parsed;
  } catch {
    parsed = undefined;
  }
  const reason = parsed?.reason || reasonsByStatus[status] || `HTTP${status}`;
  const message = parsed?.message ?? body.slice(0, 200).trim();
  const hinted = parsed?.details?.retryAfterSeconds;
  const wait = retryAfterMs ?? (typeof hinted === 'number' ? hinted * 1000 : undefined);
  return new KubeApiError(status, reason, message, parsed?.details, subject, wait, parsed?.metadata?.continue || undefined);
}

/**
 * The admission webhook a write failed on because the API server could not call it, and the server's reason: under
 * failurePolicy Fail the dispatcher answers `apierrors.NewInternalError(err)`, a 500 "Internal error occurred: failed
 * calling webhook "<name>": failed to call webhook: <why>" (kubernetes staging/src/k8s.io/apiserver/pkg/admission/
 * plugin/webhook/validating/dispatcher.go and mutating/dispatcher.go; util/webhook/error.go ErrCallingWebhook; before
 * Kubernetes 1.14 "failed calling admission webhook"). A webhook that answered and refused is "denied the request" and
 * is not this.
 */
export function unreachableWebhook(error: unknown): { name: string; why: string } | undefined {
  if (!(error instanceof KubeApiError) || error.status !== 500) return undefined;
  return webhookCallFailure(error.serverMessage);
}

/** the same, read from the server's sentence wherever it was passed on (a Job's FailedCreate event: "Error creating: …") */
export function webhookCallFailure(message: string): { name: string; why: string } | undefined {
  const match = /failed calling (?:admission )?webhook "([^"]+)"(?::\s*(?:failed to call webhook:\s*)?(.*))?/s.exec(message);
  if (!match) return undefined;
  return { name: match[1]!, why: (match[2] ?? 'no further details').replace(/\.$/, '') };
}

/**
 * A quota whose status its controller has not written yet for a resource it tracks (a quota just changed) refuses
 * every write it counts with 403 `status unknown for quota: …` (kubernetes/kubernetes staging/src/k8s.io/apiserver/
 * pkg/admission/plugin/resourcequota/controller.go, CheckRequest's hasUsageStats), before anything is stored: the
 * quota controller's next sync ends it, so it is a wait, not a refusal.
 */
function isQuotaStatusPending(error: KubeApiError): boolean {
  return error.status === 403 && error.serverMessage.includes(' is forbidden: status unknown for quota: ');
}

/** How the retry policy should treat a failure of a Kubernetes request. */
export function classifyKubeError(error: unknown): Classification {
  // The server did not act, but the operator behind the webhook may take minutes to start: the caller that knows what
  // it writes waits for the webhook (src/restore/webhook-wait.ts) instead of each request spending its retries alone.
  if (unreachableWebhook(error)) return { kind: 'server-error', retryable: false, notActedOn: true };
  if (error instanceof KubeApiError && isQuotaStatusPending(error)) return { ...classifyStatus(error.status, error.reason), kind: 'unavailable', retryable: true, notActedOn: true };
  if (error instanceof KubeApiError) return classifyStatus(error.status, error.reason, error.retryAfterMs);
  return classifyNetworkError(error) ?? { kind: 'unknown', retryable: false, notActedOn: false };
}
