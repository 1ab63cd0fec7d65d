// probeBucket (the status's HeadBucket without the AWS SDK client) against a real s3rver: the same answer as
// checkBucket for every classified problem, the CA chain trusted for TLS, and the request as S3 wants it.
import { expect } from 'chai';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { anyObjectUnder, bucketUrl, probeBucket } from '../../src/store/bucket-probe.ts';
import { checkBucket, createS3Client } from '../../src/store/s3-client.ts';
import type { S3Settings } from '../../src/store/settings.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { westBucketSuite } from '../support/s3/region-proxy.ts';
// `<bucket>.s3.localhost` resolves to loopback in this process, as RFC 6761 wants (see the file).
import '../support/s3/localhost-dns.cjs';

/** The SigV4 signature of a request without query or body (AWS's "Signature Version 4 signing process"). */
function sigV4(method: string, target: string, headers: IncomingHttpHeaders, secret: string, region: string): string {
  const [path = '', query = ''] = target.split('?');
  const hex = (data: string) => createHash('sha256').update(data).digest('hex');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(headers.authorization!)![1]!;
  const amzDate = String(headers['x-amz-date']);
  const canonicalQuery = query.split('&').filter(Boolean).sort().join('&');
  const canonical = [method, path, canonicalQuery, ...signedHeaders.split(';').map((name) => `${name}:${String(headers[name]).trim()}`), '', signedHeaders, String(headers['x-amz-content-sha256'])].join('\n');
  const scope = `${amzDate.slice(0, 8)}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, amzDate.slice(0, 8)), region), 's3'), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

describe('store/bucket-probe: probeBucket against s3rver', function () {
  let plain: S3ServerHandle;
  let tls: S3ServerHandle;
  let certPem: string;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 's3-probe-'));
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
    expect(await probeBucket(settings(plain))).to.deep.equal({ ok: true });
  });

  it('trusts a self-signed endpoint given its CA chain, and refuses it without, as checkBucket does', async () => {
    expect(await probeBucket(settings(tls, { tlsCaChain: [certPem] }))).to.deep.equal({ ok: true });
    const untrusted = await probeBucket(settings(tls));
    expect(untrusted.ok === false && untrusted.problem.kind).to.equal('tls');
    expect(untrusted.ok === false && untrusted.problem).to.deep.include({ remedy: { setting: 'ca-chain' } });
    expect(untrusted.ok === false && untrusted.problem.fact).to.match(/^TLS with https:\/\/127\.0\.0\.1:\d+ failed \(\w+\)$/);
    expect(untrusted).to.deep.equal(await checkBucket(settings(tls)));
  });

  const cases: [string, (s: S3ServerHandle) => Partial<S3Settings>, string][] = [
    ['bucket-missing', () => ({ bucket: 'nope-bucket' }), 'bucket-missing'],
    ['access-denied', () => ({ accessKey: 'OTHERKEY' }), 'access-denied'],
    ['https to a plain port', (s) => ({ endpoint: s.endpoint.replace('http:', 'https:') }), 'tls'],
    ['unreachable', () => ({ endpoint: 'http://127.0.0.1:9' }), 'unreachable'],
    ['missing key', () => ({ secretKey: '' }), 'missing-key'],
    ['missing access key', () => ({ accessKey: '' }), 'missing-key'],
    ['bad endpoint', () => ({ endpoint: 'minio:9000' }), 'bad-endpoint'],
  ];
  for (const [name, overrides, kind] of cases) {
    it(`classifies ${name} with checkBucket's words`, async () => {
      const given = settings(plain, overrides(plain));
      const [probed, checked] = await Promise.all([probeBucket(given), checkBucket(given)]);
      expect(probed.ok === false && probed.problem.kind).to.equal(kind);
      expect(probed).to.deep.equal(checked);
      expect(JSON.stringify(probed)).not.to.include(plain.secretAccessKey);
    });
  }

  it('anyObjectUnder tells an empty prefix from one with a key (with awkward characters), and says undefined when it cannot tell', async () => {
    const given = settings(plain);
    expect(await anyObjectUnder(given, "team a/backups/")).to.equal(false);
    const client = createS3Client(given);
    await client.send(new PutObjectCommand({ Bucket: 'kf-backups', Key: "team a/backups/kf-1 (x)*'!/marker.json", Body: '{}' }));
    client.destroy();
    expect(await anyObjectUnder(given, "team a/backups/")).to.equal(true);
    expect(await anyObjectUnder(given, "team a/backups/kf-1 (x)*'!/")).to.equal(true);
    expect(await anyObjectUnder(given, 'team a/restores/')).to.equal(false);
    expect(await anyObjectUnder(settings(plain, { bucket: 'nope-bucket' }), 'backups/')).to.equal(undefined);
    expect(await anyObjectUnder(settings(plain, { endpoint: 'http://127.0.0.1:9' }), 'backups/', { retry: { baseDelayMs: 1, maxDelayMs: 1 } })).to.equal(undefined);
    expect(await anyObjectUnder(settings(plain, { secretKey: '' }), 'backups/')).to.equal(undefined);
  });

  describe('the request', () => {
    let server: Server;
    let seen: { method: string; url: string; headers: IncomingHttpHeaders }[];
    let answers: number[];
    before(async () => {
      server = createServer((request, response) => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
        response.writeHead(answers.shift() ?? 200).end(request.method === 'GET' ? '<ListBucketResult><KeyCount>0</KeyCount></ListBucketResult>' : undefined);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    beforeEach(() => {
      seen = [];
      answers = [];
    });
    const local = (overrides: Partial<S3Settings> = {}): S3Settings => ({
      accessKey: 'AKIDEXAMPLE',
      secretKey: 'probe-secret-value',
      bucket: 'kf-backups',
      path: '',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'eu-west-3',
      uriStyle: 'path',
      ...overrides,
    });

    it('is one SigV4-signed HEAD of the bucket, for the region, with the payload hash S3 wants', async () => {
      expect(await probeBucket(local())).to.deep.equal({ ok: true });
      expect(seen).to.have.length(1);
      const [{ method, url, headers }] = seen as [(typeof seen)[number]];
      expect(method).to.equal('HEAD');
      expect(url).to.equal('/kf-backups');
      expect(headers.authorization).to.match(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-3\/s3\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
      expect(headers['x-amz-content-sha256']).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
      expect(JSON.stringify(headers)).not.to.include('probe-secret-value');
      // s3rver does not check SigV4 signatures: recompute this one by the specification.
      expect(headers.authorization!.split('Signature=')[1]).to.equal(sigV4(method, url, headers, 'probe-secret-value', 'eu-west-3'));
    });

    it('signs the query of ListObjectsV2 as S3 canonicalises it', async () => {
      expect(await anyObjectUnder(local(), "team a/backups/(x)*'!~")).to.equal(false);
      const [{ method, url, headers }] = seen as [(typeof seen)[number]];
      expect(method).to.equal('GET');
      expect(url).to.equal("/kf-backups?list-type=2&max-keys=1&prefix=team%20a%2Fbackups%2F%28x%29%2A%27%21~");
      expect(headers.authorization!.split('Signature=')[1]).to.equal(sigV4(method, url, headers, 'probe-secret-value', 'eu-west-3'));
    });

    it('retries a 503 once, and names what still fails by its status', async () => {
      answers = [503];
      expect(await probeBucket(local(), { retry: { baseDelayMs: 1, maxDelayMs: 1 } })).to.deep.equal({ ok: true });
      expect(seen).to.have.length(2);
      answers = [418];
      const teapot = await probeBucket(local());
      expect(teapot).to.deep.equal({ ok: false, problem: { kind: 'unknown', fact: `S3 at ${local().endpoint} answered HTTP 418 for bucket "kf-backups"`, remedy: { setting: 'none' } } });
      answers = [301];
      const moved = await probeBucket(local());
      expect(moved.ok === false && moved.problem.kind).to.equal('wrong-region');
    });
  });

  it('puts the bucket in the host in host style, except for an IP endpoint or a dotted bucket over TLS', () => {
    const base = { bucket: 'kf-backups', region: 'eu-west-3' };
    expect(bucketUrl({ ...base, uriStyle: 'host' }).href).to.equal('https://kf-backups.s3.eu-west-3.amazonaws.com/');
    expect(bucketUrl({ ...base, uriStyle: 'path' }).href).to.equal('https://s3.eu-west-3.amazonaws.com/kf-backups');
    expect(bucketUrl({ ...base, uriStyle: 'host', endpoint: 'http://minio.kubeflow:9000' }).href).to.equal('http://kf-backups.minio.kubeflow:9000/');
    expect(bucketUrl({ ...base, uriStyle: 'host', endpoint: 'http://10.0.0.7:9000' }).href).to.equal('http://10.0.0.7:9000/kf-backups');
    expect(bucketUrl({ ...base, bucket: 'kf.backups', uriStyle: 'host', endpoint: 'https://s3.example.com' }).href).to.equal('https://s3.example.com/kf.backups');
    expect(bucketUrl({ ...base, uriStyle: 'path', endpoint: 'https://gw.example.com/s3' }).href).to.equal('https://gw.example.com/s3/kf-backups');
  });
});

describe('store/bucket-probe: against AWS-like addressing and regions (s3rver behind the region proxy)', function () {
  const { proxy: proxyOf, west } = westBucketSuite('');

  it('reports a bucket in another region with the region S3 named, in one sentence', async () => {
    const mark = proxyOf().seen.length;
    expect(await probeBucket(west())).to.deep.equal({
      ok: false,
      problem: { kind: 'wrong-region', fact: 'bucket "kf-west" is in region eu-west-1, not us-west-2', remedy: { setting: 'region', region: 'eu-west-1' } },
    });
    expect(proxyOf().seen.slice(mark).map((r) => [r.method, r.style, r.redirected])).to.deep.equal([['HEAD', 'host', 301]]);
  });

  it('is ok in the right region, which S3 confirms, asking <bucket>.<endpoint> in host style', async () => {
    const mark = proxyOf().seen.length;
    expect(await probeBucket(west({ region: 'eu-west-1' }))).to.deep.equal({ ok: true, region: 'eu-west-1' });
    expect(await anyObjectUnder(west({ region: 'eu-west-1' }), 'nothing-here/')).to.equal(false);
    const seen = proxyOf().seen.slice(mark);
    expect(seen.every((r) => r.style === 'host' && r.host.startsWith('kf-west.s3.localhost:') && !r.redirected)).to.equal(true);
  });
});

describe('store/bucket-probe: the default bucket name on AWS, where someone else owns it', function () {
  // AWS answers HeadBucket on another account's bucket 403 without a body (AWS S3 API reference, HeadBucket), and
  // a GET with an AccessDenied document; every answer carries `Server: AmazonS3`.
  let server: Server;
  before(async () => {
    server = createServer((request, response) => {
      const body = request.method === 'HEAD' ? undefined : '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
      response.writeHead(403, { server: 'AmazonS3', 'content-type': 'application/xml', 'x-amz-request-id': 'AWSLIKE0001' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const onAws = (bucket: string): S3Settings => ({
    accessKey: 'AKIDEXAMPLE', secretKey: 'probe-secret-value', bucket, path: '', endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1', uriStyle: 'path', track: 1,
  });

  it('says the name is probably taken and how to set one\'s own, before anything about keys, for the probe and the SDK alike', async () => {
    const taken = {
      kind: 'access-denied',
      fact: 'AWS S3 denied access to bucket "kubeflow-backups", a name probably taken by another AWS account (bucket names are global)',
      remedy: { setting: 'own-bucket', track: 1 },
    };
    expect(await probeBucket(onAws('kubeflow-backups'))).to.deep.equal({ ok: false, problem: taken });
    expect(await checkBucket(onAws('kubeflow-backups'), { retry: { baseDelayMs: 1, maxDelayMs: 1 } })).to.deep.equal({ ok: false, problem: taken });
  });

  it('a name of one\'s own that is denied is about the keys and the policy', async () => {
    const denied = await probeBucket(onAws('team-kf-backups'));
    expect(denied.ok === false && denied.problem.remedy).to.deep.equal({ setting: 'credentials', track: 1, what: 'denied' });
  });
});
