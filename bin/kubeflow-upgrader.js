#!/usr/bin/env node
// Starts the kubeflow-upgrader CLI on Node 24. Under Node 24 it loads the TypeScript sources through tsx in this
// process; under any other Node (an older system node on PATH) it re-runs itself with the Node 24 that `npm ci`
// installs into node_modules (the `node` package), so `npx kubeflow-upgrader` works from a clean clone either way.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'src', 'cli', 'main.ts');
const major = Number(process.versions.node.split('.')[0]);

if (major === 24) {
  const { register } = await import(pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'esm', 'api', 'index.mjs')).href);
  register();
  await import(pathToFileURL(entry).href);
} else {
  const node24 = join(root, 'node_modules', '.bin', 'node');
  if (!existsSync(node24)) {
    process.stderr.write(`kubeflow-upgrader needs Node.js 24 (this is ${process.version}); run npm ci in ${root} first.\n`);
    process.exit(1);
  }
  const result = spawnSync(node24, ['--import', 'tsx', entry, ...process.argv.slice(2)], { stdio: 'inherit', cwd: process.cwd() });
  if (result.error) {
    process.stderr.write(`kubeflow-upgrader: could not start Node.js 24: ${result.error.message}\n`);
    process.exit(1);
  }
  process.exit(result.status ?? 1);
}
