// A real HTTP server whose answers each test scripts, with a kubeconfig pointing at it: it lets the client's
// handling of pagination, faults and streams be tested exactly, while the embedded cluster tests the semantics.
import http from 'node:http';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Handler = (request: SeenRequest, response: http.ServerResponse) => void;

export interface ScriptedApi {
  kubeconfigPath: string;
  requests: SeenRequest[];
  maxInFlight: () => number;
  stop(): Promise<void>;
}

export const token = 'scripted-token';

export async function startScriptedApi(handler: Handler): Promise<ScriptedApi> {
  const requests: SeenRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const seen = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      if (req.headers.authorization !== `Bearer ${token}`) return json(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
      handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = mkdtempSync(join(tmpdir(), 'scripted-api-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'scripted', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'tester', user: { token } }],
      contexts: [{ name: 'scripted', context: { cluster: 'scripted', user: 'tester' } }],
      'current-context': 'scripted',
    }),
  );
  return {
    kubeconfigPath,
    requests,
    maxInFlight: () => maxInFlight,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function json(res: http.ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function status(code: number, reason: string, message: string, extra: Record<string, unknown> = {}) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, ...extra };
}
