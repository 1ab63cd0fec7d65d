// --help of the program and of every command, through the real process: every flag the parser accepts is documented,
// with the exit codes and examples.
import { expect } from 'chai';
import { tmpdir } from 'node:os';
import { commands } from '../../src/cli/run.ts';
import { optionsOf } from '../../src/cli/usage.ts';
import { runCli } from './run-cli.ts';

describe('kubeflow-upgrader --help', function () {
  this.timeout(60_000);

  it('starts from any directory, not only the project root (its relaunch finds tsx beside itself)', async () => {
    const { exitCode, stdout, stderr } = await runCli(['--help'], {}, tmpdir());
    expect(stderr).to.equal('');
    expect(exitCode).to.equal(0);
    expect(stdout).to.include('kubeflow-upgrader');
  });

  it('lists every command and the exit codes', async () => {
    const { exitCode, stdout } = await runCli(['--help']);
    expect(exitCode).to.equal(0);
    for (const command of commands) expect(stdout).to.match(new RegExp(`^  ${command.name}\\s`, 'm'));
    expect(stdout).to.include('Exit codes: 0 ok, 1 the operation failed (or found a problem), 2 usage error');
    expect(stdout).to.include('AWS_ACCESS_KEY_ID');
  });

  for (const command of commands) {
    it(`${command.name} --help documents every flag, its environment variables, exit codes and examples`, async () => {
      const { exitCode, stdout, stderr } = await runCli([command.name, '--help']);
      expect(exitCode, stderr).to.equal(0);
      expect(stdout).to.include(`Usage: ${command.synopsis}`);
      for (const [flag, spec] of Object.entries(optionsOf(command))) {
        expect(stdout, flag).to.include(`--${flag}`);
        if (spec.default) expect(stdout.replace(/\s+/g, ' '), flag).to.include(`(default: ${spec.default})`);
        for (const variable of spec.env ?? []) expect(stdout.replace(/\s+/g, ' ')).to.include(variable);
      }
      expect(stdout).to.match(/Exit codes:\n  0  .+\n  1  .+\n  2  usage error/);
      expect(stdout).to.match(/Examples:\n(  .+\n)*  kubeflow-upgrader /);
    });
  }
});
