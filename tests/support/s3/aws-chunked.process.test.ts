// Upstream: AWS's SigV4 streaming specification (sigv4-streaming) and github.com/minio/minio-go's streaming signer.
// The test S3 server decodes aws-chunked bodies as S3 does (aws-chunked.ts, streaming-bodies.ts): AWS's own published
// streaming PUT (its signatures are AWS's, so a pass means the chain matches the real service, not merely itself), a
// tampered chunk refused as S3 refuses it, the trailer variants, and restic, whose S3 client (minio-go) streams its
// signature over plain HTTP.
import { expect } from 'chai';
import { request } from 'node:http';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { execa } from 'execa';
import { createS3Client } from '../../../src/store/s3-client.ts';
import { checksumOf, chunkSignature, decodeAwsChunked, signingKey } from './aws-chunked.ts';
import { startS3Server, type S3ServerHandle } from './server.ts';

// AWS's example (Amazon S3 API Reference, sigv4-streaming.html, "Example: PUT Object"): 66560 bytes of "a" sent as a
// chunk of 65536, one of 1024 and the final empty one, signed with the documentation's example key at 20130524T000000Z.
const EXAMPLE = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  date: '20130524T000000Z',
  seed: '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
  chunks: [
    { size: 65536, signature: 'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648' },
    { size: 1024, signature: '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497' },
    { size: 0, signature: 'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9' },
  ],
};

/** The example's body; `tamper` changes one byte of the 1 KiB chunk after it was signed. */
function exampleBody(tamper = false): Buffer {
  const parts: Buffer[] = [];
  for (const chunk of EXAMPLE.chunks) {
    const data = Buffer.alloc(chunk.size, 'a');
    if (tamper && chunk.size === 1024) data[10] = 'b'.charCodeAt(0);
    parts.push(Buffer.from(`${chunk.size.toString(16)};chunk-signature=${chunk.signature}\r\n`), data, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

const exampleSigning = () => ({
  signingKey: signingKey(EXAMPLE.secretAccessKey, '20130524', 'us-east-1', 's3'),
  timestamp: EXAMPLE.date, scope: '20130524/us-east-1/s3/aws4_request', seedSignature: EXAMPLE.seed,
});

/**
 * A streaming PUT signed now, as a client sends it: the seed signature by the SDK's own SigV4 signer (which signs
 * x-amz-content-sha256 as given), each chunk chained to it as the published example shows.
 */
async function streamingPut(endpoint: string, key: string, payload: Buffer, options: { tamper?: boolean; claimLength?: number } = {}) {
  const url = new URL(`${endpoint}/examplebucket/${key}`);
  const signer = new SignatureV4({
    service: 's3', region: 'us-east-1', credentials: { accessKeyId: EXAMPLE.accessKeyId, secretAccessKey: EXAMPLE.secretAccessKey },
    sha256: Sha256, uriEscapePath: false, applyChecksum: false,
  });
  const sizes = [65536, payload.length - 65536, 0];
  const framing = sizes.reduce((n, size) => n + size.toString(16).length + ';chunk-signature='.length + 64 + 4 + size, 0);
  const signed = await signer.sign({
    method: 'PUT', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {},
    headers: {
      host: url.host, 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': String(options.claimLength ?? payload.length), 'content-length': String(framing),
    },
  });
  const headers = signed.headers as Record<string, string>;
  const seed = /Signature=([0-9a-f]{64})/.exec(headers.authorization!)![1]!;
  const timestamp = headers['x-amz-date']!;
  const signing = { signingKey: signingKey(EXAMPLE.secretAccessKey, timestamp.slice(0, 8), 'us-east-1', 's3'), timestamp, scope: `${timestamp.slice(0, 8)}/us-east-1/s3/aws4_request` };
  const parts: Buffer[] = [];
  let previous = seed;
  let at = 0;
  for (const size of sizes) {
    const data = Buffer.from(payload.subarray(at, at + size));
    at += size;
    previous = chunkSignature(signing, previous, data);
    if (options.tamper && size > 0 && size < 65536) data[3] = data[3]! ^ 0xff;
    parts.push(Buffer.from(`${size.toString(16)};chunk-signature=${previous}\r\n`), data, Buffer.from('\r\n'));
  }
  const body = Buffer.concat(parts);
  expect(body.length).to.equal(framing);
  const rest = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'host' && name !== 'content-length'));
  return put(endpoint, url.pathname, rest, body);
}

function put(endpoint: string, path: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${endpoint}${path}`, { method: 'PUT', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('test S3 server: aws-chunked bodies decoded as S3 decodes them', function () {
  let s3: S3ServerHandle;
  let work: string;

  before(async () => {
    s3 = await startS3Server({ buckets: ['examplebucket', 'restic'], credentials: { accessKeyId: EXAMPLE.accessKeyId, secretAccessKey: EXAMPLE.secretAccessKey } });
    work = mkdtempSync(join(tmpdir(), 'aws-chunked-'));
  });
  after(async () => {
    await s3?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const client = () => createS3Client({ endpoint: s3.endpoint, region: 'us-east-1', accessKey: EXAMPLE.accessKeyId, secretKey: EXAMPLE.secretAccessKey, bucket: 'examplebucket', uriStyle: 'path' } as never);

  it("decodes AWS's published streaming PUT, checking every chunk signature against AWS's own values", function () {
    const decoded = decodeAwsChunked(exampleBody(), 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 66560, exampleSigning());
    expect(decoded.payload.equals(Buffer.alloc(66560, 'a'))).to.equal(true);
    expect(() => decodeAwsChunked(exampleBody(true), 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 66560, exampleSigning())).to.throw(/chunk signature/);
  });

  it('stores a signed streaming PUT as its payload, without aws-chunked in the stored Content-Encoding', async function () {
    const payload = Buffer.alloc(70_000, 'k');
    const answer = await streamingPut(s3.endpoint, 'chunkObject.txt', payload);
    expect(answer.status, answer.text).to.equal(200);
    const got = await client().send(new GetObjectCommand({ Bucket: 'examplebucket', Key: 'chunkObject.txt' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(payload)).to.equal(true);
    expect(got.ContentEncoding ?? '').to.not.include('aws-chunked');
  });

  it('refuses a chunk whose bytes do not match its signature (SignatureDoesNotMatch) and keeps the stored object', async function () {
    const answer = await streamingPut(s3.endpoint, 'chunkObject.txt', Buffer.alloc(70_000, 'x'), { tamper: true });
    expect(answer.status).to.equal(403);
    expect(answer.text).to.include('<Code>SignatureDoesNotMatch</Code>');
    const got = await client().send(new GetObjectCommand({ Bucket: 'examplebucket', Key: 'chunkObject.txt' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.alloc(70_000, 'k'))).to.equal(true);
  });

  it('refuses a body whose length differs from x-amz-decoded-content-length (IncompleteBody), storing nothing', async function () {
    const answer = await streamingPut(s3.endpoint, 'short.txt', Buffer.alloc(70_000, 'x'), { claimLength: 80_000 });
    expect(answer.status).to.equal(400);
    expect(answer.text).to.include('<Code>IncompleteBody</Code>');
    let missing: unknown;
    await client().send(new HeadObjectCommand({ Bucket: 'examplebucket', Key: 'short.txt' })).catch((error: unknown) => { missing = error; });
    expect(missing).to.not.equal(undefined);
  });

  it('decodes the unsigned-trailer variant and checks its trailing checksum', function () {
    const data = Buffer.from('restic pack bytes '.repeat(100));
    const crc = checksumOf('crc32c', data)!;
    const framed = (checksum: string) => Buffer.concat([
      Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from(`\r\n0\r\nx-amz-checksum-crc32c:${checksum}\r\n\r\n`),
    ]);
    const decoded = decodeAwsChunked(framed(crc), 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', data.length);
    expect(decoded.payload.equals(data)).to.equal(true);
    expect(decoded.trailers).to.deep.equal({ 'x-amz-checksum-crc32c': crc });
    expect(() => decodeAwsChunked(framed('AAAAAA=='), 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', data.length)).to.throw(/did not match/);
    // RFC 3720's CRC32C check value: "123456789" → e3069283
    expect(Buffer.from(checksumOf('crc32c', Buffer.from('123456789'))!, 'base64').toString('hex')).to.equal('e3069283');
  });

  it('lets restic (minio-go, streaming signatures over plain HTTP) read back its own repository and data', async function () {
    this.timeout(120_000);
    const env: NodeJS.ProcessEnv = {
      ...process.env, AWS_ACCESS_KEY_ID: EXAMPLE.accessKeyId, AWS_SECRET_ACCESS_KEY: EXAMPLE.secretAccessKey,
      RESTIC_PASSWORD: 'test password', RESTIC_REPOSITORY: `s3:${s3.endpoint}/restic/repo`, RESTIC_CACHE_DIR: join(work, 'cache'),
    };
    delete env.AWS_CA_BUNDLE;
    await execa('restic', ['init'], { env });
    const source = join(work, 'source');
    mkdirSync(source);
    writeFileSync(join(source, 'notebook.ipynb'), '{"cells": []}\n'.repeat(5000));
    await execa('restic', ['backup', '--json', source], { env });
    // Without decoding, the stored config is chunk framing and restic cannot open the repository at all.
    const config = JSON.parse((await execa('restic', ['cat', 'config'], { env })).stdout) as { version: number };
    expect(config.version).to.be.oneOf([1, 2]);
    await execa('restic', ['restore', 'latest', '--target', join(work, 'restored')], { env });
    expect(readFileSync(join(work, 'restored', source, 'notebook.ipynb'), 'utf8')).to.equal('{"cells": []}\n'.repeat(5000));
    await execa('restic', ['check', '--read-data'], { env });
  });
});
