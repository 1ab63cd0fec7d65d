// Runs the real Pebble (../shared/bin/pebble, built from canonical/pebble v1.14.1: PEBBLE-PROVENANCE.md beside it) as a
// workload container's PID 1 does under Juju: `pebble run --create-dirs --hold --verbose`, with PEBBLE_SOCKET naming the
// socket the charm reaches (upstream: canonical/pebble cmd/pebble/cmd_run.go; Juju's command line as
// ../shared/reference/cos-and-pebble.md §4 gives it). `--hold` starts no service until the charm adds a layer and
// replans. The "container" is this machine: the files the charm pushes land at the paths it names, so each test
// gives the charm a private folder of its own as the workload's root.
import { execa, type ResultPromise } from 'execa';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopOnExit } from '../cleanup.ts';

const here = dirname(fileURLToPath(import.meta.url));
/** ../shared/bin/pebble beside the project (the CI clone has shared/ beside it too). */
export const PEBBLE_BINARY = process.env.PEBBLE_BINARY ?? resolve(here, '..', '..', '..', '..', 'shared', 'bin', 'pebble');

export interface RunningPebble {
  /** PEBBLE_SOCKET: what the charm reaches as /charm/containers/<name>/pebble.socket */
  socket: string;
  /** a private folder for this container's files */
  root: string;
  /** everything Pebble printed so far: its own log and its services' output (`--verbose`) */
  output(): string;
  /** resolves with the output once `pattern` appears in it (a sign Pebble or a service gives); rejects after `ms` */
  waitFor(pattern: RegExp, ms?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startPebble(env: Record<string, string> = {}): Promise<RunningPebble> {
  if (!existsSync(PEBBLE_BINARY)) throw new Error(`the Pebble binary is missing at ${PEBBLE_BINARY} (../shared/bin/pebble; set PEBBLE_BINARY)`);
  const root = mkdtempSync(join(tmpdir(), 'pebble-container-'));
  const socket = join(root, 'pebble.socket');
  let text = '';
  const waiters: Array<{ pattern: RegExp; resolve: (s: string) => void }> = [];
  const child: ResultPromise = execa(PEBBLE_BINARY, ['run', '--create-dirs', '--hold', '--verbose'], {
    env: { PEBBLE: join(root, 'pebble'), PEBBLE_SOCKET: socket, PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    extendEnv: false,
    reject: false,
    all: true,
    buffer: false,
  });
  const onData = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(text)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(text);
      }
    }
  };
  child.all?.on('data', onData);
  const stop = stopOnExit(`pebble ${socket}`, async () => {
    child.kill('SIGTERM');
    await child;
    rmSync(root, { recursive: true, force: true });
  });
  const waitFor = (pattern: RegExp, ms = 30_000) =>
    new Promise<string>((resolveWait, reject) => {
      if (pattern.test(text)) {
        resolveWait(text);
        return;
      }
      const timer = setTimeout(() => reject(new Error(`Pebble's output did not show ${pattern} within ${ms} ms:\n${text.slice(-4000)}`)), ms);
      waiters.push({ pattern, resolve: (s) => { clearTimeout(timer); resolveWait(s); } });
    });
  try {
    await waitFor(/Started daemon/, 15_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { socket, root, output: () => text, waitFor, stop };
}

/** A TCP port nobody listens on now, for a service the test starts (the kernel picks it). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  return port;
}
