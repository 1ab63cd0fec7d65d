// Runs the REAL ./dispatch of a charm directory for one event, with the fake hook tools on PATH:
// state in → event → state out, the shape of ops.testing. From upstream: juju/juju internal/worker/uniter/runner/context
// (the environment a hook gets, in hook-context.ts) and cmd/jujuc (the tools on PATH, clients of the unit agent).
import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFakeTools } from './fake-tools.ts';
import { startToolServer } from './tool-server.ts';
import { eventEnvironment, type DispatchEvent } from './hook-context.ts';
import type { FakeJujuState } from './state.ts';

// The hook's context is its own module, so that tests of the charm in process (run-event.ts) import no process.
export { eventEnvironment, unitStatus, type DispatchEvent } from './hook-context.ts';

export interface DispatchOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  state: FakeJujuState;
  /** wall time of the dispatch process, for benchmarks only */
  wallMs: number;
}

let toolsDir: string | undefined;
/** The folder of fake hook tools, made once per test process. */
export function toolsBin(): string {
  toolsDir ??= installFakeTools(mkdtempSync(join(tmpdir(), 'fake-juju-tools-')));
  return toolsDir;
}

export async function runDispatch(charmDir: string, state: FakeJujuState, event: DispatchEvent): Promise<DispatchOutcome> {
  const work = mkdtempSync(join(tmpdir(), 'fake-juju-home-'));
  // Juju gives hooks a small, fixed environment: nothing of the test process leaks in (KUBECONFIG only if asked).
  const hookEnv = {
    PATH: `${toolsBin()}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    HOME: work,
    ...eventEnvironment(state, charmDir, event),
  };
  // The fake unit agent holds the state while the hook runs; its tools on PATH are clients of it.
  const agent = await startToolServer(state, hookEnv);
  try {
    const started = performance.now();
    const result = await execa(join(charmDir, 'dispatch'), [], { cwd: charmDir, env: { ...hookEnv, ...agent.env }, extendEnv: false, reject: false, timeout: 60_000 });
    const wallMs = performance.now() - started;
    return {
      exitCode: result.exitCode ?? -1,
      stdout: String(result.stdout ?? ''),
      stderr: String(result.stderr ?? ''),
      state: agent.state(),
      wallMs,
    };
  } finally {
    await agent.close();
    rmSync(work, { recursive: true, force: true });
  }
}
