// Upstream: github.com/jamhall/s3rver lib/s3rver.js (the Koa middleware stack this sits in front of).
// Puts S3's decoding of aws-chunked bodies (aws-chunked.ts) in front of s3rver's routes. S3rver is a Koa application
// whose middleware is composed when it starts listening (jamhall/s3rver lib/s3rver.js), so a middleware placed first
// sees every request; a refusal thrown there is rendered by s3rver's XML error handler (its context.onerror) with the
// status of the S3 error code (lib/models/error.js). The PUT and UploadPart controllers read the body from ctx.req
// (lib/controllers/object.js), so the decoded body takes the request's place, with the headers S3 stores: the
// decoded length, and Content-Encoding without aws-chunked.
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { ChunkedBodyError, decodeAwsChunked, parseAuthorization, signingKey, STREAMING_MODES, type StreamingMode } from './aws-chunked.ts';

const require = createRequire(import.meta.url);
const S3Error = require('s3rver/lib/models/error.js') as new (code: string, message: string) => Error;
const AWSAccount = require('s3rver/lib/models/account.js') as { registry: Map<string, { accessKeys: Map<string, string> }> };

interface KoaContext {
  headers: Record<string, string | undefined>;
  req: IncomingMessage;
  request: { req: IncomingMessage };
  response: { req: IncomingMessage };
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The secret of a key pair s3rver knows (s3rver lib/models/account.js keeps them per account). */
function secretOf(accessKeyId: string): string | undefined {
  return AWSAccount.registry.get(accessKeyId)?.accessKeys.get(accessKeyId);
}

export function decodeStreamingBodies(server: unknown): void {
  const app = server as { middleware: Middleware[] };
  app.middleware.unshift(async (ctx, next) => {
    const mode = ctx.headers['x-amz-content-sha256'] as StreamingMode | undefined;
    if (!mode || !STREAMING_MODES.includes(mode)) return next();
    const decodedLength = Number(ctx.headers['x-amz-decoded-content-length']);
    if (ctx.headers['x-amz-decoded-content-length'] === undefined || !Number.isInteger(decodedLength) || decodedLength < 0) {
      throw new S3Error('MissingContentLength', 'You must provide the x-amz-decoded-content-length header for an aws-chunked upload.');
    }
    const raw = await readAll(ctx.req);
    const auth = parseAuthorization(ctx.headers.authorization);
    const secret = auth ? secretOf(auth.accessKeyId) : undefined;
    // Each chunk is checked against the signing key of the request's credential (s3rver itself checks no signature).
    const signing = auth && secret && ctx.headers['x-amz-date']
      ? {
        signingKey: signingKey(secret, auth.date, auth.region, auth.service),
        timestamp: ctx.headers['x-amz-date'],
        scope: `${auth.date}/${auth.region}/${auth.service}/aws4_request`,
        seedSignature: auth.signature,
      }
      : undefined;
    let payload: Buffer;
    try {
      payload = decodeAwsChunked(raw, mode, decodedLength, signing).payload;
    } catch (error) {
      if (error instanceof ChunkedBodyError) throw new S3Error(error.code, error.message);
      throw error;
    }
    const headers: Record<string, string | string[] | undefined> = { ...ctx.req.headers, 'content-length': String(payload.length) };
    delete headers['transfer-encoding'];
    const encodings = (ctx.headers['content-encoding'] ?? '').split(',').map((e) => e.trim()).filter((e) => e && e !== 'aws-chunked');
    if (encodings.length > 0) headers['content-encoding'] = encodings.join(',');
    else delete headers['content-encoding'];
    const original = ctx.req;
    const body = Object.assign(Readable.from([payload]), {
      headers, method: original.method, url: original.url, socket: original.socket, httpVersion: original.httpVersion,
      httpVersionMajor: original.httpVersionMajor, httpVersionMinor: original.httpVersionMinor,
    }) as unknown as IncomingMessage;
    ctx.req = ctx.request.req = ctx.response.req = body;
    await next();
  });
}
