// Runs the machine's rclone (Debian's) with a remote defined only by environment variables, as the Jobs' containers
// get it, so a test sees what the real tool does with the charm's settings.
// (upstream: rclone/rclone fs/config/configmap, which reads RCLONE_CONFIG_<REMOTE>_<OPTION> variables)
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RcloneRun {
  stdout: string;
  stderr: string;
}

/**
 * `rclone <args>` with exactly `env` (plus PATH and a fresh HOME): nothing of the test process leaks in. AWS_CA_BUNDLE
 * in particular would make rclone's S3 backend refuse to start. `httpProxy` sends its requests through a proxy, for
 * names Go's resolver cannot look up (`*.localhost`).
 */
export async function runRclone(env: Record<string, string>, args: string[], options: { httpProxy?: string } = {}): Promise<RcloneRun> {
  const home = mkdtempSync(join(tmpdir(), 'rclone-home-'));
  try {
    const { stdout, stderr } = await run('rclone', ['--retries', '1', '--low-level-retries', '1', ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...(options.httpProxy ? { HTTP_PROXY: options.httpProxy } : {}), ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { stdout, stderr };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
