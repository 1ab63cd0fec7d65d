// Runs the real CLI as a user would: bin/kubeflow-upgrader.js in its own process, with only the environment given.
import { execa } from 'execa';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
export const BIN = join(root, 'bin', 'kubeflow-upgrader.js');

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** `cwd`: the directory the user runs it from (the project root unless given). */
export async function runCli(args: string[], env: Record<string, string> = {}, cwd = root): Promise<CliRun> {
  const result = await execa(process.execPath, [BIN, ...args], {
    reject: false,
    cwd,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    timeout: 120_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}
