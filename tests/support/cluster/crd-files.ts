// Upstream: kubernetes/kubernetes staging/src/k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1/types.go (the
// CustomResourceDefinition the files hold); nothing else of a server is simulated here.
// Real CustomResourceDefinition files, read from a directory: every `.yaml`/`.yml`/`.json` file, each document a CRD.
// When two files define the same CRD (a second copy another charm ships), the file named `<name>.yaml` wins, as the
// charm that owns the kind applies it.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../src/kube/types.ts';

// Parsed once per directory content and process: the real files are megabytes of YAML (seconds to parse), and the
// release suite starts two clusters per release pair on the same folders. The key is the folder with each file's name,
// size and mtime, so a changed file is read again; each caller gets its own copy.
const parsed = new Map<string, Promise<KubeObject[]>>();

async function contentKey(dir: string): Promise<string | undefined> {
  try {
    const names = (await readdir(dir)).sort();
    const stats = await Promise.all(names.map(async (n) => { const st = await stat(join(dir, n)); return `${n}:${st.size}:${st.mtimeMs}`; }));
    return `${dir}\n${stats.join('\n')}`;
  } catch {
    return undefined;
  }
}

export async function readCrdDir(dir: string): Promise<KubeObject[]> {
  const key = await contentKey(dir);
  if (key === undefined) return parseCrdDir(dir);
  let crds = parsed.get(key);
  if (!crds) {
    crds = parseCrdDir(dir);
    parsed.set(key, crds);
    crds.catch(() => parsed.delete(key));
  }
  return structuredClone(await crds);
}

async function parseCrdDir(dir: string): Promise<KubeObject[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /\.(ya?ml|json)$/.test(n)).sort();
  } catch (error) {
    throw new Error(`Cannot read the CRD directory ${dir}: ${(error as Error).message}`);
  }
  if (names.length === 0) throw new Error(`The CRD directory ${dir} holds no .yaml, .yml or .json file.`);
  const chosen = new Map<string, { crd: KubeObject; exact: boolean }>();
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      const crd = doc.toJS({ maxAliasCount: -1 }) as KubeObject | null;
      if (!crd || crd.kind !== 'CustomResourceDefinition') continue;
      const crdName = crd.metadata?.name ?? '';
      const exact = basename(name).replace(/\.(ya?ml|json)$/, '') === crdName;
      const before = chosen.get(crdName);
      if (!before || (exact && !before.exact)) chosen.set(crdName, { crd: { ...crd, metadata: { name: crdName, ...(crd.metadata?.labels ? { labels: crd.metadata.labels } : {}) } }, exact });
    }
  }
  return [...chosen.values()].map((c) => c.crd);
}
