// Upstream: github.com/jamhall/s3rver lib/stores/filesystem.js (what it did), and S3's flat key space (what S3 does).
// A delete that empties a "folder" and a PUT into it at the same moment, as restic's movers do with their lock files:
// S3 has no folders, so every PUT succeeds and the server stays up (directory-cleanup.ts).
import { expect } from 'chai';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Server, type S3ServerHandle } from './server.ts';

describe('test S3 server: a delete never pulls a folder from under a concurrent PUT', function () {
  let s3: S3ServerHandle;
  let client: S3Client;
  before(async () => {
    s3 = await startS3Server({ buckets: ['locks'] });
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  });
  after(async () => {
    client?.destroy();
    await s3?.stop();
  });

  it('keeps every PUT of 300 rounds of put-one-delete-the-other in one folder', async () => {
    await client.send(new PutObjectCommand({ Bucket: 'locks', Key: 'repo/locks/lock-0', Body: 'x' }));
    for (let i = 1; i <= 300; i++) {
      await Promise.all([
        client.send(new DeleteObjectCommand({ Bucket: 'locks', Key: `repo/locks/lock-${i - 1}` })),
        client.send(new PutObjectCommand({ Bucket: 'locks', Key: `repo/locks/lock-${i}`, Body: 'x'.repeat(1000) })),
      ]);
    }
    const listed = await client.send(new ListObjectsV2Command({ Bucket: 'locks', Prefix: 'repo/locks/' }));
    expect((listed.Contents ?? []).map((o) => o.Key)).to.deep.equal(['repo/locks/lock-300']);
  });
});
