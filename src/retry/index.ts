export { RetryPolicy, RetryError, describeFailure, defaultRetrySettings } from './policy.ts';
export type { RetrySettings, CallDescription, FailureSummary, RetryHooks } from './policy.ts';
export { classifyNetworkError, classifyStatus, notRetryable } from './classification.ts';
export type { Classification, Classifier, FailureKind } from './classification.ts';
export { parseRetryAfter } from './retry-after.ts';
export { systemClock, ManualClock } from './clock.ts';
export type { Clock } from './clock.ts';
export { classifyS3Error, withS3Retry, s3ClientRetrySettings, applyS3RetryPolicy } from './s3.ts';
