// The real ./dispatch as a child we can SIGKILL at a moment the test chooses (runDispatch only waits for it).
import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFakeTools } from '../support/juju/fake-tools.ts';
import { eventEnvironment, type DispatchEvent } from '../support/juju/harness.ts';
import type { FakeJujuState } from '../support/juju/state.ts';

let toolsDir: string | undefined;

export interface RunningDispatch {
  /** the fake Juju state as the hook tools have written it so far */
  state(): FakeJujuState;
  kill(): Promise<void>;
  /** resolves when the process ended on its own; the exit code */
  finished: Promise<number>;
  cleanup(): void;
}

export function startDispatch(charmDir: string, state: FakeJujuState, event: DispatchEvent): RunningDispatch {
  toolsDir ??= installFakeTools(mkdtempSync(join(tmpdir(), 'fake-juju-tools-')));
  const work = mkdtempSync(join(tmpdir(), 'killable-dispatch-'));
  const statePath = join(work, 'state.json');
  writeFileSync(statePath, JSON.stringify(state));
  const child: ResultPromise = execa(join(charmDir, 'dispatch'), [], {
    cwd: charmDir,
    env: { PATH: `${toolsDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`, HOME: work, FAKE_JUJU_STATE: statePath, ...eventEnvironment(state, charmDir, event) },
    extendEnv: false,
    reject: false,
    timeout: 60_000,
  });
  const finished = child.then((r) => r.exitCode ?? -1);
  return {
    state: () => JSON.parse(readFileSync(statePath, 'utf8')) as FakeJujuState,
    async kill() {
      child.kill('SIGKILL');
      await finished;
    },
    finished,
    cleanup: () => rmSync(work, { recursive: true, force: true }),
  };
}
