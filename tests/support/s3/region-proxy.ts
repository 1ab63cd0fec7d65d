// AWS S3's addressing and region behaviour, put in front of s3rver (which has neither: it ignores the signing region
// and, as server-main.ts starts it, answers path style only). What it does, after AWS's documentation:
// - Virtual-hosted requests: `<bucket>.<endpoint host>` names the bucket in the Host header (Amazon S3 User Guide,
//   "Virtual hosting of buckets"); the proxy rewrites them to path style for s3rver. Both styles are recorded, so a
//   test can tell which one a client used.
// - Region: every bucket lives in one region. A request signed for another region (the region of its SigV4
//   credential scope) is answered 301 PermanentRedirect with the bucket's region in `x-amz-bucket-region` (User Guide,
//   "Request redirection and the REST API"; S3 API reference, HeadBucket: x-amz-bucket-region), with no body for HEAD.
//   Regions opened after March 2019 answer 400 instead; the header is the same, and clients treat both alike
//   (@aws-sdk/middleware-sdk-s3 region-redirect middleware).
// A Node client on this machine reaches `<bucket>.s3.localhost` through localhost-dns.cjs; rclone through
// HTTP_PROXY=<the proxy> (see `forwardProxy`).
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { S3Settings } from '../../../src/store/settings.ts';
import { stopOnExit } from '../cleanup.ts';
import { startS3Server, type S3ServerHandle } from './server.ts';

/** The host name the proxy stands for; buckets are its sub-domains. */
export const PROXY_HOST = 's3.localhost';

export interface SeenS3Request {
  method: string;
  /** the Host header as the client sent it */
  host: string;
  style: 'host' | 'path';
  bucket: string | undefined;
  /** the region of the SigV4 credential scope, if signed */
  signedRegion: string | undefined;
  /** the status the proxy itself answered (301), or undefined when it passed the request on */
  redirected?: number;
}

export interface RegionProxyOptions {
  /** s3rver's endpoint, e.g. http://127.0.0.1:1234 */
  target: string;
  /** bucket → region; buckets not listed are in us-east-1 */
  bucketRegions?: Record<string, string>;
}

function signedRegionOf(request: IncomingMessage): string | undefined {
  const authorization = request.headers.authorization ?? '';
  const fromHeader = /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request/.exec(authorization)?.[1];
  if (fromHeader) return fromHeader;
  const query = new URL(request.url ?? '/', 'http://x').searchParams.get('X-Amz-Credential') ?? '';
  return /^[^/]+\/\d{8}\/([^/]+)\/s3\/aws4_request$/.exec(query)?.[1];
}

export class RegionProxy {
  readonly seen: SeenS3Request[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly target: URL;
  private readonly regions: Record<string, string>;

  private constructor(private readonly server: Server, readonly port: number, options: RegionProxyOptions) {
    this.target = new URL(options.target);
    this.regions = { ...options.bucketRegions };
  }

  /** `http://s3.localhost:<port>`: the endpoint to give clients. */
  get endpoint(): string {
    return `http://${PROXY_HOST}:${this.port}`;
  }

  static async start(options: RegionProxyOptions): Promise<RegionProxy> {
    let proxy: RegionProxy | undefined;
    const server = createServer((req, res) => proxy!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new RegionProxy(server, (server.address() as AddressInfo).port, options);
    server.on('connection', (socket) => {
      proxy!.sockets.add(socket);
      socket.once('close', () => proxy!.sockets.delete(socket));
    });
    proxy.registered = stopOnExit('the S3 region proxy', () => proxy!.closeNow());
    return proxy;
  }

  /** Registered with tests/support/cleanup.ts, so a failing before-all hook cannot leave it listening. */
  private registered: () => Promise<void> = async () => undefined;

  stop(): Promise<void> {
    return this.registered();
  }

  /** `http://127.0.0.1:<port>`: HTTP_PROXY for clients that cannot resolve `*.localhost` themselves. */
  get forwardProxy(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Moves a bucket to another region from now on. */
  setRegion(bucket: string, region: string): void {
    this.regions[bucket] = region;
  }

  /** bucket/key → the storage class it was uploaded with, for the archive classes only */
  private readonly archived = new Map<string, string>();

  private handle(req: IncomingMessage, res: ServerResponse): void {
    // A client that cannot resolve `<bucket>.s3.localhost` (Go's resolver, so rclone) is pointed at the proxy with
    // HTTP_PROXY and sends the absolute URL as the request target (RFC 9112 section 3.2.2): the same request.
    const absolute = /^http:\/\//i.test(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const host = absolute ? url.host : (req.headers.host ?? '');
    const hostname = host.replace(/:\d+$/, '').toLowerCase();
    const suffix = `.${PROXY_HOST}`;
    const style: 'host' | 'path' = hostname.endsWith(suffix) ? 'host' : 'path';
    const bucket = style === 'host' ? hostname.slice(0, -suffix.length) : url.pathname.split('/')[1] || undefined;
    const signedRegion = signedRegionOf(req);
    const record: SeenS3Request = { method: req.method ?? 'GET', host, style, bucket, signedRegion };
    this.seen.push(record);

    const region = bucket ? (this.regions[bucket] ?? 'us-east-1') : undefined;
    if (region && signedRegion && signedRegion !== region) {
      record.redirected = 301;
      req.resume();
      const body = req.method === 'HEAD'
        ? ''
        : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PermanentRedirect</Code><Message>bucket ${bucket} is served in ${region}</Message><Bucket>${bucket}</Bucket><Endpoint>${bucket}.s3.${region}.amazonaws.com</Endpoint><RequestId>region-proxy</RequestId></Error>`;
      res.writeHead(301, { 'content-type': 'application/xml', 'x-amz-bucket-region': region, 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }

    // s3rver does not check SigV4 signatures (only the access key), so the path can be rewritten without re-signing.
    const path = style === 'host' ? `/${bucket}${url.pathname === '/' ? '' : url.pathname}${url.search}` : `${url.pathname}${url.search}`;

    // Archive classes: an object put (PutObject, or CreateMultipartUpload: POST ?uploads) in GLACIER or DEEP_ARCHIVE
    // cannot be read until restored; GetObject answers 403 InvalidObjectState (AWS S3 API reference, GetObject), while
    // HeadObject and listings still work. s3rver stores the class but serves every object.
    const objectPath = decodeURIComponent(path.split('?')[0]!);
    const storageClass = String(req.headers['x-amz-storage-class'] ?? '').toUpperCase();
    if ((req.method === 'PUT' && !url.searchParams.has('partNumber')) || (req.method === 'POST' && url.searchParams.has('uploads'))) {
      if (storageClass === 'GLACIER' || storageClass === 'DEEP_ARCHIVE') this.archived.set(objectPath, storageClass);
      else this.archived.delete(objectPath);
    }
    const archivedAs = req.method === 'GET' ? this.archived.get(objectPath) : undefined;
    if (archivedAs) {
      req.resume();
      const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidObjectState</Code><Message>The operation is not valid for the object's storage class</Message><StorageClass>${archivedAs}</StorageClass><RequestId>region-proxy</RequestId></Error>`;
      res.writeHead(403, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const upstream = httpRequest(
      { hostname: this.target.hostname, port: this.target.port, method: req.method, path, headers: { ...req.headers, host: this.target.host } },
      (answer) => {
        // AWS names the bucket's region on every HeadBucket answer (S3 API reference, HeadBucket: x-amz-bucket-region).
        const isHeadBucket = req.method === 'HEAD' && bucket !== undefined && (style === 'host' ? url.pathname === '/' : url.pathname.split('/').filter(Boolean).length === 1);
        res.writeHead(answer.statusCode ?? 502, isHeadBucket && region ? { ...answer.headers, 'x-amz-bucket-region': region } : answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }

  private async closeNow(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * For a mocha suite: an s3rver holding the bucket `kf-west`, behind a RegionProxy that puts it in eu-west-1, started
 * before the suite and stopped after it. `west()` gives settings that reach it from us-west-2 in host style, as a
 * client configured for the wrong region would.
 */
export function westBucketSuite(path: string): { proxy(): RegionProxy; west(overrides?: Partial<S3Settings>): S3Settings } {
  let s3: S3ServerHandle | undefined;
  let proxy: RegionProxy | undefined;
  before(async () => {
    s3 = await startS3Server({ buckets: ['kf-west'] });
    proxy = await RegionProxy.start({ target: s3.endpoint, bucketRegions: { 'kf-west': 'eu-west-1' } });
  });
  after(async () => {
    await proxy?.stop();
    await s3?.stop();
  });
  return {
    proxy: () => proxy!,
    west: (overrides = {}) => ({
      accessKey: s3!.accessKeyId, secretKey: s3!.secretAccessKey, bucket: 'kf-west', path, endpoint: proxy!.endpoint, region: 'us-west-2', uriStyle: 'host', ...overrides,
    }),
  };
}
