// The restore gateway's few S3 calls (./server.ts): HeadObject, ListObjectsV2, PutObject and DeleteObject of lock
// files, each signed with SigV4 by @smithy/signature-v4 (the AWS SDK's own signer), and presigned GETs, without the
// SDK's client: the gateway is one small bundle run by the official node image. The presigned URL is the query form of
// SigV4 that S3 documents for sharing one object (AWS S3 API reference, "Authenticating Requests: Using Query
// Parameters"): the payload hash is the literal UNSIGNED-PAYLOAD and only `host` is signed, so the client may add a Range
// header of its own (restic sends one with every load: restic/restic internal/backend/rest/rest.go openReader).
import { createHash, createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { SignatureV4 } from '@smithy/signature-v4';

export interface GatewayBucket {
  /** the S3 endpoint as the cluster reaches it, e.g. https://rgw.example:443 */
  endpoint: string;
  bucket: string;
  region: string;
  /** true: `<endpoint>/<bucket>/<key>`; false: `<bucket>.<endpoint host>/<key>` (virtual-hosted) */
  pathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  /** PEM of the endpoint's private CA, added to the public roots */
  caPem?: string | undefined;
  /** more trusted roots: the file SSL_CERT_FILE names, which Go programs (rclone, restic) read as the system's roots */
  systemRootsPem?: string | undefined;
  /** HTTPS_PROXY, HTTP_PROXY and NO_PROXY, honoured as Go programs honour them (Node's Agent option proxyEnv) */
  proxyEnv?: NodeJS.ProcessEnv | undefined;
}

/** SHA-256 and HMAC-SHA-256 as the signer's Checksum interface, from node:crypto. */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytesOf = (data: SourceData) => (typeof data === 'string' ? data
  : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data));

class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

/** RFC 3986 encoding, as SigV4 canonicalises a path segment or a query value (encodeURIComponent leaves !'()* alone). */
export function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const EMPTY_SHA256 = createHash('sha256').digest('hex');
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const CONTENT_SHA256 = 'x-amz-content-sha256';

export interface S3Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface ListedObject {
  key: string;
  size: number;
}

const xmlText = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

export class BucketAccess {
  private readonly signer: SignatureV4;
  private readonly base: URL;
  private readonly agent: HttpAgent;

  constructor(private readonly settings: GatewayBucket) {
    this.signer = new SignatureV4({
      service: 's3', region: settings.region, sha256: NodeSha256,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      // S3 signs the path as sent, escaped once (the SDK's S3 client sets this too); paths here are escaped already
      uriEscapePath: false,
    });
    const url = new URL(settings.endpoint);
    const prefix = url.pathname.replace(/\/+$/, '');
    if (settings.pathStyle) url.pathname = `${prefix}/${rfc3986(settings.bucket)}`;
    else {
      url.hostname = `${settings.bucket}.${url.hostname}`;
      url.pathname = prefix;
    }
    this.base = url;
    const tls = url.protocol === 'https:';
    const extra = [settings.systemRootsPem, settings.caPem].filter((pem): pem is string => pem !== undefined && pem !== '');
    // the node image's egress as rclone's was: the cluster's proxy if the Pod has one (nodejs/node doc/api/http.md,
    // "Built-in Proxy Support", the Agent option proxyEnv since Node 24.5)
    const proxy = settings.proxyEnv ? { proxyEnv: settings.proxyEnv } : {};
    this.agent = tls
      ? new HttpsAgent({ keepAlive: true, ...proxy, ...(extra.length > 0 ? { ca: [...rootCertificates, ...extra] } : {}) })
      : new HttpAgent({ keepAlive: true, ...proxy });
  }

  /** The request of one object (or of the bucket, key ''), as the signer takes it. */
  private requestOf(method: string, key: string, query: Record<string, string>, headers: Record<string, string>) {
    const path = `${this.base.pathname}${key === '' ? '' : `/${key.split('/').map(rfc3986).join('/')}`}` || '/';
    return {
      method, protocol: this.base.protocol, hostname: this.base.hostname, ...(this.base.port ? { port: Number(this.base.port) } : {}),
      path, query, headers: { host: this.base.host, ...headers },
    };
  }

  private urlOf(path: string, query: Record<string, string | string[] | null>): string {
    const search = Object.entries(query).map(([k, v]) => `${rfc3986(k)}=${rfc3986(String(v))}`).join('&');
    return `${this.base.protocol}//${this.base.host}${path}${search ? `?${search}` : ''}`;
  }

  /** A URL that GETs `key` without any other credential, for `seconds`. */
  async presignGet(key: string, seconds: number): Promise<string> {
    const signed = await this.signer.presign(this.requestOf('GET', key, {}, { [CONTENT_SHA256]: UNSIGNED_PAYLOAD }), {
      expiresIn: seconds,
      unhoistableHeaders: new Set([CONTENT_SHA256]),
      unsignableHeaders: new Set([CONTENT_SHA256]),
    });
    return this.urlOf(signed.path, signed.query as Record<string, string>);
  }

  /** One signed request; the answer whatever its status (network errors reject). */
  async send(method: 'HEAD' | 'GET' | 'PUT' | 'DELETE', key: string, query: Record<string, string> = {}, body?: Buffer): Promise<S3Answer> {
    const payloadHash = body ? createHash('sha256').update(body).digest('hex') : EMPTY_SHA256;
    const headers: Record<string, string> = { [CONTENT_SHA256]: payloadHash, ...(body ? { 'content-length': String(body.length) } : {}) };
    const signed = await this.signer.sign(this.requestOf(method, key, query, headers));
    const url = this.urlOf(signed.path, signed.query as Record<string, string>);
    const send = this.base.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<S3Answer>((resolve, reject) => {
      const request = send(url, { method, headers: signed.headers, agent: this.agent, timeout: 60_000 });
      request.on('timeout', () => request.destroy(new Error(`S3 at ${this.base.host} did not answer within 60 s`)));
      request.on('error', reject);
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      });
      request.end(body);
    });
  }

  /** Every object under `prefix` (ListObjectsV2, page after page). */
  async list(prefix: string): Promise<ListedObject[]> {
    const out: ListedObject[] = [];
    let token: string | undefined;
    do {
      const answer = await this.send('GET', '', { 'list-type': '2', prefix, ...(token ? { 'continuation-token': token } : {}) });
      if (answer.status !== 200) throw new S3Error('ListObjectsV2', answer.status);
      const xml = answer.body.toString('utf8');
      for (const [, contents] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
        const key = /<Key>([\s\S]*?)<\/Key>/.exec(contents!)?.[1];
        const size = /<Size>(\d+)<\/Size>/.exec(contents!)?.[1];
        if (key !== undefined) out.push({ key: xmlText(key), size: Number(size ?? 0) });
      }
      token = /<IsTruncated>true<\/IsTruncated>/.test(xml) ? /<NextContinuationToken>([\s\S]*?)<\/NextContinuationToken>/.exec(xml)?.[1] : undefined;
      if (token !== undefined) token = xmlText(token);
    } while (token);
    return out;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** An S3 answer the gateway cannot pass on as it is: names the call and its status, never the request's signature. */
export class S3Error extends Error {
  constructor(readonly call: string, readonly status: number) {
    super(`S3 answered ${call} with HTTP ${status}`);
  }
}
