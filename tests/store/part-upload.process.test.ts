import { expect } from 'chai';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { PartBuffers, uploadStream } from '../../src/store/part-upload.ts';
import { readRequestLog, startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { BUCKET, s3ClientFor } from '../archive/fixtures.ts';

const MiB = 1024 * 1024;
const PART = 5 * MiB;

/** PartBuffers that count the buffers they had to allocate */
class CountedBuffers extends PartBuffers {
  allocated = 0;
  override take(): Buffer {
    if (this.spares === 0) this.allocated++;
    return super.take();
  }
}

/** `bytes` cut into pieces of uneven sizes, as gzip or the manifest's writer hand them over */
function unevenly(bytes: Buffer): Readable {
  const pieces: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = [16 * 1024, 700 * 1024, 1, 3 * MiB + 17][i % 4]!;
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return Readable.from(pieces);
}

describe('store/part-upload: a stream uploaded in reused part buffers, against s3rver', () => {
  let server: S3ServerHandle;
  let client: S3Client;
  let scratch: string;
  let log: string;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'part-upload-'));
    log = join(scratch, 'requests.jsonl');
    server = await startS3Server({ buckets: [BUCKET], requestLog: log });
    client = s3ClientFor(server);
  });
  after(async () => {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function read(key: string): Promise<Buffer> {
    const answer = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await answer.Body!.transformToByteArray());
  }

  function requestsFor(key: string): string[] {
    return readRequestLog(log)
      .filter((r) => r.path === `/${BUCKET}/${key}` && r.method !== 'GET')
      .map((r) => `${r.method} ${r.query.includes('uploads') ? 'create' : r.query.includes('partNumber') ? 'part' : r.query.includes('uploadId') ? 'upload' : 'object'}`);
  }

  const upload = (key: string, body: Readable, buffers: PartBuffers, queueSize = 1) =>
    uploadStream(client, { Bucket: BUCKET, Key: key, ContentType: 'application/octet-stream' }, body, { buffers, queueSize, signal: new AbortController().signal });

  it('stores every byte of bodies that end before, at and after a part boundary, in one PUT when they fit one part', async () => {
    const buffers = new PartBuffers(PART, 2);
    for (const [name, size, calls] of [
      ['empty', 0, ['PUT object']],
      ['small', 1234, ['PUT object']],
      ['one-part', PART, ['PUT object']],
      ['one-more', PART + 1, ['POST create', 'PUT part', 'PUT part', 'POST upload']],
      ['two-parts', 2 * PART, ['POST create', 'PUT part', 'PUT part', 'POST upload']],
      ['uneven', 2 * PART + 3 * MiB + 5, ['POST create', 'PUT part', 'PUT part', 'PUT part', 'POST upload']],
    ] as const) {
      const bytes = randomBytes(size);
      await upload(`sizes/${name}`, unevenly(bytes), buffers, 2);
      expect((await read(`sizes/${name}`)).equals(bytes), name).to.equal(true);
      expect(requestsFor(`sizes/${name}`), name).to.deep.equal(calls);
    }
  });

  it('takes the buffers an earlier upload left, and never sends what that upload wrote into them', async () => {
    const buffers = new CountedBuffers(PART, 2);
    const first = randomBytes(3 * PART + 99);
    await upload('reuse/first', unevenly(first), buffers);
    // one part filling while one goes up
    expect(buffers.allocated).to.equal(2);
    const second = randomBytes(PART + 10);
    await upload('reuse/second', unevenly(second), buffers);
    const third = Buffer.alloc(100, 0x61);
    await upload('reuse/third', unevenly(third), buffers);
    expect(buffers.allocated).to.equal(2);
    expect((await read('reuse/first')).equals(first)).to.equal(true);
    expect((await read('reuse/second')).equals(second)).to.equal(true);
    expect((await read('reuse/third')).equals(third)).to.equal(true);
  });

  it('keeps no more than queueSize parts in flight and one filling', async () => {
    const buffers = new CountedBuffers(PART, 8);
    const bytes = randomBytes(7 * PART);
    await upload('queue/seven', Readable.from([bytes]), buffers, 3);
    expect(buffers.allocated).to.be.at.most(4);
    expect((await read('queue/seven')).equals(bytes)).to.equal(true);
  });

  it('cancelled mid-stream: rejects as aborted, aborts the multipart upload and leaves no object', async () => {
    const body = new Readable({ read() {} });
    const cancel = new AbortController();
    const running = uploadStream(client, { Bucket: BUCKET, Key: 'cancel/blob' }, body, { buffers: new PartBuffers(PART, 2), queueSize: 1, signal: cancel.signal });
    body.push(randomBytes(PART + MiB)); // a full part and more: the multipart upload has begun
    const deadline = Date.now() + 10_000;
    while (!requestsFor('cancel/blob').includes('PUT part') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(requestsFor('cancel/blob')).to.include('PUT part');
    cancel.abort();
    const failure = await running.then(() => undefined, (e: unknown) => e as Error);
    expect(failure?.name).to.equal('AbortError');
    expect(body.destroyed).to.equal(true);
    expect(requestsFor('cancel/blob').at(-1)).to.equal('DELETE upload');
    const missing = await read('cancel/blob').then(() => undefined, (e: { name?: string }) => e.name);
    expect(missing).to.equal('NoSuchKey');
  });

  it('fails with the stream\'s own error, and aborts the multipart upload it had begun', async () => {
    const body = new Readable({ read() {} });
    const running = upload('broken/blob', body, new PartBuffers(PART, 2));
    body.push(randomBytes(PART + MiB));
    const deadline = Date.now() + 10_000;
    while (!requestsFor('broken/blob').includes('PUT part') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    body.destroy(new Error('the producer broke'));
    const failure = await running.then(() => undefined, (e: unknown) => e as Error);
    expect(failure?.message).to.equal('the producer broke');
    expect(requestsFor('broken/blob').at(-1)).to.equal('DELETE upload');
  });
});
