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

  private constructor(
    private readonly config: KubeConfig,
    private readonly base: URL,
    private readonly agent: http.Agent,
    private readonly secure: boolean,
    concurrency: number,
    private readonly defaultTimeoutMs: number,
  ) {
    this.limit = pLimit(concurrency);
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

  /** A request that counts against the client's concurrency limit; the whole body is read. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
    return this.limit(async () => {
      const response = await this.open(method, path, options, options.timeoutMs ?? this.defaultTimeoutMs);
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      return { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) };
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
    const headers: OutgoingHttpHeaders = { Accept: 'application/json', ...(await this.credentials()) };
    if (options.body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(options.body);
    }
    const basePath = this.base.pathname.replace(/\/$/, '');
    const requestOptions: http.RequestOptions = {
      method,
      protocol: this.base.protocol,
      hostname: this.base.hostname.replace(/^\[|\]$/g, ''),
      port: this.base.port || (this.secure ? 443 : 80),
      path: basePath + path,
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

  private async credentials(): Promise<OutgoingHttpHeaders> {
    if (Date.now() - this.authReadAt > credentialsTtlMs) {
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
