// The test S3 server in its own process: s3rver, with what upstream S3 does and s3rver does not (aws-chunked bodies,
// tests/support/s3/aws-chunked.ts) added in front of it.
import { expect } from 'chai';
import { S3Client, PutObjectCommand, GetObjectCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { startS3Server, type S3ServerHandle } from './s3/server.ts';

describe('test support: s3rver process', () => {
  let server: S3ServerHandle;
  before(async () => {
    server = await startS3Server({ buckets: ['support-check'] });
  });
  after(async () => {
    await server.stop();
  });

  it('serves the real S3 SDK over path-style HTTP with its fixed credentials', async () => {
    const s3 = new S3Client({
      endpoint: server.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
    await s3.send(new HeadBucketCommand({ Bucket: 'support-check' }));
    await s3.send(new PutObjectCommand({ Bucket: 'support-check', Key: 'a/b.txt', Body: 'hello' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'support-check', Key: 'a/b.txt' }));
    expect(await got.Body!.transformToString()).to.equal('hello');
  });
});
