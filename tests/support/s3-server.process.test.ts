// The test S3 server in its own process: s3rver, with what upstream S3 does and s3rver does not (aws-chunked bodies,
// tests/support/s3/aws-chunked.ts) added in front of it.
import { expect } from 'chai';
import { S3Client, PutObjectCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
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

  it('rolls a key of any depth up into its common prefix, as S3\'s ListObjectsV2 does with a delimiter', async () => {
    const s3 = new S3Client({
      endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
    for (const key of ['deep/w/d/f1', 'deep/w/d/e/f2', 'deep/x/top.txt', 'deep/y/z/f3', 'deep/root.txt']) {
      await s3.send(new PutObjectCommand({ Bucket: 'support-check', Key: key, Body: 'x' }));
    }
    const list = async (Prefix: string, StartAfter?: string) => {
      const out = await s3.send(new ListObjectsV2Command({ Bucket: 'support-check', Prefix, Delimiter: '/', ...(StartAfter ? { StartAfter } : {}) }));
      return { keys: (out.Contents ?? []).map((o) => o.Key), prefixes: (out.CommonPrefixes ?? []).map((p) => p.Prefix) };
    };
    expect(await list('deep/')).to.deep.equal({ keys: ['deep/root.txt'], prefixes: ['deep/w/', 'deep/x/', 'deep/y/'] });
    expect(await list('deep/w/')).to.deep.equal({ keys: [], prefixes: ['deep/w/d/'] });
    expect(await list('deep/w')).to.deep.equal({ keys: [], prefixes: ['deep/w/'] });
    expect(await list('deep/', 'deep/w/')).to.deep.equal({ keys: [], prefixes: ['deep/x/', 'deep/y/'] });
    s3.destroy();
  });
});
