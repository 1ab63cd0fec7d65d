// Packs the built charm (build/charm) into ./kubeflow-upgrader.charm: a zip with dispatch, the YAML files,
// manifest.yaml, the bundle and a real Node.js 24 binary at bin/node, file modes kept.
import { createWriteStream, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import yazl from 'yazl';
import { defaultCharmDir, projectRoot } from './build.ts';

export const defaultCharmFile = join(projectRoot, 'kubeflow-upgrader.charm');

const ARCHITECTURES: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64el', s390x: 's390x' };

export function manifest(now = new Date()): string {
  const architecture = ARCHITECTURES[process.arch] ?? process.arch;
  return stringify({
    'charmcraft-version': 'kubeflow-upgrader scripts/pack.ts',
    'charmcraft-started-at': now.toISOString(),
    bases: [{ name: 'ubuntu', channel: '24.04', architectures: [architecture] }],
    analysis: { attributes: [{ name: 'language', result: 'javascript' }, { name: 'framework', result: 'unknown' }] },
  });
}

export interface PackOptions {
  charmDir?: string;
  output?: string;
  /** store bin/node without compression: a much faster pack for tests, a bigger file */
  storeRuntime?: boolean;
}

function filesOf(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue; // build stamp, compile cache
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesOf(path));
    else out.push(path);
  }
  return out.sort();
}

export async function packCharm(options: PackOptions = {}): Promise<string> {
  const charmDir = resolve(options.charmDir ?? defaultCharmDir);
  const output = resolve(options.output ?? defaultCharmFile);
  const zip = new yazl.ZipFile();
  const mtime = new Date();
  for (const path of filesOf(charmDir)) {
    const name = relative(charmDir, path);
    const real = realpathSync(path); // bin/node is a link to npm's Node 24: pack the binary itself
    const mode = statSync(real).mode & 0o777;
    zip.addFile(real, name, { mode: 0o100000 | mode, mtime, compress: !(options.storeRuntime && name === 'bin/node') });
  }
  zip.addBuffer(Buffer.from(manifest(mtime)), 'manifest.yaml', { mode: 0o100644, mtime });
  zip.end();
  await new Promise<void>((resolveDone, reject) => {
    const out = createWriteStream(output);
    out.on('close', () => resolveDone());
    out.on('error', reject);
    zip.outputStream.on('error', reject).pipe(out);
  });
  return output;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = await packCharm();
  console.log(`packed ${relative(process.cwd(), file)} (${(statSync(file).size / 1e6).toFixed(1)} MB)`);
}
