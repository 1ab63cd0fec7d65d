import { expect } from 'chai';
import { ManualClock } from '../../src/retry/clock.ts';
import { RetryPolicy } from '../../src/retry/policy.ts';
import { classifyS3Error, withS3Retry } from '../../src/retry/s3.ts';

function awsError(name: string, status?: number, headers: Record<string, string> = {}) {
  return Object.assign(new Error(name), { name, $metadata: status === undefined ? {} : { httpStatusCode: status }, $response: { headers } });
}

describe('S3 retry adapter', () => {
  it('treats 503 SlowDown as a refusal the server did not act on, with its Retry-After', () => {
    const c = classifyS3Error(awsError('SlowDown', 503, { 'retry-after': '2' }));
    expect(c).to.include({ kind: 'throttled', retryable: true, notActedOn: true, status: 503, retryAfterMs: 2000 });
  });
  it('retries 500 InternalError on idempotent calls only, and never AccessDenied or NoSuchBucket', () => {
    expect(classifyS3Error(awsError('InternalError', 500))).to.include({ retryable: true, notActedOn: false });
    expect(classifyS3Error(awsError('AccessDenied', 403))).to.include({ retryable: false });
    expect(classifyS3Error(awsError('NoSuchBucket', 404))).to.include({ retryable: false });
  });
  it('classifies connection resets and timeouts from the SDK', () => {
    expect(classifyS3Error(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })).kind).to.equal('connection-reset');
    expect(classifyS3Error(Object.assign(new Error('timed out'), { name: 'TimeoutError' })).kind).to.equal('timeout');
  });
  it('retries a throttled call and returns its result', async () => {
    const clock = new ManualClock();
    const policy = new RetryPolicy({ baseDelayMs: 50 }, clock, () => 0);
    let calls = 0;
    const result = await withS3Retry(policy, { verb: 'PutObject', target: 's3://b/k', idempotent: true }, async () => {
      if (++calls < 3) throw awsError('SlowDown', 503);
      return 'etag';
    });
    expect(result).to.equal('etag');
    expect(clock.sleeps).to.deep.equal([25, 50]);
  });
});
