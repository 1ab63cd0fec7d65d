// The plugins every product bundle is built with (scripts/build.ts PRODUCT_PLUGINS): what they leave out of
// @kubernetes/client-node must not change what the charm uses of it. A bundle of KubeConfig is built with them and run
// in a Node process of its own (undici, once loaded, registers a global dispatcher that would outlive the test).
// Nothing upstream is simulated here; the facts about client-node are from kubernetes-client/javascript
// src/config.ts (KubeConfig imports undici's Agent and ProxyAgent for createDispatcher) and about undici from
// nodejs/undici lib/global.js (loading it registers Symbol.for('undici.globalDispatcher.2')).
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { PRODUCT_PLUGINS, projectRoot } from '../../scripts/build.ts';

const ENTRY = `
import { KubeConfig } from '@kubernetes/client-node';
const loaded = () => globalThis[Symbol.for('undici.globalDispatcher.2')] !== undefined;
const undiciAtLoad = loaded();
const config = new KubeConfig();
config.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caData: Buffer.from('not a real CA').toString('base64') }],
  users: [{ name: 'u', token: 'a-token' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
});
const options = {};
await config.applyToHTTPSOptions(options);
const undiciAfterHttpsOptions = loaded();
const dispatcher = config.createDispatcher(config.getCurrentCluster(), { ca: options.ca });
process.stdout.write(JSON.stringify({
  undiciAtLoad, undiciAfterHttpsOptions, undiciAfterDispatcher: loaded(),
  server: config.getCurrentCluster().server, ca: String(options.ca), authorization: options.headers?.Authorization,
  dispatches: typeof dispatcher?.dispatch, closes: typeof dispatcher?.close,
}));
`;

describe('scripts/build: the product bundles keep what the charm uses of @kubernetes/client-node', function () {
  let work: string;
  before(() => (work = mkdtempSync(join(tmpdir(), 'product-bundle-'))));
  after(() => rmSync(work, { recursive: true, force: true }));

  async function bundle(name: string, plugins: typeof PRODUCT_PLUGINS): Promise<string> {
    const outfile = join(work, `${name}.mjs`);
    await build({
      stdin: { contents: ENTRY, resolveDir: projectRoot, loader: 'js', sourcefile: 'entry.mjs' },
      outfile, bundle: true, format: 'esm', platform: 'node', target: 'node24', logLevel: 'silent', plugins: [...plugins],
      banner: { js: "import{createRequire as __kfuCreateRequire}from'node:module';const require=__kfuCreateRequire(import.meta.url);" },
    });
    return outfile;
  }

  it('KubeConfig reads a config and gives TLS options as before; undici loads only when a dispatcher is made', async () => {
    const plain = await bundle('plain', []);
    const product = await bundle('product', PRODUCT_PLUGINS);
    const run = (file: string) => JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8' })) as Record<string, unknown>;
    const before = run(plain);
    const after = run(product);
    expect(before.undiciAtLoad).to.equal(true);
    expect(after).to.deep.equal({ ...before, undiciAtLoad: false, undiciAfterHttpsOptions: false });
    expect(after).to.include({ server: 'https://127.0.0.1:6443', ca: 'not a real CA', authorization: 'Bearer a-token', dispatches: 'function', closes: 'function', undiciAfterDispatcher: true });
    // the generated API and the rest of the barrel are left out
    expect(statSync(product).size).to.be.below(statSync(plain).size * 0.7);
  });
});
