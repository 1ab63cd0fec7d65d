// Upstream: github.com/ceph/ceph v16.2.15 (Pacific, Debian bookworm's radosgw), each answer below beside its file;
// every one was measured on a real radosgw with the AWS SDK v3 (shared reference note rgw.md) and is checked against
// one by tests/store/radosgw-answers.rgw.ts, which runs the same cases as tests/store/radosgw-answers.process.test.ts.
// Makes s3rver answer as radosgw does where radosgw differs from AWS S3 and from s3rver (`--radosgw`, S3ServerOptions
// `radosgw`), so that tests which start no Ceph see those answers. S3rver is a Koa application whose middleware is
// composed when it starts listening (jamhall/s3rver lib/s3rver.js): placed first, this sees every request and every
// answer; a refusal thrown here is rendered by s3rver's XML error handler (its context.onerror, lib/s3rver.js) with
// the status of the S3 error code (lib/models/error.js).
//
// - A request on a bucket that carries x-amz-storage-class other than STANDARD is refused 400 InvalidArgument: the
//   dest placement is built from the header and checked against the zone's placement targets before any operation
//   (src/rgw/rgw_op.cc rgw_build_bucket_policies, "invalid dest placement", -EINVAL; src/rgw/rgw_common.cc, EINVAL
//   as InvalidArgument), and a default zone defines STANDARD alone.
// - Error bodies carry the code and an empty <Message> (src/rgw/rgw_rest.cc end_header: Message is s->err.message,
//   set by few operations); the SDK then names the error by its code and its message "UnknownError".
// - GetBucketLocation answers the zonegroup's api name, "default" (src/rgw/rgw_rest_s3.cc
//   RGWGetBucketLocation_ObjStore_S3::send_response); s3rver answers an empty LocationConstraint, as AWS's us-east-1.
// - HeadBucket carries no x-amz-bucket-region (src/rgw/rgw_rest_s3.cc RGWStatBucket_ObjStore_S3::send_response dumps
//   the bucket's stats only); s3rver sends none either, so nothing is changed for it.
// - CompleteMultipartUpload answers an empty <ETag></ETag> (src/rgw/rgw_rest_s3.cc
//   RGWCompleteMultipart_ObjStore_S3::send_response); HeadObject then shows the `<md5>-<parts>` ETag.
// - A body sent with Transfer-Encoding: chunked as aws-chunked with trailing checksums
//   (x-amz-content-sha256 STREAMING-UNSIGNED-PAYLOAD-TRAILER, the SDK's default for a stream since 3.729) is refused
//   411 MissingContentLength: Pacific knows the signed STREAMING-AWS4-HMAC-SHA256-PAYLOAD alone
//   (src/rgw/rgw_auth_s3.cc) and wants a length it can read (src/rgw/rgw_rest.cc, ERR_LENGTH_REQUIRED; rgw_common.cc
//   as 411 MissingContentLength). Restic's signed aws-chunked bodies are decoded as before (streaming-bodies.ts).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const S3Error = require('s3rver/lib/models/error.js') as new (code: string, message: string) => Error & { code: string };

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | undefined>;
  status: number;
  body: unknown;
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

/** The storage class a default radosgw zone defines (src/rgw/rgw_placement_types.h RGW_STORAGE_CLASS_STANDARD). */
const OFFERED_CLASSES = new Set(['STANDARD']);

export function answerAsRadosgw(server: unknown): void {
  const app = server as { middleware: Middleware[]; store: { getBucket(name: string): Promise<unknown> } };
  app.middleware.unshift(async (ctx, next) => {
    try {
      const storageClass = ctx.headers['x-amz-storage-class'];
      const bucket = ctx.path.split('/').filter(Boolean)[0];
      // checked only on a bucket that exists (rgw_build_bucket_policies does it `if (s->bucket_exists)`)
      if (storageClass !== undefined && !OFFERED_CLASSES.has(storageClass) && bucket !== undefined && await app.store.getBucket(decodeURIComponent(bucket))) {
        throw new S3Error('InvalidArgument', '');
      }
      const payload = ctx.headers['x-amz-content-sha256'] ?? '';
      if (payload.startsWith('STREAMING-') && payload.endsWith('-TRAILER') && ctx.headers['content-length'] === undefined) {
        throw new S3Error('MissingContentLength', '');
      }
      await next();
    } catch (error) {
      // radosgw's error bodies: the code, an empty message
      if (error instanceof S3Error) error.message = '';
      throw error;
    }
    if (ctx.method === 'GET' && 'location' in ctx.query && ctx.status === 200) {
      ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">default</LocationConstraint>';
    }
    if (ctx.method === 'POST' && 'uploadId' in ctx.query && ctx.status === 200 && typeof ctx.body === 'string') {
      ctx.body = ctx.body.replace(/<ETag>[^<]*<\/ETag>/, '<ETag></ETag>');
    }
  });
}
