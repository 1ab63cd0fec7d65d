// test-kind: process (the AWS SDK's own HTTP handler connects to a closed loopback port: a socket no import shows)
// The S3 retry adapter with a real SDK call whose every connection is refused, apart from tests/retry/s3.test.ts so
// that the fast tier opens no socket (tests/support/fast-tier.ts).
import { expect } from 'chai';
import { S3Client, HeadBucketCommand } from '@aws-sdk/client-s3';
import { ManualClock } from '../../src/retry/clock.ts';
import { RetryError, RetryPolicy } from '../../src/retry/policy.ts';
import { s3ClientRetrySettings, withS3Retry } from '../../src/retry/s3.ts';

describe('S3 retry adapter over a refused connection', () => {
  it('names bucket and operation when a real SDK call keeps failing to connect', async () => {
    const client = new S3Client({ ...s3ClientRetrySettings, region: 'us-east-1', endpoint: 'http://127.0.0.1:1', forcePathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    const policy = new RetryPolicy({ maxAttempts: 2, baseDelayMs: 1 }, new ManualClock(), () => 0);
    const thrown = (await withS3Retry(policy, { verb: 'HeadBucket', target: 's3://backups', idempotent: true }, () => client.send(new HeadBucketCommand({ Bucket: 'backups' }))).catch((e: unknown) => e)) as RetryError;
    client.destroy();
    expect(thrown).to.be.instanceOf(RetryError);
    expect(thrown.message).to.match(/^HeadBucket s3:\/\/backups failed after 2 attempts/);
    expect(thrown.summary.classification.kind).to.equal('connection-refused');
  });
});
