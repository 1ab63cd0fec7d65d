// The measured clients run as an esbuild bundle built like the charm's (scripts/build.ts: bundle, ESM, minify,
// node24, the same plugins), so their RSS and start-up are those of the product as shipped, not of tsx compiling
// TypeScript at load.
import { build, type Plugin } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const built = new Map<string, Promise<string>>();

/**
 * Builds bench/support/client.ts into .bench/client.mjs once per process; resolves to its path. `tree` builds the
 * client of another checkout of this repository instead (bench/alternate.ts: the code before a change), into
 * .bench/client-<label>.mjs.
 */
export function clientBundle(tree?: { dir: string; label: string }): Promise<string> {
  const key = tree?.label ?? '';
  let bundle = built.get(key);
  if (!bundle) built.set(key, (bundle = buildClient(tree)));
  return bundle;
}

async function buildClient(tree?: { dir: string; label: string }): Promise<string> {
  const outDir = join(root, '.bench');
  mkdirSync(outDir, { recursive: true });
  const outfile = join(outDir, tree ? `client-${tree.label}.mjs` : 'client.mjs');
  await build({
    // the plugins the charm of that tree is built with; a tree from before scripts/build.ts shared them had none here
    plugins: await productPlugins(tree?.dir ?? root),
    entryPoints: [join(tree?.dir ?? root, 'bench', 'support', 'client.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    // KFU_BENCH_UNMINIFIED=1 keeps the functions' names, for a CPU profile of a client (never for reported figures)
    minify: !process.env.KFU_BENCH_UNMINIFIED,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    // the same shim as the charm: CommonJS dependencies inside an ES module bundle still require() built-ins
    banner: { js: "import{createRequire as __kfuCreateRequire}from'node:module';const require=__kfuCreateRequire(import.meta.url);" },
  });
  return outfile;
}

async function productPlugins(dir: string): Promise<Plugin[]> {
  const script = (await import(pathToFileURL(join(dir, 'scripts', 'build.ts')).href)) as { PRODUCT_PLUGINS?: readonly Plugin[] };
  return [...(script.PRODUCT_PLUGINS ?? [])];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await clientBundle()}\n`);
}
