// Writes one small executable per hook tool into a folder meant for the front of PATH.
import { transformSync } from 'esbuild';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
] as const;

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Installs the fake tools (once per folder) and returns the folder. hook-tool.ts is compiled to plain JavaScript
 * first: Node's type stripping would add ~100 ms to every call, and a hook makes several.
 */
export function installFakeTools(binDir: string): string {
  mkdirSync(binDir, { recursive: true });
  const node = realpathSync(process.execPath);
  const script = join(binDir, 'hook-tool.mjs');
  if (!existsSync(script)) {
    const source = readFileSync(join(here, 'hook-tool.ts'), 'utf8');
    writeFileSync(script, transformSync(source, { loader: 'ts', format: 'esm', target: 'node24' }).code);
  }
  for (const tool of HOOK_TOOLS) {
    const path = join(binDir, tool);
    if (existsSync(path)) continue;
    writeFileSync(path, `#!/bin/sh\nexec '${node}' '${script}' ${tool} "$@"\n`);
    chmodSync(path, 0o755);
  }
  return binDir;
}
