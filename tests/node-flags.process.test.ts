import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../src/node-flags.ts';

const root = join(import.meta.dirname, '..');

describe('the engines’ V8 heap flags and environment', () => {
  it('are the ones charm/dispatch starts bin/node with for actions, and the CLI launcher re-executes with', () => {
    const dispatch = readFileSync(join(root, 'charm', 'dispatch'), 'utf8');
    const lines = dispatch.split('\n');
    // actions (the engines) start with the flags; hooks, which run no engine, start without them
    expect(lines).to.include(`  actions/*) exec ./bin/node ${ENGINE_NODE_FLAGS.join(' ')} ./lib/charm.mjs ;;`);
    expect(lines.filter((line) => line.startsWith('exec '))).to.deep.equal(['exec ./bin/node ./lib/charm.mjs']);
    for (const [name, value] of Object.entries(ENGINE_ENV)) expect(dispatch.split('\n')).to.include(`export ${name}=${value}`);
    const launcher = readFileSync(join(root, 'bin', 'kubeflow-upgrader.js'), 'utf8');
    expect(launcher).to.include(`const ENGINE_ENV = { ${Object.entries(ENGINE_ENV).map(([k, v]) => `${k}: '${v}'`).join(', ')} };`);
    expect(launcher).to.include(`const ENGINE_NODE_FLAGS = ${JSON.stringify(ENGINE_NODE_FLAGS).replaceAll('"', "'").replaceAll(',', ', ')};`);
  });

  it('are accepted by this Node 24 and keep the young generation small where the default lets it grow', async () => {
    // churns through short-lived objects the way a backup does with pages, and reports the largest new space seen
    const churn = `const v8 = require('v8'); let max = 0; let keep;
      for (let i = 0; i < 300; i++) { keep = Array.from({ length: 20000 }, (_, j) => ({ j, s: 'x' + j }));
        max = Math.max(max, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size); }
      process.stdout.write(String(max));`;
    const flagged = Number((await execa(process.execPath, [...ENGINE_NODE_FLAGS, '-e', churn])).stdout);
    const plain = Number((await execa(process.execPath, ['-e', churn])).stdout);
    // a few 4 MiB semi-spaces at most (measured: ~10–13 MiB), where V8's default grew to 128 MiB under the same churn
    expect(flagged).to.be.within(1, 16 * 1024 * 1024);
    expect(plain).to.be.above(4 * flagged);
  });
});
