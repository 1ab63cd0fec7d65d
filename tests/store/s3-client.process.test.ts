// checkBucket against a real s3rver: every classified problem, and the CA chain trusted for TLS.
import { expect } from 'chai';
import { StoreError } from '../../src/store/objects.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { checkBucket, classifyS3Error } from '../../src/store/s3-client.ts';
import { openObjectStore } from '../../src/store/open.ts';
import { westBucketSuite } from '../support/s3/region-proxy.ts';
// `<bucket>.s3.localhost` resolves to loopback in this process, as RFC 6761 wants (see the file).
import '../support/s3/localhost-dns.cjs';
import type { S3Settings } from '../../src/store/settings.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';

describe('store/s3-client: checkBucket against s3rver', function () {
  let plain: S3ServerHandle;
  let tls: S3ServerHandle;
  let certPem: string;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 's3-tls-'));
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keySize: 2048,
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    } as never);
    certPem = pems.cert;
    writeFileSync(join(work, 'key.pem'), pems.private);
    writeFileSync(join(work, 'cert.pem'), pems.cert);
    [plain, tls] = await Promise.all([
      startS3Server({ buckets: ['kf-backups'] }),
      startS3Server({ buckets: ['kf-backups'], tlsKeyFile: join(work, 'key.pem'), tlsCertFile: join(work, 'cert.pem') }),
    ]);
  });
  after(async () => {
    await Promise.all([plain?.stop(), tls?.stop()]);
    rmSync(work, { recursive: true, force: true });
  });

  const settings = (server: S3ServerHandle, overrides: Partial<S3Settings> = {}): S3Settings => ({
    accessKey: server.accessKeyId,
    secretKey: server.secretAccessKey,
    bucket: 'kf-backups',
    path: '',
    endpoint: server.endpoint,
    region: 'us-east-1',
    uriStyle: 'path',
    ...overrides,
  });

  it('is ok for a reachable bucket with good keys', async () => {
    expect(await checkBucket(settings(plain))).to.deep.equal({ ok: true });
  });

  it('trusts a self-signed endpoint given its CA chain, and refuses it without', async () => {
    expect(await checkBucket(settings(tls, { tlsCaChain: [certPem] }))).to.deep.equal({ ok: true });
    const untrusted = await checkBucket(settings(tls));
    expect(untrusted.ok === false && untrusted.problem.kind).to.equal('tls');
    expect(untrusted.ok === false && untrusted.problem).to.deep.include({ remedy: { setting: 'ca-chain' } });
    expect(untrusted.ok === false && untrusted.problem.fact).to.match(/^TLS with https:\/\/127\.0\.0\.1:\d+ failed \(\w+\)$/);
  });

  const cases: [string, (s: S3ServerHandle) => Partial<S3Settings>, string][] = [
    ['bucket-missing', () => ({ bucket: 'nope-bucket' }), 'bucket-missing'],
    ['access-denied', () => ({ accessKey: 'OTHERKEY' }), 'access-denied'],
    ['https to a plain port', (s) => ({ endpoint: s.endpoint.replace('http:', 'https:') }), 'tls'],
    ['unreachable', () => ({ endpoint: 'http://127.0.0.1:9' }), 'unreachable'],
    ['missing key', () => ({ secretKey: '' }), 'missing-key'],
    ['bad endpoint', () => ({ endpoint: 'minio:9000' }), 'bad-endpoint'],
  ];
  for (const [name, overrides, kind] of cases) {
    it(`classifies ${name}`, async () => {
      const result = await checkBucket(settings(plain, overrides(plain)));
      expect(result.ok === false && result.problem.kind).to.equal(kind);
      expect(result.ok === false && JSON.stringify(result.problem)).not.to.include(plain.secretAccessKey + '\n');
    });
  }

  it('names an unknown answer by its HTTP status', () => {
    const problem = classifyS3Error({ name: 'Weird', $metadata: { httpStatusCode: 418 } }, { bucket: 'b', endpoint: 'http://x', region: 'r' });
    expect(problem).to.deep.equal({ kind: 'unknown', fact: 'S3 at http://x answered HTTP 418 for bucket "b"', remedy: { setting: 'none' } });
  });
});

describe('store/s3-client: against AWS-like addressing and regions (s3rver behind the region proxy)', function () {
  const { proxy: proxyOf, west } = westBucketSuite('kf');

  it('follows a 301 naming the bucket\'s region: HeadBucket succeeds, signed again for that region', async () => {
    const mark = proxyOf().seen.length;
    expect(await checkBucket(west())).to.deep.equal({ ok: true, region: 'eu-west-1' });
    const seen = proxyOf().seen.slice(mark);
    expect(seen.map((r) => [r.style, r.signedRegion, r.redirected ?? 'passed'])).to.deep.equal([['host', 'us-west-2', 301], ['host', 'eu-west-1', 'passed']]);
  });

  it('with an archive class (GLACIER) on the data, the files read first stay readable and the data says why it is not', async () => {
    // The proxy answers GetObject on a GLACIER object 403 InvalidObjectState, as AWS does until it is restored.
    const store = openObjectStore(west({ region: 'eu-west-1', storageClass: 'GLACIER' }));
    try {
      await store.put('cold/velero-backup.json', '{"marker":1}', 'application/json');
      await store.startUpload('cold/cold.tar.gz', Readable.from([Buffer.from('tarball bytes')]), 'application/gzip', 'data').done();
      expect((await store.getBytes('cold/velero-backup.json')).toString()).to.equal('{"marker":1}');
      const failure = await store.getBytes('cold/cold.tar.gz').then(() => undefined, (error: unknown) => error);
      expect(failure).to.be.instanceOf(StoreError);
      expect((failure as StoreError).condition).to.equal('cold');
      expect((failure as StoreError).message).to.equal('Could not read s3://kf-west/kf/cold/cold.tar.gz: the object is in an archive storage class and must be restored (S3 RestoreObject) before it can be read.');
    } finally {
      store.client.destroy();
    }
  });

  it('without following redirects (as rclone with an endpoint), names the region S3 gave, after one request', async () => {
    const mark = proxyOf().seen.length;
    expect(await checkBucket(west(), { followRegionRedirects: false })).to.deep.equal({
      ok: false,
      problem: { kind: 'wrong-region', fact: 'bucket "kf-west" is in region eu-west-1, not us-west-2', remedy: { setting: 'region', region: 'eu-west-1' } },
    });
    expect(proxyOf().seen.slice(mark).map((r) => r.redirected)).to.deep.equal([301]);
    expect(await checkBucket(west({ region: 'eu-west-1' }), { followRegionRedirects: false })).to.deep.equal({ ok: true, region: 'eu-west-1' });
  });

  it('uploads the data with the storage class, and what is read first as STANDARD, in one PUT and in a multipart upload', async () => {
    const store = openObjectStore(west({ region: 'eu-west-1', storageClass: 'STANDARD_IA' }));
    try {
      await store.put('small.json', '{"a":1}', 'application/json');
      await store.put('streamed.json', Readable.from([Buffer.from('{"b":2}')]), 'application/json');
      await store.startUpload('big.bin', Readable.from([randomBytes(6 * 1024 * 1024), randomBytes(1024)]), 'application/gzip', 'data').done();
      const classes: Array<[string, string | undefined]> = [];
      for (const key of ['kf/small.json', 'kf/streamed.json', 'kf/big.bin']) {
        classes.push([key, (await store.client.send(new HeadObjectCommand({ Bucket: 'kf-west', Key: key }))).StorageClass]);
      }
      expect(classes).to.deep.equal([['kf/small.json', 'STANDARD'], ['kf/streamed.json', 'STANDARD'], ['kf/big.bin', 'STANDARD_IA']]);
    } finally {
      store.client.destroy();
    }
  });
});
