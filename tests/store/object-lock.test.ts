// The write parameters of a retained object, and the requests ObjectStore sends with them. AWS wants Content-MD5 (or
// an x-amz-checksum) on a PutObject or UploadPart that carries Object Lock parameters (AWS S3 API reference,
// PutObject: "The Content-MD5 or x-amz-sdk-checksum-algorithm header is required for any request to upload an object
// with a retention period configured using Amazon S3 Object Lock"), and the retention goes on the object's creation
// (PutObject, or CreateMultipartUpload for a multipart one). The requests are recorded by the SDK client's request
// handler, which answers each with the smallest body the SDK's parser takes (the shapes of the API reference:
// InitiateMultipartUploadResult, CompleteMultipartUploadResult): nothing here pretends to lock anything.
// The Content-MD5 vectors are RFC 1321's MD5 test suite, base64-encoded as RFC 1864 says.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { S3Client } from '@aws-sdk/client-s3';
import { HttpResponse, type HttpRequest } from '@smithy/core/transport';
import { contentMd5, lockedWriteParams } from '../../src/store/object-lock.ts';
import { ObjectStore } from '../../src/store/objects.ts';

interface Sent { method: string; path: string; query: Record<string, unknown>; headers: Record<string, string> }

function recordingClient(sent: Sent[]): S3Client {
  return new S3Client({
    endpoint: 'http://s3.invalid', region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    requestChecksumCalculation: 'WHEN_REQUIRED', maxAttempts: 1,
    requestHandler: {
      async handle(request: HttpRequest) {
        if (request.body instanceof Readable) for await (const _ of request.body) void _;
        const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
        sent.push({ method: request.method, path: request.path, query: request.query ?? {}, headers });
        const xml = request.method === 'POST' && 'uploads' in (request.query ?? {})
          ? '<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>up-1</UploadId></InitiateMultipartUploadResult>'
          : request.method === 'POST' ? '<CompleteMultipartUploadResult><ETag>"e-2"</ETag></CompleteMultipartUploadResult>' : '';
        return { response: new HttpResponse({ statusCode: 200, headers: { etag: '"e"' }, body: Readable.from([Buffer.from(xml)]) }) };
      },
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
    },
  });
}

const until = new Date('2027-01-06T12:00:00.000Z');

describe('store/object-lock: the write parameters of a retained object', () => {
  const vectors: Array<[string, string]> = [
    ['', '1B2M2Y8AsgTpgAmY7PhCfg=='],
    ['a', 'DMF1ucDxtqgxw5niaXcmYQ=='],
    ['abc', 'kAFQmDzST7DWlj99KOF/cg=='],
    ['message digest', '+WtpfXy3k41SWi8xqvFh0A=='],
  ];
  for (const [text, md5] of vectors) {
    it(`Content-MD5 of "${text}" is ${md5}`, () => {
      expect(contentMd5(Buffer.from(text))).to.equal(md5);
    });
  }

  it('a retained write carries the mode, the date and the Content-MD5; a plain one none of them', () => {
    expect(lockedWriteParams(Buffer.from('abc'), { mode: 'GOVERNANCE', until })).to.deep.equal({ ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until, ContentMD5: 'kAFQmDzST7DWlj99KOF/cg==' });
    expect(lockedWriteParams(Buffer.from('abc'), undefined)).to.deep.equal({});
  });

  it('put sends one PutObject with the Object Lock headers and the body\'s Content-MD5', async () => {
    const sent: Sent[] = [];
    const store = new ObjectStore({ client: recordingClient(sent), bucket: 'b', prefix: 'p' });
    await store.put('backups/x/velero-backup.json', Buffer.from('abc'), 'application/json', { mode: 'COMPLIANCE', until });
    expect(sent).to.have.length(1);
    expect(sent[0]!.method).to.equal('PUT');
    expect(sent[0]!.headers).to.include({ 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2027-01-06T12:00:00Z', 'content-md5': 'kAFQmDzST7DWlj99KOF/cg==' });
  });

  it('a plain put sends none of them', async () => {
    const sent: Sent[] = [];
    await new ObjectStore({ client: recordingClient(sent), bucket: 'b' }).put('k', Buffer.from('abc'));
    expect(Object.keys(sent[0]!.headers).filter((h) => h.startsWith('x-amz-object-lock') || h === 'content-md5')).to.deep.equal([]);
  });

  it('a multipart upload asks for the retention at its creation and gives every part its Content-MD5', async () => {
    const sent: Sent[] = [];
    const store = new ObjectStore({ client: recordingClient(sent), bucket: 'b', partSizeBytes: 5 * 1024 * 1024 });
    const part = Buffer.alloc(5 * 1024 * 1024, 1);
    const tail = Buffer.from('tail');
    await store.startUpload('backups/x/x.tar.gz', Readable.from([part, tail]), 'application/gzip', 'data', 1, { mode: 'COMPLIANCE', until }).done();
    const create = sent.find((s) => s.method === 'POST' && 'uploads' in s.query)!;
    expect(create.headers).to.include({ 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2027-01-06T12:00:00Z' });
    const parts = sent.filter((s) => s.method === 'PUT' && 'partNumber' in s.query);
    expect(parts.map((p) => p.headers['content-md5'])).to.deep.equal([contentMd5(part), contentMd5(tail)]);
    expect(sent.filter((s) => s.method === 'POST' && 'uploadId' in s.query)).to.have.length(1);
  });

  it('a retained body already in memory goes through the same requests', async () => {
    const sent: Sent[] = [];
    await new ObjectStore({ client: recordingClient(sent), bucket: 'b' }).startUpload('k', Buffer.from('message digest'), 'text/plain', 'read-first', 1, { mode: 'GOVERNANCE', until }).done();
    expect(sent).to.have.length(1);
    expect(sent[0]!.headers).to.include({ 'x-amz-object-lock-mode': 'GOVERNANCE', 'content-md5': '+WtpfXy3k41SWi8xqvFh0A==' });
  });
});
