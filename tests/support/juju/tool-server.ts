// The fake unit agent of one dispatch: the fake hook tools on PATH (fake-tool-client.bash, as thin as Juju's jujuc)
// send it each call over TCP on 127.0.0.1, and it answers with hook-tool.ts's rules over the state it holds in memory.
// Node runs one request handler at a time, so concurrent tool calls of a dispatch are applied one after the other.
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { runHookTool, type ToolReply } from './hook-tool.ts';
import type { FakeJujuState } from './state.ts';

export interface ToolServer {
  /** what the dispatch's environment needs for its tools to find this agent */
  env: { FAKE_JUJU_TOOLS: string };
  /** a copy of the state as the tool calls so far left it */
  state(): FakeJujuState;
  close(): Promise<void>;
}

interface Request {
  started?: number;
  tool: string;
  args: string[];
  stdin?: string;
}

/**
 * One request: `<started µs> <0|1 stdin> <count>\n`, then `count` length-prefixed byte strings (`<bytes>:<value>`,
 * the tool's name first), then, when stdin is sent, one base64 line. Undefined while incomplete.
 */
export function parseRequest(buffer: Buffer): Request | undefined {
  const newline = buffer.indexOf(0x0a);
  if (newline < 0) return undefined;
  const [startedText = '', stdinFlag = '', countText = ''] = buffer.subarray(0, newline).toString('latin1').split(' ');
  const count = Number(countText);
  if (!Number.isInteger(count) || count < 1) throw new Error(`bad request header "${buffer.subarray(0, newline).toString('latin1')}"`);
  const values: string[] = [];
  let at = newline + 1;
  for (let i = 0; i < count; i++) {
    const colon = buffer.indexOf(0x3a, at);
    if (colon < 0) return undefined;
    const length = Number(buffer.subarray(at, colon).toString('latin1'));
    if (!Number.isInteger(length) || length < 0) throw new Error('bad length in request');
    if (colon + 1 + length > buffer.length) return undefined;
    values.push(buffer.subarray(colon + 1, colon + 1 + length).toString('utf8'));
    at = colon + 1 + length;
  }
  const request: Request = { tool: values[0]!, args: values.slice(1) };
  const micros = Number(startedText);
  if (startedText && Number.isFinite(micros)) request.started = micros / 1000;
  if (stdinFlag === '1') {
    const end = buffer.indexOf(0x0a, at);
    if (end < 0) return undefined;
    request.stdin = Buffer.from(buffer.subarray(at, end).toString('latin1'), 'base64').toString('utf8');
  }
  return request;
}

function encodeReply(reply: ToolReply): Buffer {
  const out = Buffer.from(reply.stdout, 'utf8');
  const err = Buffer.from(reply.stderr, 'utf8');
  return Buffer.concat([Buffer.from(`${reply.exitCode} ${out.length} ${err.length}\n`, 'latin1'), err, out]);
}

/**
 * Starts the agent for one dispatch over `initial` (copied). `env` is the dispatch's environment: the hook context
 * (relation, remote unit, action) that Juju's agent knows for the hook, whatever the charm's own environment says.
 */
export async function startToolServer(initial: FakeJujuState, env: Record<string, string | undefined>): Promise<ToolServer> {
  // Through JSON, as the state file of a real test would be: what a test reads back is plain data.
  const state = JSON.parse(JSON.stringify(initial)) as FakeJujuState;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffer: Buffer = Buffer.alloc(0);
    let answered = false;
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      let request: Request | undefined;
      try {
        request = parseRequest(buffer);
      } catch (error) {
        answered = true;
        socket.end(encodeReply({ exitCode: 1, stdout: '', stderr: `ERROR fake unit agent: ${error instanceof Error ? error.message : String(error)}\n` }));
        return;
      }
      if (!request) return;
      answered = true;
      socket.end(encodeReply(runHookTool(state, { ...request, env })));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo | null;
  if (!address) throw new Error('the fake unit agent did not bind a port');
  return {
    env: { FAKE_JUJU_TOOLS: String(address.port) },
    state: () => JSON.parse(JSON.stringify(state)) as FakeJujuState,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
