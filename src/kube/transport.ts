// Raw HTTP(S) to the API server with the KubeConfig's TLS and credentials on one keep-alive agent.
// We skip the generated typed clients: engines want raw JSON, and a LIST should cost little more than its bytes.
import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import pLimit, { type LimitFunction } from 'p-limit';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RequestOptions {
  body?: string;
  contentType?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Credentials can rotate (projected service-account tokens, exec plugins): re-read them this often. */
const credentialsTtlMs = 60_000;

export class Transport {
  private readonly limit: LimitFunction;
  private authHeaders: OutgoingHttpHeaders = {};
  private authReadAt = -Infinity;
  /** the parts of the server's URL every request names, read once (URL's getters cost a little on each request) */
  private readonly target: { protocol: string; hostname: string; port: string | number; basePath: string };

  private constructor(
    private readonly config: KubeConfig,
    private readonly base: URL,
    private readonly agent: http.Agent,
    private readonly secure: boolean,
    concurrency: number,
    private readonly defaultTimeoutMs: number,
  ) {
    this.limit = pLimit(concurrency);
    this.target = {
      protocol: base.protocol,
      hostname: base.hostname.replace(/^\[|\]$/g, ''),
      port: base.port || (secure ? 443 : 80),
      basePath: base.pathname.replace(/\/$/, ''),
    };
  }

  static async create(config: KubeConfig, options: { concurrency: number; timeoutMs: number }): Promise<Transport> {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error('The kubeconfig has no current cluster.');
    const base = new URL(cluster.server);
    const secure = base.protocol === 'https:';
    const tls: https.RequestOptions = {};
    await config.applyToHTTPSOptions(tls);
    const agentOptions: https.AgentOptions = { keepAlive: true, maxFreeSockets: Math.max(8, options.concurrency) };
    for (const key of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const) {
      if (tls[key] !== undefined) (agentOptions as Record<string, unknown>)[key] = tls[key];
    }
    const agent = secure ? new https.Agent(agentOptions) : new http.Agent({ keepAlive: true });
    const transport = new Transport(config, base, agent, secure, options.concurrency, options.timeoutMs);
    transport.rememberCredentials(tls);
    return transport;
  }

  get concurrency(): number {
    return this.limit.concurrency;
  }

  /**
   * requests inside the concurrency limit now (read by the benches' timeline, bench/support/client.ts): p-limit's own
   * count, since a counter updated on every request (an await more each) was measurable in the restore's time
   */
  get inFlight(): number {
    return this.limit.activeCount;
  }

  /** A request that counts against the client's concurrency limit; the whole body is read. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
    return this.limit(async () => {
      const response = await this.open(method, path, options, options.timeoutMs ?? this.defaultTimeoutMs);
      return readWhole(response);
    });
  }

  /** A long-lived streaming request (watch): outside the concurrency limit so that waits never starve work. */
  stream(method: string, path: string, signal: AbortSignal): Promise<IncomingMessage> {
    return this.open(method, path, { signal }, 0);
  }

  close(): void {
    this.agent.destroy();
  }

  private async open(method: string, path: string, options: RequestOptions, timeoutMs: number): Promise<IncomingMessage> {
    const headers: OutgoingHttpHeaders = { Accept: 'application/json', ...(this.credentialsFresh() ? this.authHeaders : await this.credentials()) };
    if (options.body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(options.body);
    }
    const requestOptions: http.RequestOptions = {
      method,
      protocol: this.target.protocol,
      hostname: this.target.hostname,
      port: this.target.port,
      path: this.target.basePath + path,
      headers,
      agent: this.agent,
      ...(options.signal ? { signal: options.signal } : {}),
    };
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = (this.secure ? https : http).request(requestOptions, resolve);
      request.on('error', reject);
      if (timeoutMs > 0) {
        request.setTimeout(timeoutMs, () => request.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      }
      request.end(options.body);
    });
  }

  private credentialsFresh(): boolean {
    return Date.now() - this.authReadAt <= credentialsTtlMs;
  }

  private async credentials(): Promise<OutgoingHttpHeaders> {
    if (!this.credentialsFresh()) {
      const fresh: https.RequestOptions = {};
      await this.config.applyToHTTPSOptions(fresh);
      this.rememberCredentials(fresh);
    }
    return this.authHeaders;
  }

  private rememberCredentials(options: https.RequestOptions): void {
    const headers: OutgoingHttpHeaders = {};
    const given = (options.headers ?? {}) as OutgoingHttpHeaders;
    for (const [key, value] of Object.entries(given)) if (value !== undefined) headers[key] = value;
    if (options.auth) headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    this.authHeaders = headers;
    this.authReadAt = Date.now();
    // applyToHTTPSOptions builds an agent of its own each time; we use ours, so let that one go.
    (options.agent as http.Agent | undefined)?.destroy?.();
  }
}

/**
 * The whole body of an answer, read with the stream's own events: an async iterator over the response added several
 * promises and listeners to every request (createAsyncIterator, end-of-stream), a share of each request's client CPU
 * that a profile of the restore showed (docs/performance.md).
 */
function readWhole(response: IncomingMessage): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('error', reject);
    // a connection lost mid-body ends in 'aborted' + 'error' (or only 'close' without 'end'): never resolve a cut body
    response.on('close', () => {
      if (!response.complete) reject(Object.assign(new Error('the connection closed before the whole answer came'), { code: 'ECONNRESET' }));
    });
    response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
  });
}
