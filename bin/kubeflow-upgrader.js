#!/usr/bin/env node
// Starts the kubeflow-upgrader CLI on Node 24 with the engines' V8 heap flags and environment (src/node-flags.ts).
// Started that way already (a Node 24 with those flags and that environment), it loads the TypeScript sources through tsx in this process; otherwise (an
// older system node on PATH, or no flags) it re-runs itself with the Node 24 that `npm ci` installs into
// node_modules (the `node` package), so `npx kubeflow-upgrader` works from a clean clone either way.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'src', 'cli', 'main.ts');
const major = Number(process.versions.node.split('.')[0]);
// the same flags as src/node-flags.ts (a test checks that they agree); plain JavaScript here, so not imported
const ENGINE_NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=50'];
const ENGINE_ENV = { MALLOC_ARENA_MAX: '2' };

if (major === 24 && ENGINE_NODE_FLAGS.every((flag) => process.execArgv.includes(flag)) && Object.entries(ENGINE_ENV).every(([k, v]) => process.env[k] === v)) {
  const { register } = await import(pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'esm', 'api', 'index.mjs')).href);
  register();
  await import(pathToFileURL(entry).href);
} else {
  const node24 = major === 24 ? process.execPath : join(root, 'node_modules', '.bin', 'node');
  if (!existsSync(node24)) {
    process.stderr.write(`kubeflow-upgrader needs Node.js 24 (this is ${process.version}); run npm ci in ${root} first.\n`);
    process.exit(1);
  }
  // The relaunch runs this file again, which then registers tsx by its path under root: `--import tsx` would be
  // resolved from the user's current directory, where there is no tsx.
  const result = spawnSync(node24, [...ENGINE_NODE_FLAGS, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', cwd: process.cwd(), env: { ...process.env, ...ENGINE_ENV } });
  if (result.error) {
    process.stderr.write(`kubeflow-upgrader: could not start Node.js 24: ${result.error.message}\n`);
    process.exit(1);
  }
  process.exit(result.status ?? 1);
}
