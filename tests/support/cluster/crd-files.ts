// Upstream: kubernetes/kubernetes staging/src/k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1/types.go (the
// CustomResourceDefinition the files hold); nothing else of a server is simulated here.
// Real CustomResourceDefinition files, read from a directory: every `.yaml`/`.yml`/`.json` file, each document a CRD.
// When two files define the same CRD (a second copy another charm ships), the file named `<name>.yaml` wins, as the
// charm that owns the kind applies it.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../src/kube/types.ts';

export async function readCrdDir(dir: string): Promise<KubeObject[]> {
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
