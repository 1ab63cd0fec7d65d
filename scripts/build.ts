// Builds the unpacked charm (what Juju would run): dispatch, the YAML files, the bundled code and bin/node linked to
// this project's Node.js 24. `npm run build` writes build/charm/; tests call buildCharm() when the build is stale.
import { build, type Plugin } from 'esbuild';
import { builtinModules, createRequire } from 'node:module';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESTORE_GATEWAY_FILE, restoreGatewayBuildOptions } from '../src/volumes/restic/restore-gateway-bundle.ts';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const defaultCharmDir = join(projectRoot, 'build', 'charm');
export const CHARM_FILES = ['metadata.yaml', 'actions.yaml', 'config.yaml'] as const;

export function charmVersion(): string {
  return (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Node 24's own binary (npm's `node` package), never a launcher script. */
export function nodeBinary(): string {
  return realpathSync(process.execPath);
}

export interface BuildOptions {
  outDir?: string;
  /** minify the bundle (smaller, faster to load; stack traces less readable) */
  minify?: boolean;
}

/**
 * Packages without an exports map that esbuild should take in their ES build. For Node, esbuild reads `main` before
 * `module`: @smithy/signature-v4's CommonJS build would require() whole @smithy/core submodules (~140 kB minified)
 * into the status's bucket probe, where its ES build brings ~20 kB.
 */
const ES_BUILD_OF = ['@smithy/signature-v4'];

export const preferEsBuilds: Plugin = {
  name: 'prefer-es-builds',
  setup(esbuild) {
    const require = createRequire(import.meta.url);
    const filter = new RegExp(`^(${ES_BUILD_OF.map((name) => name.replace(/[/.]/g, '\\$&')).join('|')})$`);
    esbuild.onResolve({ filter }, (args) => {
      const manifest = require.resolve(`${args.path}/package.json`, { paths: [args.resolveDir] });
      const { module } = JSON.parse(readFileSync(manifest, 'utf8')) as { module?: string };
      return module ? { path: join(dirname(manifest), module) } : undefined;
    });
  },
};

/**
 * Modules the charm imports dynamically that get a bundle of their own, with no chunk shared with the rest. esbuild's
 * code splitting puts what two dynamic imports both reach into one shared chunk: the status's bucket probe and the AWS
 * SDK both use @smithy/core, so the probe would load the SDK's share of it, and with it node:http2, zlib and undici
 * (~100 ms per update-status). Bundled alone, the probe is ~25 kB. Keyed by output name.
 */
const STANDALONE: Record<string, string> = { 'bucket-probe': join(projectRoot, 'src', 'store', 'bucket-probe.ts') };

/** In the main bundle, a dynamic import of a standalone module becomes an import of its own bundle beside the chunks. */
const standaloneImports: Plugin = {
  name: 'standalone-imports',
  setup(esbuild) {
    esbuild.onResolve({ filter: /\.ts$/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const target = resolve(args.resolveDir, args.path);
      const name = Object.keys(STANDALONE).find((key) => STANDALONE[key] === target);
      return name ? { path: `./${name}.mjs`, external: true } : undefined;
    });
  },
};

/**
 * Node's built-in modules are loaded with require() instead of an ES import. An ES import of a built-in makes Node
 * read every export of it first, getters included: `node:crypto` then loads all of WebCrypto (a dozen internal
 * crypto modules), `node:fs` its promises API with readline and the REPL history. Compiling those internals was a
 * sixth of an update-status's CPU. Through require() each export is read only where the code uses it.
 */
export const builtinsThroughRequire: Plugin = {
  name: 'builtins-through-require',
  setup(esbuild) {
    const builtins = new Set(builtinModules);
    esbuild.onResolve({ filter: /^[a-z_/:0-9]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!builtins.has(name) || args.kind === 'require-call') return undefined;
      return { path: `node:${name}`, namespace: 'builtin-through-require' };
    });
    esbuild.onLoad({ filter: /.*/, namespace: 'builtin-through-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/** Where @kubernetes/client-node's own modules are, as an importer's path says. */
const KUBE_CLIENT_DIST = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]/;

/**
 * @kubernetes/client-node's modules are taken as free of side effects (its package.json does not say so), so that only
 * what the charm uses is bundled. The charm imports KubeConfig alone, and its barrel re-exports every generated API
 * and model, watch, exec, cp, informers...: ~460 kB of the bundle that was parsed, evaluated and held in the heap by
 * every process (~4 MiB of heap, docs/performance.md). Its one module with an effect, the polyfill of `File` for Node
 * 18 (kubernetes-client/javascript src/polyfill.ts), keeps it.
 */
export const kubeClientWithoutUnusedModules: Plugin = {
  name: 'kube-client-without-unused-modules',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^(@kubernetes\/client-node$|\.)/ }, async (args) => {
      if (args.pluginData === KUBE_CLIENT_DIST) return undefined;
      if (args.path.startsWith('.') && !KUBE_CLIENT_DIST.test(args.importer)) return undefined;
      const found = await esbuild.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: KUBE_CLIENT_DIST });
      if (found.errors.length > 0 || !KUBE_CLIENT_DIST.test(found.path)) return undefined;
      return { path: found.path, sideEffects: /[\\/]polyfill\.js$/.test(found.path) };
    });
  },
};

/**
 * undici, as @kubernetes/client-node imports it, loaded on first use. KubeConfig imports its Agent and ProxyAgent for
 * the fetch-based generated API clients and their proxies, which the charm never makes (src/kube/transport.ts speaks
 * node:https with applyToHTTPSOptions); evaluated at load, undici's ~720 kB cost every process about 3 MiB of heap and
 * parse memory (docs/performance.md). What client-node imports keeps its behaviour: each name builds the real one
 * when called.
 */
export const kubeClientUndiciOnDemand: Plugin = {
  name: 'kube-client-undici-on-demand',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^undici$/ }, (args) =>
      KUBE_CLIENT_DIST.test(args.importer) && args.kind === 'import-statement'
        ? { path: 'undici', namespace: 'undici-on-demand', pluginData: args.resolveDir }
        : undefined,
    );
    esbuild.onLoad({ filter: /.*/, namespace: 'undici-on-demand' }, (args) => ({
      resolveDir: args.pluginData as string,
      loader: 'js',
      contents: [
        "let loaded; const undici = () => (loaded ??= require('undici'));",
        'export class Agent { constructor(options) { return new (undici().Agent)(options); } }',
        'export class ProxyAgent { constructor(options) { return new (undici().ProxyAgent)(options); } }',
        'export function fetch(...args) { return undici().fetch(...args); }',
      ].join('\n'),
    }));
  },
};

/**
 * The plugins of every bundle of the product's code: the charm's (below) and the bench's measured clients
 * (bench/support/bundle.ts), so the bench measures the process the charm runs.
 */
export const PRODUCT_PLUGINS: readonly Plugin[] = [kubeClientUndiciOnDemand, kubeClientWithoutUnusedModules, preferEsBuilds, builtinsThroughRequire];

export async function buildCharm(options: BuildOptions = {}): Promise<string> {
  const outDir = resolve(options.outDir ?? defaultCharmDir);
  // Build beside and swap in, so a concurrent reader never sees half a charm.
  const staging = `${outDir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, 'bin'), { recursive: true });
  await build({
    entryPoints: { charm: join(projectRoot, 'src', 'charm', 'entry.ts') },
    outdir: join(staging, 'lib'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    minify: options.minify ?? true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    define: { __CHARM_VERSION__: JSON.stringify(charmVersion()) },
    plugins: [standaloneImports, ...PRODUCT_PLUGINS],
    // CommonJS dependencies inside an ES module bundle still call require() for Node built-ins.
    banner: { js: "import{createRequire as __kfuCreateRequire}from'node:module';const require=__kfuCreateRequire(import.meta.url);" },
  });
  await build({
    entryPoints: STANDALONE,
    outdir: join(staging, 'lib'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    minify: options.minify ?? true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [preferEsBuilds, builtinsThroughRequire],
    banner: { js: "import{createRequire as __kfuCreateRequire}from'node:module';const require=__kfuCreateRequire(import.meta.url);" },
  });
  // The workload container's service: one file, which the charm pushes into the container through Pebble.
  await build({
    entryPoints: { service: join(projectRoot, 'src', 'service', 'main.ts') },
    outdir: join(staging, 'lib'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    minify: options.minify ?? true,
    legalComments: 'none',
    logLevel: 'warning',
    define: { __CHARM_VERSION__: JSON.stringify(charmVersion()) },
    plugins: [...PRODUCT_PLUGINS],
    banner: { js: "import{createRequire as __kfuCreateRequire}from'node:module';const require=__kfuCreateRequire(import.meta.url);" },
  });
  // The restore gateway's code, which the charm hands to the gateway's Pod in a ConfigMap
  // (src/volumes/restic/restore-gateway-bundle.ts reads it beside its own chunk)
  await build({ ...restoreGatewayBuildOptions(), outfile: join(staging, 'lib', RESTORE_GATEWAY_FILE), minify: options.minify ?? true });
  chmodSync(join(staging, 'lib', 'charm.mjs'), 0o755);
  copyFileSync(join(projectRoot, 'charm', 'dispatch'), join(staging, 'dispatch'));
  chmodSync(join(staging, 'dispatch'), 0o755);
  for (const file of CHARM_FILES) copyFileSync(join(projectRoot, file), join(staging, file));
  symlinkSync(nodeBinary(), join(staging, 'bin', 'node'));
  writeFileSync(join(staging, '.build-stamp'), sourceStamp());
  const old = `${outDir}.old-${process.pid}`;
  if (existsSync(outDir)) renameSync(outDir, old);
  renameSync(staging, outDir);
  rmSync(old, { recursive: true, force: true });
  return outDir;
}

/** Everything the charm is built from, as sizes and mtimes: a changed source means a stale build. */
export function sourceStamp(): string {
  const entries: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const name of readdirNames(dir)) {
      const path = join(dir, name);
      const stat = statOf(path);
      if (stat.isDirectory()) walk(path);
      else entries.push(`${path}:${stat.size}:${stat.mtimeMs}`);
    }
  };
  walk(join(projectRoot, 'src'));
  for (const file of [...CHARM_FILES, 'charm/dispatch', 'scripts/build.ts', 'package-lock.json']) {
    const path = join(projectRoot, file);
    if (existsSync(path)) entries.push(`${path}:${statOf(path).size}:${statOf(path).mtimeMs}`);
  }
  return entries.sort().join('\n');
}


function readdirNames(dir: string): string[] {
  return readdirSync(dir);
}
function statOf(path: string): Stats {
  return statSync(path);
}

export function isBuildFresh(outDir = defaultCharmDir): boolean {
  const stamp = join(outDir, '.build-stamp');
  return existsSync(stamp) && existsSync(join(outDir, 'lib', 'charm.mjs')) && readFileSync(stamp, 'utf8') === sourceStamp();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = await buildCharm();
  console.log(`built the charm into ${dir}`);
}
