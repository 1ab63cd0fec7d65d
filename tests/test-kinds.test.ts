// The test files' names say whether they start processes (scripts/test-kinds.ts reads it from their imports), so that
// `npm run test:fast` runs exactly the ones that start none. The classifier is checked on a small tree of its own,
// then on this repository.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { classifyTests, misnamed } from '../scripts/test-kinds.ts';
import { allowProcessesAndSockets, forbidProcessesAndSockets, isForbidding } from './support/fast-tier.ts';

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
    // sockets: a client connect is one, node:net for its address checks is none, and a file may declare one no import shows
    write('tests/support/dialer.ts', `${importLine('net', 'node:net')}export const dial = () => net.${'connect'}(1, '127.0.0.1');\n`);
    write('tests/support/addresses.ts', `${importLine('{ isIPv4 }', 'node:net')}export const v4 = (s: string) => isIPv4(s);\n`);
    write('tests/a/dials.process.test.ts', importLine('{ dial }', '../support/dialer.ts'));
    write('tests/a/addresses.test.ts', importLine('{ v4 }', '../support/addresses.ts'));
    write('tests/a/declared.process.test.ts', `${['//', 'test-kind:', 'process'].join(' ')} (an SDK client connects)\n`);
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

  it('counts a socket the test opens, or says it opens, and not node:net used for its address checks', function () {
    const kinds = Object.fromEntries(classifyTests(tree).map((k) => [k.file, k]));
    expect(kinds['tests/a/dials.process.test.ts']!.via).to.deep.equal(['tests/a/dials.process.test.ts', 'tests/support/dialer.ts', 'a socket']);
    expect(kinds['tests/a/declared.process.test.ts']!.via).to.deep.equal(['tests/a/declared.process.test.ts', 'declared (// test-kind: process)']);
    expect(kinds['tests/a/addresses.test.ts']!.startsProcesses).to.equal(false);
  });

  it('the fast tier\'s root hook refuses a child process, a connect and a listen while it holds', async function () {
    // loaded by name at run time, so that this file's imports start nothing (it is a fast test itself)
    const childProcess = process.getBuiltinModule('node:child_process');
    const { Socket, Server } = await import('node:net');
    const held = isForbidding();
    if (!held) forbidProcessesAndSockets();
    try {
      expect(() => childProcess.spawn('true')).to.throw(/the fast tier \(npm run test:fast\) starts no process and opens no socket.*child_process\.spawn true/);
      expect(() => childProcess.execFileSync('true')).to.throw(/child_process\.execFileSync/);
      expect(() => new Socket().connect(1, '127.0.0.1')).to.throw(/a socket's connect/);
      expect(() => new Server().listen(0)).to.throw(/a server's listen/);
    } finally {
      if (!held) allowProcessesAndSockets();
    }
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
