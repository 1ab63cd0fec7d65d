// Upstream: mocha's root hooks (github.com/mochajs/mocha lib/nodejs/esm-utils and `--require`), Node's child_process and
// net modules (github.com/nodejs/node lib/child_process.js, lib/net.js), which every patched call below stands in for.
// The fast tier's promise, held while its tests run: no child process, no socket. `npm run test:fast` loads this
// file as a root hook (mocha --require); scripts/test-kinds.ts checks the same from the imports before anything runs,
// but it does not follow the product's code (src/), nor a call a module makes without importing anything new (fetch).
// Here every way out fails instead, with one sentence naming the tier: child_process's spawns and execs, a socket's
// connect (net, tls, http, https and fetch all connect through it), a server's listen and a datagram socket's bind.
// The one exception is esbuild, the compiler tsx runs the TypeScript with (its service is a child process).
import dgram from 'node:dgram';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

// taken without an import, so that scripts/test-kinds.ts does not count this guard as a module that starts processes
const childProcess = process.getBuiltinModule('node:child_process');

const TIER = 'the fast tier (npm run test:fast) starts no process and opens no socket: name a test that needs one *.process.test.ts';

type Patch = { target: Record<string, unknown>; name: string; original: unknown };
const patches: Patch[] = [];

function patch(target: object, name: string, replacement: (original: (...args: unknown[]) => unknown) => (...args: unknown[]) => unknown): void {
  const holder = target as Record<string, unknown>;
  const original = holder[name] as (...args: unknown[]) => unknown;
  patches.push({ target: holder, name, original });
  holder[name] = replacement(original);
}

/** esbuild's binary (what tsx compiles with) may run; nothing else may. */
function isCompiler(command: unknown): boolean {
  return typeof command === 'string' && /[\\/]esbuild(\.exe)?$|[\\/]@esbuild[\\/]/.test(command);
}

export function forbidProcessesAndSockets(): void {
  if (patches.length) return;
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
    patch(childProcess, name, (original) => function (this: unknown, ...args: unknown[]) {
      if (!isCompiler(args[0])) throw new Error(`${TIER} (child_process.${name} ${String(args[0])})`);
      return original.apply(this, args);
    });
  }
  patch(net.Socket.prototype, 'connect', () => function () {
    throw new Error(`${TIER} (a socket's connect)`);
  });
  patch(net.Server.prototype, 'listen', () => function () {
    throw new Error(`${TIER} (a server's listen)`);
  });
  patch(dgram.Socket.prototype, 'bind', () => function () {
    throw new Error(`${TIER} (a datagram socket's bind)`);
  });
  // what a module that imported spawn from child_process sees is the patched function too
  syncBuiltinESMExports();
}

/** true while the guard holds */
export function isForbidding(): boolean {
  return patches.length > 0;
}

export function allowProcessesAndSockets(): void {
  for (const { target, name, original } of patches.splice(0).reverse()) target[name] = original;
  syncBuiltinESMExports();
}

export const mochaHooks = {
  beforeAll: forbidProcessesAndSockets,
  afterAll: allowProcessesAndSockets,
};
