// The oracle of the release tests, checked on the CRDs the clusters serve (the real CRD files of each release in the
// CI release suite, the release profiles in `npm test`): the kinds a backup of `from` meets as unserved in `to`, and
// the fields `to`'s schema drops, are exactly what RELEASE_CHANGES (tests/support/cluster/kubeflow/release-changes.ts, each fact
// with its upstream source) says for the pair. The CRDs decide, not the product.
import { join } from 'node:path';
import { expect } from 'chai';
import { readCrdDir } from '../support/cluster/crd-files.ts';
import { releaseCrds, type Release } from '../support/cluster/kubeflow/releases.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { changesBetween } from '../support/cluster/kubeflow/release-changes.ts';
import type { CrdSource } from '../restore/release-scenario.ts';

interface Version { name: string; served?: boolean; schema?: { openAPIV3Schema?: Node } }
interface Node { properties?: Record<string, Node>; items?: Node; 'x-kubernetes-preserve-unknown-fields'?: boolean }

/** served versions by CRD name, as the embedded cluster reads them */
async function served(source: CrdSource, release: Release): Promise<Map<string, Version[]>> {
  const crds: KubeObject[] = source.kind === 'files' ? await readCrdDir(join(source.dir, release)) : releaseCrds(release);
  return new Map(crds.map((crd) => [crd.metadata.name!, ((crd.spec as { versions: Version[] }).versions).filter((v) => v.served !== false)]));
}

/** does the schema keep this path: declared at every step, or under x-kubernetes-preserve-unknown-fields */
function keeps(schema: Node | undefined, path: string): boolean {
  let node = schema;
  for (const part of path.replace(/\[\d+\]/g, '.[]').split('.')) {
    if (!node) return false;
    if (part === '[]') { node = node.items; continue; }
    if (node.properties && part in node.properties) { node = node.properties[part]; continue; }
    return node['x-kubernetes-preserve-unknown-fields'] === true;
  }
  return node !== undefined;
}

export function upstreamFacts(crds: CrdSource, from: Release, to: Release): void {
  describe(`the ${crds.kind === 'files' ? 'real CRD files' : 'release profiles'} of ${from} and ${to} say what the ${from} → ${to} step expects`, () => {
    const changes = changesBetween(from, to);

    it(`the kinds ${from} serves and ${to} serves in no version are exactly the expected unserved kinds`, async () => {
      const [source, target] = await Promise.all([served(crds, from), served(crds, to)]);
      const gone = [...source.keys()].filter((name) => (source.get(name)!.length > 0) && !(target.get(name)?.length)).sort();
      const expected = changes.flatMap((c) => ('unserved' in c.change ? [c.change.unserved] : []));
      expect(gone).to.deep.equal(expected.map((u) => u.crd).sort());
      for (const u of expected) expect(source.get(u.crd)!.map((v) => v.name), `${from} serves ${u.crd}/${u.version}`).to.include(u.version);
    });

    it(`every version ${from} serves of a kind ${to} still serves is served by ${to} too (no version mapping is expected)`, async () => {
      const [source, target] = await Promise.all([served(crds, from), served(crds, to)]);
      const missing = [...source].flatMap(([name, versions]) => (target.get(name)?.length ? versions.filter((v) => !target.get(name)!.some((t) => t.name === v.name)).map((v) => `${name}/${v.name}`) : []));
      expect(missing).to.deep.equal([]);
    });

    it(`each expected dropped field: ${from}'s schema keeps it, ${to}'s does not`, async () => {
      const [source, target] = await Promise.all([served(crds, from), served(crds, to)]);
      for (const c of changes) {
        if (!('dropped' in c.change)) continue;
        const { crd, version, path } = c.change.dropped;
        const schema = (release: Map<string, Version[]>) => release.get(crd)?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
        expect(keeps(schema(source), path), `${from} keeps ${crd}/${version} ${path}`).to.equal(true);
        expect(keeps(schema(target), path), `${to} keeps ${crd}/${version} ${path}`).to.equal(false);
      }
    });
  });
}
