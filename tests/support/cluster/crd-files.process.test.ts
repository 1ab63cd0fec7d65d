// Upstream: the CRD files of Charmed Kubeflow's charms (kubernetes/kubernetes apiextensions-apiserver v1 types).
// `--crds DIR`: real CRD files read from a directory — every document a CRD, and of two copies of one CRD the file
// named after it wins (the charm that owns the kind); a directory without CRD files is one sentence.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { readCrdDir } from './crd-files.ts';
import { startCluster } from './index.ts';

const crdYaml = (versions: string[], extra = '') => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: authorizationpolicies.security.istio.io
  annotations: { helm.sh/resource-policy: keep }
spec:
  group: security.istio.io
  scope: Namespaced
  names: { kind: AuthorizationPolicy, plural: authorizationpolicies, listKind: AuthorizationPolicyList, singular: authorizationpolicy }
  versions:
${versions.map((v, i) => `  - name: ${v}
    served: true
    storage: ${i === 0}
    schema:
      openAPIV3Schema: { type: object, properties: { spec: { type: object, properties: { action: { type: string, enum: [ALLOW, DENY] } } } } }
`).join('')}${extra}`;

describe('real CRD files from a directory (--crds DIR)', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'crd-files-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prefers the file named after the CRD over a second copy another charm ships', async () => {
    writeFileSync(join(dir, 'authorizationpolicies.security.istio.io.kubeflow-profiles-charm.yaml'), crdYaml(['v1beta1']));
    writeFileSync(join(dir, 'authorizationpolicies.security.istio.io.yaml'), crdYaml(['v1', 'v1beta1']));
    const crds = await readCrdDir(dir);
    expect(crds.map((c) => (c.spec as { versions: { name: string }[] }).versions.map((v) => v.name))).to.deep.equal([['v1', 'v1beta1']]);
  });

  it('serves them with their schemas: an enum the file declares is enforced, an unknown field pruned', async () => {
    writeFileSync(join(dir, 'authorizationpolicies.security.istio.io.yaml'), crdYaml(['v1', 'v1beta1']));
    const c = await startCluster({ crdDir: dir, controllers: false });
    try {
      const ref = { group: 'security.istio.io', resource: 'authorizationpolicies' };
      const made = c.cluster.create(ref, { apiVersion: 'security.istio.io/v1', kind: 'AuthorizationPolicy', metadata: { name: 'a', namespace: 'default' }, spec: { action: 'ALLOW', extra: 1 } });
      expect(made.spec).to.deep.equal({ action: 'ALLOW' });
      expect(() => c.cluster.create(ref, { apiVersion: 'security.istio.io/v1', kind: 'AuthorizationPolicy', metadata: { name: 'b', namespace: 'default' }, spec: { action: 'MAYBE' } }))
        .to.throw('spec.action: Unsupported value: "MAYBE": supported values: "ALLOW", "DENY"');
    } finally {
      await c.stop();
    }
  });

  it('a directory without CRD files is one sentence', async () => {
    const error = await readCrdDir(dir).then(() => undefined, (e: Error) => e);
    expect(error?.message).to.equal(`The CRD directory ${dir} holds no .yaml, .yml or .json file.`);
  });
});
