// Usage errors: one line on stderr naming the problem and the usage, exit code 2, nothing on stdout.
import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli.ts';

const CREDS = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-not-a-real-secret' };

function expectUsage(run: { exitCode: number; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(run.exitCode, run.stderr).to.equal(2);
  expect(run.stdout).to.equal('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines, run.stderr).to.have.length(1);
  expect(lines[0]).to.match(pattern);
  expect(lines[0]).to.match(/usage: kubeflow-upgrader /);
}

describe('kubeflow-upgrader usage errors', function () {
  this.timeout(60_000);

  it('an unknown flag names the flag and the usage', async () => {
    expectUsage(await runCli(['backup', '--s3-url', 's3://b/p', '--volumes-please']), /^kubeflow-upgrader backup: unknown option --volumes-please; usage: kubeflow-upgrader backup /);
  });

  it('a flag without its value', async () => {
    expectUsage(await runCli(['list', '--s3-url']), /option --s3-url needs a value/);
  });

  it('an unknown command', async () => {
    expectUsage(await runCli(['backpu']), /unknown command "backpu"/);
  });

  it('a missing --s3-url', async () => {
    expectUsage(await runCli(['list'], CREDS), /--s3-url s3:\/\/<bucket>\/<prefix> is required/);
  });

  it('an --s3-url that is not s3://bucket/prefix', async () => {
    expectUsage(await runCli(['list', '--s3-url', 'https://bucket/x'], CREDS), /--s3-url must look like s3:\/\/<bucket>\/<prefix>/);
  });

  it('missing credentials name the environment variables, never a flag', async () => {
    expectUsage(await runCli(['list', '--s3-url', 's3://kubeflow-backups/x'], { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE' }), /set AWS_SECRET_ACCESS_KEY; usage/);
  });

  it('a bad conflict policy, and restore without a backup id', async () => {
    expectUsage(await runCli(['restore', 'latest', '--s3-url', 's3://kubeflow-backups/x', '--conflict-policy', 'merge'], CREDS), /--conflict-policy must be skip, update or fail, not "merge"/);
    expectUsage(await runCli(['restore', '--s3-url', 's3://kubeflow-backups/x'], CREDS), /Name the backup/);
  });

  it('a kubeconfig that does not exist, and an unreadable encryption key file, without leaking the secret', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'kfu-cli-')), 'nope.yaml');
    const run = await runCli(['backup', '--s3-url', 's3://kubeflow-backups/x', '--kubeconfig', missing], CREDS);
    expectUsage(run, /The kubeconfig .*nope\.yaml does not exist/);
    expectUsage(await runCli(['backup', '--s3-url', 's3://kubeflow-backups/x', '--encryption-key-file', missing], CREDS), /encryption key file .* cannot be read/);
    expect(run.stderr).not.to.include(CREDS.AWS_SECRET_ACCESS_KEY);
  });

  it('bad --mover-resources and --mover-start-timeout', async () => {
    expectUsage(await runCli(['backup', '--s3-url', 's3://kubeflow-backups/x', '--mover-resources', 'cpu=1,memory=lots'], CREDS), /^kubeflow-upgrader: backup: --mover-resources must be a list like cpu=1,memory=1Gi: "lots" is not a Kubernetes quantity/);
    expectUsage(await runCli(['restore', 'latest', '--s3-url', 's3://kubeflow-backups/x', '--mover-start-timeout', '0'], CREDS), /--mover-start-timeout/);
  });

  it('a bad --max-backup-age', async () => {
    expectUsage(await runCli(['check', '--s3-url', 's3://kubeflow-backups/x', '--max-backup-age', 'yesterday'], CREDS), /--max-backup-age "yesterday" is not a duration/);
  });
});
