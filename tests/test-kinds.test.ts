// The test files' names say whether they start processes (scripts/test-kinds.ts reads it from their imports), so that
// `npm run test:fast` runs exactly the ones that start none. The classifier is checked on a small tree of its own,
// then on this repository.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { classifyTests, misnamed } from '../scripts/test-kinds.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Written through a helper, so that this file's own text imports no process module.
const importLine = (names: string, module: string) => `import ${names} from '${module}';\n`;

describe('test file kinds (scripts/test-kinds.ts)', function () {
  let tree: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  };
  before(function () {
    tree = mkdtempSync(join(tmpdir(), 'test-kinds-'));
    write('tests/support/server.ts', `${importLine('{ spawn }', 'node:child_process')}export const start = () => spawn('true');\n`);
    const serve = ['createServer', '()'].join('');
    write('tests/support/listener.ts', `${importLine('* as http', 'node:http')}export const listen = () => http.${serve}.listen(0);\n`);
    write('tests/support/pure.ts', 'export const one = 1;\n');
    write('tests/support/helper.ts', `${importLine('{ start }', './server.ts')}export const go = start;\n`);
    write('tests/support/types-only.ts', `${importLine('type { Nothing }', './server.ts')}export const two = 2;\n`);
    write('src/runner.ts', `${importLine('{ execa }', 'execa')}export const run = () => execa('true');\n`);
    write('tests/a/through-helper.process.test.ts', importLine('{ go }', '../support/helper.ts'));
    write('tests/a/listens.process.test.ts', importLine('{ listen }', '../support/listener.ts'));
    write('tests/a/pure.test.ts', importLine('{ one }', '../support/pure.ts') + importLine('{ two }', '../support/types-only.ts'));
    write('tests/a/product-only.test.ts', importLine('{ run }', '../../src/runner.ts'));
    write('tests/a/lazy.test.ts', "export const later = () => import('../support/server.ts');\n");
    write('tests/a/named-wrong.process.test.ts', importLine('{ one }', '../support/pure.ts'));
  });
  after(function () {
    rmSync(tree, { recursive: true, force: true });
  });

  it('follows imports through test support to a child process or a listening server, and names the chain', function () {
    const kinds = Object.fromEntries(classifyTests(tree).map((k) => [k.file, k]));
    expect(kinds['tests/a/through-helper.process.test.ts']).to.deep.equal({
      file: 'tests/a/through-helper.process.test.ts', startsProcesses: true,
      via: ['tests/a/through-helper.process.test.ts', 'tests/support/helper.ts', 'tests/support/server.ts', 'node:child_process'],
    });
    expect(kinds['tests/a/listens.process.test.ts']!.via).to.deep.equal(['tests/a/listens.process.test.ts', 'tests/support/listener.ts', 'a listening server']);
    // a dynamic import counts: the test can start the process
    expect(kinds['tests/a/lazy.test.ts']!.startsProcesses).to.equal(true);
  });

  it('does not count type-only imports, nor the product code under src/', function () {
    const kinds = Object.fromEntries(classifyTests(tree).map((k) => [k.file, k]));
    expect(kinds['tests/a/pure.test.ts']!.startsProcesses).to.equal(false);
    expect(kinds['tests/a/product-only.test.ts']!.startsProcesses).to.equal(false);
  });

  it('names each file whose name says otherwise, both ways', function () {
    expect(misnamed(classifyTests(tree))).to.deep.equal([
      'tests/a/lazy.test.ts starts processes (tests/a/lazy.test.ts → tests/support/server.ts → node:child_process) but is not named *.process.test.ts',
      'tests/a/named-wrong.process.test.ts is named *.process.test.ts but starts no process: name it *.test.ts',
    ]);
  });

  it('finds every test file of this repository named for what it does', function () {
    expect(misnamed(classifyTests(root))).to.deep.equal([]);
  });
});
