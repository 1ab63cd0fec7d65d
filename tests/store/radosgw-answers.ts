// How Ceph's radosgw 16 answers where it differs from AWS S3 and from s3rver, and what the product makes of each
// answer: one set of cases, run on a real radosgw (radosgw-answers.rgw.ts, `npm run test:rgw`) and on s3rver answering
// as radosgw (radosgw-answers.process.test.ts, tests/support/s3/radosgw-answers.ts), so the model the fast tests see is
// checked against the real thing case by case. The raw answers are read with the AWS SDK as any client would; the
// product's side goes through its own client and object store.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { checkBucket, createS3Client } from '../../src/store/s3-client.ts';
import { probeBucket } from '../../src/store/bucket-probe.ts';
import { openObjectStore } from '../../src/store/open.ts';
import { StoreError } from '../../src/store/objects.ts';
import type { S3Settings } from '../../src/store/settings.ts';

export interface RadosgwLike {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

/** What an SDK error says: its name (the S3 code), its message, its HTTP status. */
async function failure(work: Promise<unknown>): Promise<{ name: string; message: string; status: number | undefined }> {
  const error = await work.then(() => undefined, (e: unknown) => e as Error & { $metadata?: { httpStatusCode?: number } });
  expect(error, 'the request was refused').to.be.instanceOf(Error);
  return { name: error!.name, message: error!.message, status: error!.$metadata?.httpStatusCode };
}

export function describeRadosgwAnswers(name: string, start: (bucket: string) => Promise<RadosgwLike>): void {
  describe(`store: radosgw's answers and what the product makes of them (${name})`, function () {
    this.timeout(120_000);
    const BUCKET = 'kf-backups';
    let server: RadosgwLike;
    let settings: S3Settings;
    /** a client with the SDK's defaults: checksums whenever supported, so a stream goes aws-chunked with a trailer */
    let plain: S3Client;
    before(async () => {
      server = await start(BUCKET);
      settings = { endpoint: server.endpoint, region: server.region, accessKey: server.accessKeyId, secretKey: server.secretAccessKey, bucket: BUCKET, path: 'kf', uriStyle: 'path' };
      plain = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey }, maxAttempts: 1 });
    });
    after(async () => {
      plain?.destroy();
      await server?.stop();
    });

    it('HeadBucket names no region: the status probe and the actions\' check pass and keep the configured region', async () => {
      const answer = await plain.send(new HeadBucketCommand({ Bucket: BUCKET }));
      expect(answer.BucketRegion).to.equal(undefined);
      expect(await checkBucket(settings)).to.deep.equal({ ok: true });
      expect(await probeBucket(settings)).to.deep.equal({ ok: true });
      // any region signs for a one-zone radosgw, so a region that is no AWS region's name is not a mismatch
      expect(await checkBucket({ ...settings, region: 'eu-west-1' }, { followRegionRedirects: false })).to.deep.equal({ ok: true });
    });

    it('GetBucketLocation answers the zonegroup "default", not an AWS region', async () => {
      expect((await plain.send(new GetBucketLocationCommand({ Bucket: BUCKET }))).LocationConstraint).to.equal('default');
    });

    it('error bodies carry the code and no message: the SDK names the error by its code, the product words it from the code', async () => {
      expect(await failure(plain.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'kf/no-such-object' })))).to.deep.equal({ name: 'NoSuchKey', message: 'UnknownError', status: 404 });
      const store = openObjectStore(settings, { maxAttempts: 1 });
      try {
        const missing = await store.getBytes('no-such-object').then(() => undefined, (e: unknown) => e);
        expect((missing as Error).message).to.equal(`Could not read s3://${BUCKET}/kf/no-such-object: the object does not exist.`);
      } finally {
        store.client.destroy();
      }
    });

    it('a storage class the zone does not define is refused InvalidArgument: backup data fails in one sentence naming it, STANDARD files are written', async () => {
      expect(await failure(plain.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kf/ia', Body: 'x', StorageClass: 'STANDARD_IA' })))).to.deep.equal({ name: 'InvalidArgument', message: 'UnknownError', status: 400 });
      const store = openObjectStore({ ...settings, storageClass: 'STANDARD_IA' }, { maxAttempts: 1 });
      try {
        await store.put('read-first.json', '{"a":1}', 'application/json');
        expect(await store.exists('read-first.json')).to.equal(true);
        for (const body of [Readable.from([Buffer.from('small tarball')]), Readable.from([Buffer.alloc(6 * 1024 * 1024, 7)])]) {
          const refused = await store.startUpload('data.tar.gz', body, 'application/gzip', 'data').done().then(() => undefined, (e: unknown) => e);
          expect(refused).to.be.instanceOf(StoreError);
          expect((refused as StoreError).condition).to.equal('storage-class');
          expect((refused as StoreError).message).to.equal(`Could not upload s3://${BUCKET}/kf/data.tar.gz: the object store refused the storage class "STANDARD_IA" (InvalidArgument); choose a storage class this store offers, or none for the bucket's default.`);
        }
        expect(await store.exists('data.tar.gz')).to.equal(false);
      } finally {
        store.client.destroy();
      }
    });

    it('CompleteMultipartUpload answers an empty ETag: the product\'s multipart upload completes, HeadObject shows the parts ETag', async () => {
      const created = await plain.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'kf/raw-multipart' }));
      const part = await plain.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'kf/raw-multipart', UploadId: created.UploadId, PartNumber: 1, Body: Buffer.from('one part') }));
      const done = await plain.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: 'kf/raw-multipart', UploadId: created.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
      expect(done.ETag).to.equal('');
      const store = openObjectStore(settings, { maxAttempts: 1 });
      try {
        await store.startUpload('tarball.tar.gz', Readable.from([Buffer.alloc(6 * 1024 * 1024, 1), Buffer.alloc(1024, 2)]), 'application/gzip', 'data').done();
        const head = await store.head('tarball.tar.gz');
        expect(head?.size).to.equal(6 * 1024 * 1024 + 1024);
        expect(head?.etag).to.match(/^"[0-9a-f]{32}-2"$/);
      } finally {
        store.client.destroy();
      }
    });

    it('a stream body with trailing checksums (the SDK\'s default) is refused 411; the product\'s client sends it checksummed only when required, and it is stored', async () => {
      const body = () => Readable.from([Buffer.from('streamed bytes')]);
      expect(await failure(plain.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kf/streamed', Body: body(), ContentLength: 14 })))).to.deep.equal({ name: 'MissingContentLength', message: 'UnknownError', status: 411 });
      const client = createS3Client(settings, { maxAttempts: 1 });
      try {
        await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kf/streamed', Body: body(), ContentLength: 14 }));
        const read = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'kf/streamed' }));
        expect(await read.Body!.transformToString()).to.equal('streamed bytes');
      } finally {
        client.destroy();
      }
    });
  });
}
