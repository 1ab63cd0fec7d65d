// The simulated cluster's way out to the internet: an HTTP CONNECT proxy that knows a few public hosts and where each
// one really is on this machine (e.g. s3.us-east-1.amazonaws.com:443 → a TLS s3rver on 127.0.0.1). Containers of the
// simulated kubelet reach it through HTTPS_PROXY, and trust the CA its stand-in servers are signed with through
// SSL_CERT_FILE (both honoured by Go programs such as rclone, as by curl). A host it does not know is refused, as an
// air-gapped cluster's egress would.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface Internet {
  /** http://127.0.0.1:<port>, for HTTPS_PROXY */
  proxyUrl: string;
  /** every CONNECT target asked for, known or not */
  readonly asked: string[];
  stop(): Promise<void>;
}

/** `routes`: `host:port` as clients name it → `host:port` where it listens here. */
export async function startInternet(routes: Record<string, string>): Promise<Internet> {
  const asked: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => {
    res.writeHead(405).end('only CONNECT is served');
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const wanted = req.url ?? '';
    asked.push(wanted);
    const route = routes[wanted];
    if (!route) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const [host, port] = [route.slice(0, route.lastIndexOf(':')), Number(route.slice(route.lastIndexOf(':') + 1))];
    const upstream = connect(port, host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    proxyUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}
