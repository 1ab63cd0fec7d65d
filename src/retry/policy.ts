// The one retry policy for every outbound call: jittered exponential backoff, capped, within a total deadline,
// honouring Retry-After, and never re-sending a non-idempotent request the server may already have acted on.
import { systemClock, type Clock } from './clock.ts';
import type { Classification, Classifier } from './classification.ts';
import { KfuError } from '../errors/index.ts';

export interface RetrySettings {
  /** first backoff step */
  baseDelayMs: number;
  /** no single backoff step is longer than this (a longer Retry-After is still honoured within the deadline) */
  maxDelayMs: number;
  /** no retry starts after this much time since the first attempt */
  deadlineMs: number;
  maxAttempts: number;
}

export const defaultRetrySettings: RetrySettings = { baseDelayMs: 200, maxDelayMs: 10_000, deadlineMs: 120_000, maxAttempts: 10 };

/** Names the call in errors and logs: 'create', 'notebooks kubeflow-user-alice/nb1'. */
export interface CallDescription {
  verb: string;
  target: string;
  /** sending it twice has the same effect as once (reads, PUT, DELETE, a create whose 409 the caller accepts) */
  idempotent: boolean;
}

export interface FailureSummary {
  call: CallDescription;
  attempts: number;
  elapsedMs: number;
  classification: Classification;
  /** why the policy stopped: 'not retryable', 'not safe to resend', 'deadline', 'attempts', 'aborted' */
  stoppedBecause: string;
}

export interface RetryHooks {
  /** sees each failure that will be retried (for logs and counters) */
  onRetry?: (error: unknown, summary: FailureSummary, delayMs: number) => void;
  /** turns the last error into the one the caller sees; by default, RetryError when retries ran out */
  giveUp?: (error: unknown, summary: FailureSummary) => unknown;
  signal?: AbortSignal;
}

/** The final error of a call that was retried and still failed: one sentence naming what failed and why. */
/** A call the policy gave up on: retried as long as it could, or not retryable at all. */
export class RetryError extends KfuError {
  static override readonly errorId = 'RetryError';
  readonly verb: string;
  readonly target: string;
  readonly status: number | undefined;
  readonly reason: string | undefined;
  readonly attempts: number;
  constructor(readonly lastError: unknown, readonly summary: FailureSummary) {
    super(describeFailure(lastError, summary), { kind: 'unavailable', cause: lastError });
    this.verb = summary.call.verb;
    this.target = summary.call.target;
    this.status = summary.classification.status;
    this.reason = summary.classification.reason;
    this.attempts = summary.attempts;
  }
}

export function describeFailure(error: unknown, summary: FailureSummary): string {
  const { call, attempts, elapsedMs, classification: c } = summary;
  const what = [c.status, c.reason ?? c.kind].filter((part) => part !== undefined).join(' ');
  const detail = error instanceof Error && error.message ? `: ${error.message.replace(/\.$/, '')}` : '';
  const tries = attempts === 1 ? '' : ` after ${attempts} attempts over ${(elapsedMs / 1000).toFixed(1)}s`;
  return `${call.verb} ${call.target} failed${tries} (${what}${detail}).`;
}

export class RetryPolicy {
  readonly settings: RetrySettings;
  constructor(
    settings: Partial<RetrySettings> = {},
    private readonly clock: Clock = systemClock,
    private readonly random: () => number = Math.random,
  ) {
    this.settings = { ...defaultRetrySettings, ...settings };
  }

  /** The wait before attempt `attempt + 1` (attempt counts from 1): equal jitter over a capped exponential step. */
  backoffMs(attempt: number): number {
    const step = Math.min(this.settings.maxDelayMs, this.settings.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(step / 2 + (this.random() * step) / 2);
  }

  async run<T>(call: CallDescription, classify: Classifier, attemptOnce: (attempt: number) => Promise<T>, hooks: RetryHooks = {}): Promise<T> {
    const started = this.clock.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await attemptOnce(attempt);
      } catch (error) {
        const classification = classify(error);
        const elapsedMs = this.clock.now() - started;
        const summary = (stoppedBecause: string): FailureSummary => ({ call, attempts: attempt, elapsedMs, classification, stoppedBecause });
        const stop = (stoppedBecause: string): never => {
          const s = summary(stoppedBecause);
          throw hooks.giveUp ? hooks.giveUp(error, s) : attempt === 1 && !classification.retryable ? error : new RetryError(error, s);
        };
        if (!classification.retryable) stop('not retryable');
        if (!call.idempotent && !classification.notActedOn) stop('not safe to resend');
        if (hooks.signal?.aborted) stop('aborted');
        if (attempt >= this.settings.maxAttempts) stop('attempts');
        const delayMs = Math.max(this.backoffMs(attempt), classification.retryAfterMs ?? 0);
        if (elapsedMs + delayMs > this.settings.deadlineMs) stop('deadline');
        hooks.onRetry?.(error, summary('retrying'), delayMs);
        await this.clock.sleep(delayMs, hooks.signal);
      }
    }
  }
}
