// The real ./dispatch as a child we can SIGKILL at a moment the test chooses (runDispatch only waits for it). It runs
// in its own process group and the whole group is killed, as when the unit's pod dies: ./dispatch is a shell script, so
// killing only its pid would leave the charm's node process running on.
import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFakeTools } from '../support/juju/fake-tools.ts';
import { eventEnvironment, type DispatchEvent } from '../support/juju/harness.ts';
import type { FakeJujuState } from '../support/juju/state.ts';
import { startToolServer, type ToolServer } from '../support/juju/tool-server.ts';

let toolsDir: string | undefined;

export interface RunningDispatch {
  /** the fake Juju state as the hook tools have left it so far */
  state(): FakeJujuState;
  kill(): Promise<void>;
  /** resolves when the process ended on its own; the exit code */
  finished: Promise<number>;
  cleanup(): void;
}

export function startDispatch(charmDir: string, state: FakeJujuState, event: DispatchEvent): RunningDispatch {
  toolsDir ??= installFakeTools(mkdtempSync(join(tmpdir(), 'fake-juju-tools-')));
  const work = mkdtempSync(join(tmpdir(), 'killable-dispatch-'));
  const hookEnv = { PATH: `${toolsDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`, HOME: work, ...eventEnvironment(state, charmDir, event) };
  // The fake unit agent holds the state; the dispatch starts once it listens (wrapped: a subprocess is a thenable).
  let agent: ToolServer | undefined;
  const spawned = startToolServer(state, hookEnv).then((started) => {
    agent = started;
    const child: ResultPromise = execa(join(charmDir, 'dispatch'), [], { cwd: charmDir, env: { ...hookEnv, ...started.env }, extendEnv: false, reject: false, timeout: 120_000, detached: true });
    return { child };
  });
  const finished = spawned.then(({ child }) => child).then((r) => r.exitCode ?? -1);
  return {
    state: () => (agent ? agent.state() : (JSON.parse(JSON.stringify(state)) as FakeJujuState)),
    async kill() {
      const { child } = await spawned;
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error; // the group already ended
        }
      }
      await finished;
    },
    finished,
    cleanup: () => {
      void agent?.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
