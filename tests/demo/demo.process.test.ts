// npm run demo in quick mode, as a newcomer runs it: the packed charm backs up cluster A and restores into cluster B,
// the comparison finds no difference, the demo exits 0 and leaves no work folder behind.
import { expect } from 'chai';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

describe('npm run demo -- --quick', function () {
  this.timeout(240_000);

  it('ends with the equality line, exit code 0, and removes its work folder', async () => {
    const run = await execa(process.execPath, ['--import', 'tsx', join(root, 'demo', 'main.ts'), '--quick'], { cwd: root, reject: false, timeout: 230_000, env: { TERM: 'dumb' } });
    const stdout = String(run.stdout);
    expect(run.exitCode, `${stdout}\n${String(run.stderr)}`).to.equal(0);
    expect(stdout.trimEnd().split('\n').at(-1)).to.equal('A and B hold the same user state');
    for (let step = 1; step <= 8; step++) expect(stdout).to.match(new RegExp(`^ ?${step}/8 `, 'm'));
    expect(stdout).to.match(/^ {2}KIND\s+ON A\s+ON B$/m);
    expect(stdout).to.match(/^ {2}Profile\s+2\s+2$/m);
    // the finished Job the restore leaves out is named, with the restore's reason, never counted as lost
    expect(stdout).to.match(/absent from B as the restore said: batch\/Job\/[^/]+\/export-results: skipped by the restore: not restored: the Job had finished \(Complete\)/);
    expect(stdout).to.match(/^ {2}Job\s+1\s+0$/m);
    const work = /work folder (\S+)/.exec(stdout)?.[1];
    expect(work, 'the demo names its work folder').to.be.a('string');
    expect(existsSync(work!)).to.equal(false);
  });

  it('--schedule adds a ninth step: the real Pebble runs the service, which backs A up on the schedule and serves metrics', async function () {
    this.timeout(420_000);
    const run = await execa(process.execPath, ['--import', 'tsx', join(root, 'demo', 'main.ts'), '--quick', '--schedule'], { cwd: root, reject: false, timeout: 400_000, env: { TERM: 'dumb' } });
    const stdout = String(run.stdout);
    expect(run.exitCode, `${stdout}\n${String(run.stderr)}`).to.equal(0);
    expect(stdout).to.match(/^ ?9\/9 juju config kubeflow-upgrader backup-schedule="\* \* \* \* \*"/m);
    expect(stdout).to.match(/scheduled backup kf-\d{8}-\d{6}-[0-9a-f]{6} succeeded/);
    expect(stdout).to.match(/^ +kubeflow_upgrader_backup_attempts_total\{result="succeeded"\} 1$/m);
    expect(stdout).to.match(/unit status: active ".*last scheduled run succeeded at \S+ \(kf-/);
    expect(stdout.trimEnd().split('\n').at(-1)).to.equal('A and B hold the same user state');
  });

  it('a wrong flag exits 2 with one line of usage', async () => {
    const run = await execa(process.execPath, ['--import', 'tsx', join(root, 'demo', 'main.ts'), '--quik'], { cwd: root, reject: false });
    expect(run.exitCode).to.equal(2);
    expect(String(run.stderr).trim().split('\n')).to.have.length(1);
    expect(String(run.stderr)).to.match(/^demo: .*--quik.*; usage: npm run demo/);
  });
});
