// ws (a dependency of @kubernetes/client-node, through isomorphic-ws) ships no type declarations and @types/ws is not
// installed; this covers the part the test support uses: the server side of pods/exec (tests/support/cluster/exec.ts)
// and a bare client for the tests that read a refused handshake's answer.
declare module 'ws' {
  import type { EventEmitter } from 'node:events';
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';
  import type { SecureContextOptions } from 'node:tls';

  type RawData = Buffer | ArrayBuffer | Buffer[];

  export class WebSocket extends EventEmitter {
    static readonly OPEN: 1;
    constructor(address: string, protocols?: string | string[], options?: SecureContextOptions & { headers?: Record<string, string>; ca?: string | Buffer; rejectUnauthorized?: boolean });
    readonly protocol: string;
    readonly readyState: 0 | 1 | 2 | 3;
    send(data: Buffer | string, callback?: (error?: Error) => void): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
    on(event: 'message', listener: (data: RawData, isBinary: boolean) => void): this;
    on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: 'open', listener: () => void): this;
    on(event: 'unexpected-response', listener: (request: unknown, response: IncomingMessage) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export interface ServerOptions {
    noServer?: boolean;
    perMessageDeflate?: boolean;
    handleProtocols?: (protocols: Set<string>, request: IncomingMessage) => string | false;
  }

  export class WebSocketServer extends EventEmitter {
    constructor(options: ServerOptions);
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, callback: (client: WebSocket, request: IncomingMessage) => void): void;
    close(callback?: (error?: Error) => void): void;
  }

  export default WebSocket;
}
