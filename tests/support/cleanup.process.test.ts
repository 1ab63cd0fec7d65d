// The test run always ends: a before-all hook that fails after starting servers leaves no process behind, and mocha
// exits by itself (run here without --exit, so only the cleanup can make it end). In parallel mode root hooks run in
// each worker around each file, and the main process sums the workers' results (github.com/mochajs/mocha
// lib/nodejs/worker.cjs and lib/nodejs/parallel-buffered-runner.cjs).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixture = join(root, 'tests', 'support', 'fixtures', 'failing-before-all.fixture.ts');
const passingFixture = join(root, 'tests', 'support', 'fixtures', 'passing.fixture.ts');

/** Processes whose environment carries `marker`: the child mocha and everything it started (they inherit it). */
function processesMarked(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(join('/proc', entry, 'environ'), 'latin1').includes(marker)) pids.push(Number(entry));
    } catch { /* gone, or not ours to read */ }
  }
  return pids;
}

describe('tests/support cleanup', function () {
  this.timeout(120_000);

  /** Runs `files` in a child mocha with `modeArgs`; returns its exit code, its output and what it left running. */
  async function runFixture(modeArgs: string[], files = [fixture]): Promise<{ code: number | string; output: string; left: number[] }> {
    const marker = `KF_LEAK_MARKER=${randomBytes(8).toString('hex')}`;
    const [key, value] = marker.split('=') as [string, string];
    const mocha = join(root, 'node_modules', '.bin', 'mocha');
    const child = spawn(mocha, [...modeArgs, '--no-exit', ...files], {
      cwd: root, env: { ...process.env, [key]: value }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    // A guard against a hang, not a performance figure: without the cleanup the child never exits.
    const code = await new Promise<number | string>((resolve) => {
      const guard = setTimeout(() => { child.kill('SIGKILL'); resolve('still running after 90 s'); }, 90_000);
      child.once('exit', (exitCode, signal) => { clearTimeout(guard); resolve(exitCode ?? String(signal)); });
    });
    const left = processesMarked(value);
    for (const pid of left) try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    return { code, output, left };
  }

  function expectFailedAndCleaned({ code, output, left }: { code: number | string; output: string; left: number[] }): void {
    expect(code, output).to.not.equal(0);
    expect(code, output).to.be.a('number');
    expect(output).to.include('spawn mariadb-install-db ENOENT (simulated)');
    expect(output).to.match(/cleanup: stopped what failed suites left running: .*s3rver/);
    expect(left, `processes left behind: ${left.join(', ')}`).to.deep.equal([]);
  }

  it('a before-all hook that fails after starting servers ends the run non-zero and leaves no process behind', async function () {
    expectFailedAndCleaned(await runFixture(['--reporter', 'dot']));
  });

  // npm test runs the files in mocha worker processes (package.json): there the root hooks run in the worker, per
  // file (mocha lib/nodejs/worker.cjs loads the --require plugins in each worker), and the reporter in the main
  // process, fed the workers' buffered events, must still count the failed hook in CI's closing line.
  it('in parallel mode too, and the closing summary line adds up both workers, the failed hook included', async function () {
    const outcome = await runFixture(['--parallel', '--jobs', '2'], [fixture, passingFixture]);
    expectFailedAndCleaned(outcome);
    expect(outcome.output).to.match(/^1 passed, 1 failed, 0 skipped$/m);
  });
});
