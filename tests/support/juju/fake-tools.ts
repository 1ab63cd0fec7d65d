// Writes one small executable per hook tool into a folder meant for the front of PATH: the same bash client
// (fake-tool-client.bash) under each tool's name. It talks to the dispatch's fake unit agent (tool-server.ts), named by
// FAKE_JUJU_TOOLS in the environment.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The hook tools the charm calls (upstream: github.com/juju/juju), named as juju/juju internal/worker/uniter/runner/jujuc registers them (network-get: network-get.go). */
export const HOOK_TOOLS = [
  'action-get',
  'action-set',
  'action-fail',
  'action-log',
  'relation-ids',
  'relation-list',
  'relation-get',
  'relation-set',
  'config-get',
  'is-leader',
  'status-set',
  'application-version-set',
  'juju-log',
  'secret-get',
  'state-get',
  'state-set',
  'network-get',
] as const;

const here = dirname(fileURLToPath(import.meta.url));

/** Installs the fake tools (once per folder) and returns the folder. */
export function installFakeTools(binDir: string): string {
  mkdirSync(binDir, { recursive: true });
  const client = readFileSync(join(here, 'fake-tool-client.bash'), 'utf8');
  for (const tool of HOOK_TOOLS) {
    const path = join(binDir, tool);
    if (existsSync(path)) continue;
    // Written beside and renamed: a concurrent installer never leaves a half-written tool on PATH.
    writeFileSync(`${path}.${process.pid}`, client, { mode: 0o755 });
    chmodSync(`${path}.${process.pid}`, 0o755);
    renameSync(`${path}.${process.pid}`, path);
  }
  return binDir;
}
