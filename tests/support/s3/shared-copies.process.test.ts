// The test S3 server's server-side copy links the body instead of copying it (shared-copies.ts); what a client sees must
// stay what s3rver (github.com/jamhall/s3rver lib/controllers/object.js putObjectCopy, lib/stores/filesystem.js copyObject) and a
// real S3 show: the source's ETag, COPY/REPLACE metadata directives, Last-Modified at the copy's time, and objects that
// stay independent when either side is overwritten or deleted afterwards.
import { expect } from 'chai';
import { statSync } from 'node:fs';
import {
  CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client,
} from '@aws-sdk/client-s3';
import { startS3Server, type S3ServerHandle } from './server.ts';

const BUCKET = 'copies';

describe('test support: s3rver server-side copies share the body', () => {
  let server: S3ServerHandle;
  let s3: S3Client;
  before(async () => {
    server = await startS3Server({ buckets: [BUCKET] });
    s3 = new S3Client({
      endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
  });
  after(async () => {
    s3?.destroy();
    await server?.stop();
  });

  const read = async (key: string) => (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();
  const head = (key: string) => s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
  const copy = (from: string, to: string, extra: Partial<ConstructorParameters<typeof CopyObjectCommand>[0]> = {}) =>
    s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: to, CopySource: `${BUCKET}/${from}`, ...extra }));
  /** the file holding an object's body in the server's folder (s3rver's `<key>._S3rver_object`) */
  const bodyFile = (key: string) => `${server.directory}/${BUCKET}/${key}._S3rver_object`;
  /** Last-Modified has whole seconds: wait into the next one so a copy's time differs from its source's */
  const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1100 - (Date.now() % 1000)));

  it('answers a copy with the source ETag and the copy time, and the body is one file on disk, not two', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'a/source.bin', Body: 'the source body', Metadata: { mtime: '1700000000' } }));
    const source = await head('a/source.bin');
    await nextSecond();
    const copied = await copy('a/source.bin', 'b/copy.bin');
    expect(copied.CopyObjectResult?.ETag).to.equal(source.ETag);
    const target = await head('b/copy.bin');
    expect(target.ETag).to.equal(source.ETag);
    expect(target.ContentLength).to.equal(source.ContentLength);
    expect(target.Metadata, 'COPY directive: the source metadata').to.deep.equal({ mtime: '1700000000' });
    expect(target.LastModified!.getTime(), 'Last-Modified is the time of the copy').to.be.greaterThan(source.LastModified!.getTime());
    expect(copied.CopyObjectResult?.LastModified?.getTime()).to.equal(target.LastModified!.getTime());
    expect((await head('a/source.bin')).LastModified, 'the source keeps its own time').to.deep.equal(source.LastModified);
    expect(await read('b/copy.bin')).to.equal('the source body');
    expect(statSync(bodyFile('b/copy.bin')).ino, 'no bytes were copied').to.equal(statSync(bodyFile('a/source.bin')).ino);
  });

  it('stores the request metadata under the REPLACE directive, with the ETag of the body', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'r/source.txt', Body: 'replace me', Metadata: { kept: 'no' } }));
    const source = await head('r/source.txt');
    await copy('r/source.txt', 'r/copy.txt', { MetadataDirective: 'REPLACE', Metadata: { fresh: 'yes' }, ContentType: 'text/plain' });
    const target = await head('r/copy.txt');
    expect(target.Metadata).to.deep.equal({ fresh: 'yes' });
    expect(target.ContentType).to.equal('text/plain');
    expect(target.ETag).to.equal(source.ETag);
  });

  it('keeps a copy intact when its source is overwritten or deleted, and the source when the copy is', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'i/one.txt', Body: 'first version' }));
    await copy('i/one.txt', 'i/two.txt');
    await copy('i/two.txt', 'i/three.txt');
    const copyEtag = (await head('i/two.txt')).ETag;

    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'i/one.txt', Body: 'second version, longer' }));
    expect(await read('i/one.txt')).to.equal('second version, longer');
    expect(await read('i/two.txt'), 'an overwritten source leaves its copy alone').to.equal('first version');
    expect((await head('i/two.txt')).ETag).to.equal(copyEtag);

    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'i/two.txt' }));
    expect(await read('i/three.txt'), 'a deleted copy leaves the copy made from it').to.equal('first version');

    // a copy onto a key that already holds another object replaces it, without writing into what it shared a body with
    await copy('i/one.txt', 'i/three.txt');
    expect(await read('i/three.txt')).to.equal('second version, longer');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'i/three.txt', Body: 'third' }));
    expect(await read('i/one.txt')).to.equal('second version, longer');

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'i/' }));
    expect(listed.Contents?.map((o) => o.Key), 'nothing but the objects is listed').to.deep.equal(['i/one.txt', 'i/three.txt']);
    const three = listed.Contents!.find((o) => o.Key === 'i/three.txt')!;
    expect(three.Size).to.equal(5);
  });

  it('leaves no folder behind once every object in it, copies included, is deleted', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'gone/source.txt', Body: 'x' }));
    await copy('gone/source.txt', 'gone/deep/copy.txt');
    for (const key of ['gone/deep/copy.txt', 'gone/source.txt']) await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(() => statSync(`${server.directory}/${BUCKET}/gone`)).to.throw(/ENOENT/);
  });

  it('copies the bytes when started with serverSideCopy: bytes, as s3rver as published does', async () => {
    const published = await startS3Server({ buckets: [BUCKET], serverSideCopy: 'bytes' });
    const client = new S3Client({
      endpoint: published.endpoint, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: published.accessKeyId, secretAccessKey: published.secretAccessKey },
    });
    try {
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'p/source.txt', Body: 'copied byte by byte' }));
      const copied = await client.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'p/copy.txt', CopySource: `${BUCKET}/p/source.txt` }));
      expect(copied.CopyObjectResult?.ETag).to.equal((await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'p/source.txt' }))).ETag);
      const file = (key: string) => statSync(`${published.directory}/${BUCKET}/${key}._S3rver_object`);
      expect(file('p/copy.txt').ino).not.to.equal(file('p/source.txt').ino);
    } finally {
      client.destroy();
      await published.stop();
    }
  });
});
