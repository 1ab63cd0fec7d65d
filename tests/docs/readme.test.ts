// The README is what a new user reads first: its opening block runs the demo and the tests (.ci/run runs "the README's
// two lines"), no table cell is a wall of text (detail lives in docs/), and every document it links exists.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';

const ROOT = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const MAX_CELL = 300;

describe('README.md: short, and pointing into docs/', () => {
  it('opens with the two commands: the demo, then the tests', () => {
    const block = /```sh\n([^`]*)```/.exec(readme)?.[1]?.trim().split('\n');
    expect(block).to.deep.equal(['npm run setup && npm run demo', 'npm run setup && npm test']);
  });

  it(`has no table cell longer than ${MAX_CELL} characters`, () => {
    const long = readme.split('\n').filter((line) => line.startsWith('|'))
      .flatMap((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
      .filter((cell) => cell.length > MAX_CELL);
    expect(long.map((cell) => `${cell.length}: ${cell.slice(0, 60)}…`)).to.deep.equal([]);
  });

  it('links only documents that exist', () => {
    const links = [...readme.matchAll(/\]\(((?:docs\/)[^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(links).to.include('docs/operating.md');
    for (const link of links) expect(existsSync(join(ROOT, link)), link).to.equal(true);
  });

  it('lists every config option with config.yaml\'s type, in order', () => {
    const config = parseYaml(readFileSync(join(ROOT, 'config.yaml'), 'utf8')) as { options: Record<string, { type: string }> };
    const rowsOf = (text: string) => text.split('\n').map((line) => /^\| `([a-z0-9-]+)` \| (\w+) \|/.exec(line)).filter((m) => m && m[1]! in config.options).map((m) => [m![1], m![2]]);
    const expected = Object.entries(config.options).map(([name, option]) => [name, option.type]);
    expect(rowsOf(readme)).to.deep.equal(expected);
  });
});
