// A real S3 server process for tests, demo and benchmarks: s3rver bound to loopback on a free port.
// (upstream: jamhall/s3rver lib/s3rver.js, a Koa app whose routes follow the S3 REST API)
// Prints one JSON line {"port": N, "endpoint": "..."} on stdout when it is ready.
// Usage: node --import tsx tests/support/s3/server-main.ts --dir <folder> [--port N] [--bucket name ...] [--tls-key f --tls-cert f]
//        [--key-pair id:secret ...] (more key pairs s3rver accepts besides S3RVER/S3RVER) [--request-log file]
//        [--copy-bytes] (server-side copies copy the bytes, as s3rver as published does)
//        [--aws-multipart-etag] (a multipart upload's ETag as AWS S3 and MinIO make it, multipart-etag.ts)
//        [--radosgw] (answers as Ceph's radosgw 16 where it differs: radosgw-answers.ts)
import { appendFileSync, readFileSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import S3rver from 's3rver';
import { shareCopiedBodies, type S3rverFilesystemStore } from './shared-copies.ts';
import { awsMultipartEtags, type S3rverMultipartStore } from './multipart-etag.ts';
import { decodeStreamingBodies } from './streaming-bodies.ts';
import { guardDirectoryCleanup } from './directory-cleanup.ts';
import { rollUpDeepPrefixes } from './delimiter-listing.ts';
import { answerAsRadosgw } from './radosgw-answers.ts';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    port: { type: 'string', default: '0' },
    bucket: { type: 'string', multiple: true, default: [] },
    'tls-key': { type: 'string' },
    'tls-cert': { type: 'string' },
    'key-pair': { type: 'string', multiple: true, default: [] },
    'request-log': { type: 'string' },
    'copy-bytes': { type: 'boolean', default: false },
    'aws-multipart-etag': { type: 'boolean', default: false },
    radosgw: { type: 'boolean', default: false },
  },
});
if (!values.dir) {
  console.error('--dir is required');
  process.exit(2);
}
mkdirSync(values.dir, { recursive: true });
// s3rver checks only that the access key id is one it knows (it does not verify SigV4 signatures) and answers only to
// S3RVER/S3RVER: more pairs let a test tell a key used exactly as written from one altered on the way, and give a MinIO
// stand-in a MinIO-shaped pair (MinIO and its charm refuse a secret key under 8 characters).
const { DUMMY_ACCOUNT } = createRequire(import.meta.url)('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };
for (const pair of values['key-pair']) {
  const colon = pair.indexOf(':');
  DUMMY_ACCOUNT.createKeyPair(pair.slice(0, colon), pair.slice(colon + 1));
}
const tls = values['tls-key'] && values['tls-cert'];
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(values.port),
  silent: true,
  directory: values.dir,
  // Path-style only: buckets are never resolved from the Host header.
  vhostBuckets: false,
  configureBuckets: values.bucket.map((name) => ({ name, configs: [] })),
  ...(tls ? { key: readFileSync(values['tls-key']!), cert: readFileSync(values['tls-cert']!) } : {}),
});
// A server-side copy costs this machine a request, not a copy of the bytes, as with a real S3 service (shared-copies.ts).
if (!values['copy-bytes']) shareCopiedBodies((server as unknown as { store: S3rverFilesystemStore }).store);
if (values['aws-multipart-etag']) awsMultipartEtags((server as unknown as { store: S3rverMultipartStore }).store);
// A delete's folder cleanup never pulls a folder from under a concurrent write (directory-cleanup.ts).
guardDirectoryCleanup((server as unknown as { store: Parameters<typeof guardDirectoryCleanup>[0] }).store);
// A folder whose keys all lie deeper is still a common prefix of a delimited listing, as in S3 (delimiter-listing.ts).
rollUpDeepPrefixes((server as unknown as { store: Parameters<typeof rollUpDeepPrefixes>[0] }).store);
// aws-chunked bodies are decoded as S3 decodes them (streaming-bodies.ts); s3rver alone would store the chunk framing.
decodeStreamingBodies(server);
// Placed before the request log and after the decoding: it refuses what radosgw refuses before anything is decoded.
if (values.radosgw) answerAsRadosgw(server);
const requestLog = values['request-log'];
if (requestLog) {
  // One JSON line per request, written before s3rver handles it: what a test needs to tell an upload (a PUT with a
  // body, or an UploadPart) from a server-side copy (a PUT carrying x-amz-copy-source, which s3rver's routes.js sends
  // to putObjectCopy). S3rver is a Koa application whose routes are composed when it starts listening
  // (s3rver lib/s3rver.js), so a middleware placed first sees every request.
  type KoaContext = { method: string; path: string; querystring: string; headers: Record<string, string | undefined> };
  const app = server as unknown as { middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>> };
  app.middleware.unshift(async (ctx, next) => {
    appendFileSync(requestLog, JSON.stringify({
      method: ctx.method,
      path: decodeURIComponent(ctx.path),
      query: ctx.querystring,
      contentLength: Number(ctx.headers['content-length'] ?? 0),
      ...(ctx.headers['x-amz-copy-source'] ? { copySource: decodeURIComponent(ctx.headers['x-amz-copy-source']) } : {}),
    }) + '\n');
    await next();
  });
}
const address = (await server.run()) as AddressInfo;
// Node's HTTP server closes a keep-alive connection after 5 s idle (server.keepAliveTimeout). A client that reuses the
// socket at that moment gets ECONNRESET ("socket hang up"), which the AWS SDK retries; the tests' clients make one
// attempt (so a fault proxy's count is exact), and under load the race failed a PUT now and then. The test server
// keeps idle connections as long as the tests run; server.close() still ends idle ones (Node 19+ closeIdleConnections).
const listening = (server as unknown as { httpServer: { keepAliveTimeout: number; headersTimeout: number } }).httpServer;
listening.keepAliveTimeout = 600_000;
listening.headersTimeout = 601_000;
const endpoint = `${tls ? 'https' : 'http'}://127.0.0.1:${address.port}`;
process.stdout.write(JSON.stringify({ port: address.port, endpoint }) + '\n');
const stop = () => {
  server.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
