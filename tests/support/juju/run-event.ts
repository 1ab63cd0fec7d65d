// The charm's logic for one event, in this process: state in → event → state out, like ops.testing's
// `Context.run(event, state)` (canonical/operator testing/src/scenario). The same hook-tool rules (hook-tool.ts) answer as for the real ./dispatch, through the
// charm's ToolRunner seam instead of executables on PATH, so a test of the charm's decisions costs milliseconds
// instead of a process with its own Node. runDispatch (harness.ts) stays for what only the packed charm can show:
// packing, the dispatch shim, the environment Juju gives a hook, and whole flows end to end.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HookToolError, type ToolRunner } from '../../../src/juju/hook-tools.ts';
import { main } from '../../../src/charm/main.ts';
import { eventEnvironment, type DispatchEvent } from './hook-context.ts';
import { runHookTool } from './hook-tool.ts';
import type { FakeJujuState } from './state.ts';
import { assertConsistent, withConfigDefaults } from './consistency.ts';

export interface EventOutcome {
  exitCode: number;
  /** what the charm wrote to stdout (Juju keeps it in the unit's log, so no secret may reach it either) */
  stdout: string;
  /** what the charm wrote to stderr (Juju shows it in the hook's failure) */
  stderr: string;
  state: FakeJujuState;
}

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Which calls read stdin: the fake tools send it only for `--file -` (fake-tool-client.bash), and so does this. */
function readsStdin(args: string[]): boolean {
  return args.some((arg, i) => arg === '--file=-' || arg === '-file=-' || (arg === '-' && (args[i - 1] === '--file' || args[i - 1] === '-file')));
}

/** Collects what is written to `stream` until the returned function puts the stream back and returns the text. */
function capture(stream: NodeJS.WriteStream): () => string {
  const chunks: string[] = [];
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array) => { chunks.push(String(chunk)); return true; }) as typeof stream.write;
  return () => {
    stream.write = write;
    return chunks.join('');
  };
}

/**
 * Runs the charm's main() for `event` over a copy of `state`, refused when Juju could not run it (consistency.ts). `env` adds to the hook's environment (KUBECONFIG, …),
 * as event.env does for runDispatch. One event at a time per process: main() writes to process.stdout and stderr.
 */
export async function runEvent(state: FakeJujuState, event: DispatchEvent): Promise<EventOutcome> {
  // A state Juju could never give the charm is refused, and config-get answers with the defaults (consistency.ts).
  assertConsistent(repositoryRoot, state, event);
  const working = JSON.parse(JSON.stringify(state)) as FakeJujuState;
  working.config = withConfigDefaults(repositoryRoot, working.config);
  const env = { ...eventEnvironment(working, repositoryRoot, event), HOME: process.env.HOME ?? '/tmp' };
  const runner: ToolRunner = async (tool, args, input) => {
    const reply = runHookTool(working, { tool, args, env, ...(input !== undefined && readsStdin(args) ? { stdin: input } : {}) });
    if (reply.exitCode !== 0) throw new HookToolError(tool, reply.exitCode, reply.stderr);
    return reply.stdout;
  };
  const stdout = capture(process.stdout);
  const stderr = capture(process.stderr);
  let exitCode: number;
  try {
    exitCode = await main(env, runner);
  } catch (error) {
    stdout();
    stderr();
    throw error;
  }
  return { exitCode, stdout: stdout(), stderr: stderr(), state: working };
}
