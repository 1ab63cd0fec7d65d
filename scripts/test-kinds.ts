// Which test files start processes or servers, read from the code rather than from a list someone has to keep.
// A test file starts them when it, or a module it imports from outside src/ (test support, the demo, the bench), spawns
// a child process (node:child_process, execa), listens on a socket (createServer: the embedded API server over TLS,
// s3rver and its proxies, the fake hook tools' agent) or opens one (node:net, tls, dgram, http, https, http2 called
// to connect, fetch of a URL); a file that opens one in a way no import shows (a library's client: the AWS SDK's) says
// so in a line `// test-kind: process (why)`. Whatever still gets through (a socket the product's code opens) the
// fast tier's root hook refuses while it runs (tests/support/fast-tier.ts). src/ is not followed: the product starts
// nothing on its own (its one child process, a hook tool, runs only under a real or fake Juju, which the support code
// starts).
// Such files are named `*.process.test.ts`; `npm run test:fast` runs the others. `node --import tsx
// scripts/test-kinds.ts` prints the counts and every file whose name says otherwise (exit 1 when there is one).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROCESS_SUFFIX = '.process.test.ts';

/** What in a module's own text starts a process or a server, or opens a socket. */
const STARTS = [
  { pattern: /from ['"](node:)?child_process['"]/, what: 'node:child_process' },
  { pattern: /from ['"]execa['"]/, what: 'execa' },
  { pattern: /\bcreateServer\(/, what: 'a listening server' },
  // a client socket, opened through Node's socket modules (node:net imported for isIP alone opens none)
  { pattern: /\b(?:net|tls|http|https|http2|dgram)\.(?:connect|createConnection|request|get|createSocket)\(/, what: 'a socket' },
  { pattern: /\bimport\s*\{[^}]*\b(?:connect|createConnection|request|get|createSocket)\b[^}]*\}\s*from\s*['"](?:node:)?(?:net|tls|http|https|http2|dgram)['"]/, what: 'a socket' },
  { pattern: /\bfetch\(\s*['"`]https?:/, what: 'a socket (fetch)' },
  // what no import shows (a library's client that connects, e.g. the AWS SDK's): the file says so in a line of its own
  { pattern: /^\/\/ test-kind: process\b/m, what: 'declared (// test-kind: process)' },
];

/**
 * Relative module specifiers: static imports and re-exports, and dynamic `import('./x.ts')`; not `import type` and
 * `export type`, which TypeScript erases (nor `import('./x.ts').T` in a type, which the type-only check below drops).
 */
const IMPORT = /^(?!\s*(?:import|export)\s+type\b).*?(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"](?!\)\.)/gm;

export interface TestKind {
  /** relative to the repository root, with forward slashes */
  file: string;
  startsProcesses: boolean;
  /** the chain of modules that leads to what starts one, the test file first */
  via: string[];
}

export function listTestFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.test.ts')) out.push(path);
    }
  };
  walk(join(root, 'tests'));
  return out.sort();
}

export function classifyTests(root: string): TestKind[] {
  const src = join(root, 'src') + sep;
  const starters = new Map<string, string | undefined>();
  const ownStart = (file: string): string | undefined => {
    if (!starters.has(file)) {
      const text = readFileSync(file, 'utf8');
      starters.set(file, STARTS.find((s) => s.pattern.test(text))?.what);
    }
    return starters.get(file);
  };
  const importsOf = new Map<string, string[]>();
  const imports = (file: string): string[] => {
    let found = importsOf.get(file);
    if (!found) {
      const text = readFileSync(file, 'utf8');
      found = [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), m[1]!))
        // a specifier in a string or comment that names no file (a fixture's text) is not an import
        .filter((path) => !path.startsWith(src) && !path.includes(`${sep}node_modules${sep}`) && path.endsWith('.ts') && existsSync(path));
      importsOf.set(file, found);
    }
    return found;
  };
  /** breadth first, so that the chain reported is a shortest one */
  const chainToStarter = (test: string): string[] | undefined => {
    const parent = new Map<string, string | undefined>([[test, undefined]]);
    const queue = [test];
    while (queue.length) {
      const file = queue.shift()!;
      const what = ownStart(file);
      if (what) {
        const chain = [`${what}`];
        for (let at: string | undefined = file; at; at = parent.get(at)) chain.unshift(relative(root, at).split(sep).join('/'));
        return chain;
      }
      for (const next of imports(file)) {
        if (!parent.has(next)) {
          parent.set(next, file);
          queue.push(next);
        }
      }
    }
    return undefined;
  };
  return listTestFiles(root).map((path) => {
    const via = chainToStarter(path);
    return { file: relative(root, path).split(sep).join('/'), startsProcesses: via !== undefined, via: via ?? [] };
  });
}

/** Files whose name does not say what they do, each with one sentence. */
export function misnamed(kinds: TestKind[]): string[] {
  return kinds.flatMap((k) => {
    const named = k.file.endsWith(PROCESS_SUFFIX);
    if (k.startsProcesses && !named) return [`${k.file} starts processes (${k.via.join(' → ')}) but is not named *${PROCESS_SUFFIX}`];
    if (!k.startsProcesses && named) return [`${k.file} is named *${PROCESS_SUFFIX} but starts no process: name it *.test.ts`];
    return [];
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const kinds = classifyTests(root);
  const processes = kinds.filter((k) => k.startsProcesses).length;
  console.log(`${kinds.length - processes} fast test files, ${processes} that start processes`);
  if (process.argv.includes('--list')) for (const k of kinds) console.log(`${k.startsProcesses ? 'process' : 'fast   '} ${k.file}${k.startsProcesses ? `  (${k.via.slice(1).join(' → ')})` : ''}`);
  const wrong = misnamed(kinds);
  for (const line of wrong) console.log(line);
  process.exitCode = wrong.length ? 1 : 0;
}
