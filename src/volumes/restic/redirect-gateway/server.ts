// The restore gateway's HTTPS server (HTTP/1.1, node:https): it authenticates each namespace's user with the run's
// password (`{SHA}` htpasswd lines, as the backup gateway's rclone reads them: ../gateway-credentials.ts), answers HEAD
// and listings from S3, and answers every GET of a file with `307 Temporary Redirect` to a presigned S3 URL of exactly
// that object, so the bytes go from S3 to restic over one TLS connection, as with direct restic. restic follows it:
// Go's net/http client follows a 307 for a GET, keeps the Range header and drops Authorization when the host changes
// (golang/go src/net/http/client.go redirectBehavior, shouldCopyHeaderOnRedirect). Lock files are written and removed
// by the gateway itself; nothing else is written (./routes.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listingBody, REST_V2, routeOf } from './routes.ts';
import { BucketAccess, type GatewayBucket } from './s3.ts';

export interface RestoreGatewayOptions {
  bucket: GatewayBucket;
  /** the repositories' root in the bucket: `<prefix>/restic` */
  root: string;
  /** htpasswd: `<namespace>:{SHA}<base64 sha1 of the password>` per line */
  htpasswd: string;
  certificate: string;
  privateKey: string;
  /** how long a presigned URL is valid; restic follows it at once, and a retried load asks the gateway again */
  presignSeconds?: number;
  /** one line per refused or failed request (never a password, never a URL's signature) */
  log?: (line: string) => void;
}

/** A lock file is a small JSON document (restic internal/restic/lock.go); anything larger is not one. */
const MAX_LOCK_BYTES = 64 * 1024;

function usersOf(htpasswd: string): Map<string, Buffer> {
  const users = new Map<string, Buffer>();
  for (const line of htpasswd.split('\n')) {
    const match = /^([^:]+):\{SHA\}(.+)$/.exec(line.trim());
    if (match) users.set(match[1]!, Buffer.from(match[2]!, 'base64'));
  }
  return users;
}

/** The user whose password the request's Basic credentials give, or undefined. */
function authenticate(request: IncomingMessage, users: Map<string, Buffer>): string | undefined {
  const header = request.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const user = decoded.slice(0, colon);
  const expected = users.get(user);
  if (!expected) return undefined;
  const given = createHash('sha1').update(decoded.slice(colon + 1)).digest();
  return given.length === expected.length && timingSafeEqual(given, expected) ? user : undefined;
}

function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function answer(response: ServerResponse, status: number, body = '', headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers });
  response.end(body);
}

export function createRestoreGateway(options: RestoreGatewayOptions): { server: Server; close(): Promise<void> } {
  const users = usersOf(options.htpasswd);
  const bucket = new BucketAccess(options.bucket);
  const presignSeconds = options.presignSeconds ?? 300;
  const log = options.log ?? (() => undefined);

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const user = authenticate(request, users);
    if (!user) {
      request.resume();
      answer(response, 401, 'Unauthorized\n', { 'www-authenticate': 'Basic realm="restic"' });
      return;
    }
    const path = new URL(request.url ?? '/', 'https://gateway').pathname;
    let route;
    try {
      route = routeOf(request.method ?? '', path, user, options.root);
    } catch {
      route = { kind: 'refuse' as const, status: 404 as const, reason: 'a malformed path' };
    }
    switch (route.kind) {
      case 'refuse':
        request.resume();
        log(`${request.method} ${path} by ${user}: ${route.status}, ${route.reason}`);
        answer(response, route.status, `${route.reason}\n`);
        return;
      case 'redirect':
        request.resume();
        response.writeHead(307, { location: await bucket.presignGet(route.key, presignSeconds), 'content-length': '0' });
        response.end();
        return;
      case 'head': {
        request.resume();
        const head = await bucket.send('HEAD', route.key);
        if (head.status === 404) return answer(response, 404);
        if (head.status !== 200) throw new Error(`S3 answered HeadObject with HTTP ${head.status}`);
        response.writeHead(200, { 'content-length': head.headers['content-length'] ?? '0' });
        response.end();
        return;
      }
      case 'list': {
        request.resume();
        const v2 = (request.headers.accept ?? '').includes(REST_V2);
        const body = listingBody(await bucket.list(route.prefix), route.prefix, route.nested, v2);
        answer(response, 200, body, { 'content-type': v2 ? REST_V2 : 'application/vnd.x.restic.rest.v1' });
        return;
      }
      case 'write-lock': {
        const body = await readBody(request, MAX_LOCK_BYTES);
        if (!body) return answer(response, 413, 'a lock file is never this large\n');
        const put = await bucket.send('PUT', route.key, {}, body);
        if (put.status !== 200) throw new Error(`S3 answered PutObject with HTTP ${put.status}`);
        return answer(response, 200);
      }
      case 'delete-lock': {
        request.resume();
        const removed = await bucket.send('DELETE', route.key);
        if (removed.status !== 204 && removed.status !== 200) throw new Error(`S3 answered DeleteObject with HTTP ${removed.status}`);
        return answer(response, 200);
      }
    }
  }

  const server = createServer({ cert: options.certificate, key: options.privateKey }, (request, response) => {
    handle(request, response).catch((error: unknown) => {
      log(`${request.method} ${request.url ?? ''}: ${(error as Error).message}`);
      if (!response.headersSent) answer(response, 502, 'the gateway could not reach the bucket\n');
      else response.destroy();
    });
  });
  // restic keeps its connections open between requests (Go's http.Transport); the default 5 s keep-alive is enough
  return {
    server,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      bucket.close();
    }),
  };
}
