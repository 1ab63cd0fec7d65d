// The restore gateway's code as its ConfigMap carries it: one ES module bundle of ./redirect-gateway/main.ts. The built
// charm carries it as lib/restic-gateway.mjs beside its own chunks (scripts/build.ts); run from the TypeScript sources
// (the CLI through tsx, the tests), it is bundled here by esbuild, which tsx itself depends on.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const RESTORE_GATEWAY_FILE = 'restic-gateway.mjs';

/** esbuild's options for the bundle, shared with scripts/build.ts so that both build the same file. */
export function restoreGatewayBuildOptions(): Record<string, unknown> {
  return {
    entryPoints: [fileURLToPath(new URL('./redirect-gateway/main.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // the ES builds of @smithy's packages where they have one: their CommonJS builds pull in more of @smithy/core
    mainFields: ['module', 'main'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    // CommonJS dependencies inside an ES module bundle still call require() for Node built-ins
    banner: { js: "import{createRequire as __kfuCreateRequire}from'node:module';const require=__kfuCreateRequire(import.meta.url);" },
  };
}

let bundled: Promise<string> | undefined;

export function restoreGatewayBundle(): Promise<string> {
  bundled ??= readFile(new URL(`./${RESTORE_GATEWAY_FILE}`, import.meta.url), 'utf8').catch(async () => {
    // not a built charm: the sources are here, and so is esbuild (a name in a variable, so that the charm's own
    // bundle neither includes nor resolves it)
    const name = 'esbuild';
    const { build } = (await import(name)) as typeof import('esbuild');
    const result = await build({ ...restoreGatewayBuildOptions(), write: false });
    return result.outputFiles[0]!.text;
  });
  bundled.catch(() => { bundled = undefined; });
  return bundled;
}
