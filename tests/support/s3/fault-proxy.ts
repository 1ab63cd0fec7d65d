// An HTTP proxy in front of s3rver that breaks requests the way real object stores and networks do: 500
// InternalError, 503 SlowDown, a connection reset while the request body is still arriving, a response cut short
// after the server acted, and latency. Faults come by seeded rate (reproducible) or by script (exact), and a test
// can be told when a matching request arrives, and hold it there, to act at that moment (SIGKILL a dispatch).
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { seededRandom } from '../cluster/faults.ts';
import { stopOnExit } from '../cleanup.ts';

export type S3Fault = 'error-500' | 'slowdown-503' | 'reset-request' | 'truncate-response' | 'latency' | 'refused-403' | 'gone-404';
/**
 * The transient faults, drawn from by rate. 'refused-403' is not one of them: S3 answers a request it will never allow
 * with 403 (AccessDenied; InvalidObjectState for a CopyObject from an archived object, AWS S3 API reference
 * CopyObject), which no retry mends; a test asks for it by name. Nor is 'gone-404': the answer to a GET of an object
 * deleted after a listing showed it (404 NoSuchKey, minio/minio cmd/api-errors.go ErrNoSuchKey), e.g. another restic's
 * lock file removed while this one checks the locks it listed.
 */
export const allS3Faults: readonly S3Fault[] = ['error-500', 'slowdown-503', 'reset-request', 'truncate-response', 'latency'];

/** What the proxy saw of a request: enough to match on. */
export interface SeenRequest {
  method: string;
  /** path and query, e.g. `/bucket/prefix/backups/kf-…/velero-backup.json?x-id=PutObject` */
  url: string;
  /** a server-side copy's x-amz-copy-source header: what tells a CopyObject from an upload (both are PUTs) */
  copySource?: string;
}

export type RequestMatcher = (request: SeenRequest) => boolean;

/** Requests of one kind open at once through the proxy (FaultProxy.track). */
export interface InFlightTally {
  open: number;
  peak: number;
  total: number;
}

export interface FaultProxyOptions {
  /** s3rver's endpoint, e.g. http://127.0.0.1:1234 */
  target: string;
  /** probability per request of a fault (default 0) */
  rate?: number;
  seed?: number;
  /** the faults drawn from at that rate (default all) */
  faults?: readonly S3Fault[];
  latencyMs?: number;
  /** only requests matching this are eligible for faults (default all) */
  only?: RequestMatcher;
}

interface Watch {
  matches: RequestMatcher;
  hold: boolean;
  resolve: (request: SeenRequest) => void;
}


function s3ErrorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>fault-proxy</RequestId></Error>`;
}

export class FaultProxy {
  readonly counts: Record<S3Fault | 'passed', number> = { 'error-500': 0, 'slowdown-503': 0, 'reset-request': 0, 'truncate-response': 0, latency: 0, 'refused-403': 0, 'gone-404': 0, passed: 0 };
  readonly seen: SeenRequest[] = [];
  private rate: number;
  private random: () => number;
  private faults: readonly S3Fault[];
  private scripted: Array<S3Fault | 'pass'> = [];
  private only: RequestMatcher | undefined;
  private watches: Watch[] = [];
  private readonly tallies: Array<{ matches: RequestMatcher; tally: InFlightTally }> = [];
  private readonly held = new Map<ServerResponse, IncomingMessage>();
  private readonly sockets = new Set<Socket>();
  private readonly target: URL;
  private readonly latencyMs: number;

  private constructor(private readonly server: Server, readonly endpoint: string, options: FaultProxyOptions) {
    this.target = new URL(options.target);
    this.rate = options.rate ?? 0;
    this.random = seededRandom(options.seed ?? 1);
    this.faults = options.faults ?? allS3Faults;
    this.latencyMs = options.latencyMs ?? 50;
    this.only = options.only;
  }

  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    let proxy: FaultProxy | undefined;
    const server = createServer((req, res) => void proxy!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    proxy = new FaultProxy(server, `http://127.0.0.1:${port}`, options);
    server.on('connection', (socket) => {
      proxy!.sockets.add(socket);
      socket.once('close', () => proxy!.sockets.delete(socket));
    });
    proxy.registered = stopOnExit('the S3 fault proxy', () => proxy!.closeNow());
    return proxy;
  }

  /** Registered with tests/support/cleanup.ts, so a failing before-all hook cannot leave it listening. */
  private registered: () => Promise<void> = async () => undefined;

  stop(): Promise<void> {
    return this.registered();
  }

  /** Faults at `rate` from here on, drawn from a generator seeded with `seed`. */
  setRate(rate: number, seed = 1, faults: readonly S3Fault[] = allS3Faults): void {
    this.rate = rate;
    this.random = seededRandom(seed);
    this.faults = faults;
  }

  /** The next eligible requests get these faults in order ('pass' lets one through); the rate applies after. */
  script(faults: Array<S3Fault | 'pass'>): void {
    this.scripted = [...faults];
  }

  /** Only requests matching `matcher` are eligible for faults (undefined: all). */
  restrictTo(matcher: RequestMatcher | undefined): void {
    this.only = matcher;
  }

  /**
   * Resolves when a request matching `matcher` arrives. With `hold`, that request is never answered (until
   * stop()): the client waits on it, so the test can act while the process is exactly there.
   */
  when(matcher: RequestMatcher, options: { hold?: boolean } = {}): Promise<SeenRequest> {
    return new Promise((resolve) => this.watches.push({ matches: matcher, hold: options.hold ?? false, resolve }));
  }

  /** Sends every held request on to s3rver now, as a network that stalled and recovered would: the client gets its answer late. */
  releaseHeld(): void {
    for (const [res, req] of this.held) this.forward(req, res, false);
    this.held.clear();
  }

  /**
   * Counts the requests matching `matcher` that are open at once (arrived, not yet answered in full), and the most
   * there ever were: how many of them a client runs in parallel, whatever the machine's speed.
   */
  track(matcher: RequestMatcher): InFlightTally {
    const tally = { open: 0, peak: 0, total: 0 };
    this.tallies.push({ matches: matcher, tally });
    return tally;
  }

  private nextFault(seen: SeenRequest): S3Fault | 'pass' {
    if (this.only && !this.only(seen)) return 'pass';
    const scripted = this.scripted.shift();
    if (scripted) return scripted;
    if (this.rate <= 0 || this.random() >= this.rate) return 'pass';
    return this.faults[Math.floor(this.random() * this.faults.length)] ?? 'pass';
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const copySource = req.headers['x-amz-copy-source'];
    const seen: SeenRequest = { method: req.method ?? 'GET', url: req.url ?? '/', ...(typeof copySource === 'string' ? { copySource } : {}) };
    this.seen.push(seen);
    for (const { matches, tally } of this.tallies) {
      if (!matches(seen)) continue;
      tally.total++;
      tally.peak = Math.max(tally.peak, ++tally.open);
      res.once('close', () => tally.open--);
    }
    const watch = this.watches.find((w) => w.matches(seen));
    if (watch) {
      this.watches = this.watches.filter((w) => w !== watch);
      watch.resolve(seen);
      if (watch.hold) {
        this.held.set(res, req);
        return;
      }
    }
    const fault = this.nextFault(seen);
    this.counts[fault === 'pass' ? 'passed' : fault]++;
    switch (fault) {
      case 'error-500':
      case 'slowdown-503': {
        // The server never saw it: drain the body, then refuse as S3 does.
        await drain(req);
        const [status, code] = fault === 'error-500' ? [500, 'InternalError'] : [503, 'SlowDown'];
        const body = s3ErrorXml(code, fault === 'error-500' ? 'We encountered an internal error. Please try again.' : 'Please reduce your request rate.');
        res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), ...(fault === 'slowdown-503' ? { 'retry-after': '0' } : {}) });
        res.end(body);
        return;
      }
      case 'refused-403':
      case 'gone-404': {
        await drain(req);
        const [status, code, message] = fault === 'refused-403' ? [403, 'AccessDenied', 'Access Denied'] : [404, 'NoSuchKey', 'The specified key does not exist.'];
        const body = s3ErrorXml(code, message);
        res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      case 'reset-request': {
        // Cut the connection while the request (body) is still arriving: nothing reached the server.
        req.once('data', () => req.socket.destroy());
        req.once('end', () => req.socket.destroy());
        req.resume();
        return;
      }
      case 'latency':
        await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
        return this.forward(req, res, false);
      case 'truncate-response':
        return this.forward(req, res, true);
      case 'pass':
        return this.forward(req, res, false);
    }
  }

  /** Sends the request on to s3rver; with `truncate`, the answer is cut after its headers and half its body. */
  private forward(req: IncomingMessage, res: ServerResponse, truncate: boolean): void {
    const upstream = httpRequest(
      { host: this.target.hostname, port: this.target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (!truncate) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          // The server has acted; the client sees its answer break off, as when a connection dies mid-response.
          const body = Buffer.concat(chunks);
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'content-length': String(Math.max(body.length, 1)) });
          res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
        });
      },
    );
    upstream.on('error', () => res.socket?.destroy());
    req.pipe(upstream);
  }

  private async closeNow(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.held.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _ of req) void _;
}
