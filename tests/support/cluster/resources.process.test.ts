// The embedded server's version priority against the cases of kubernetes/apimachinery pkg/version/helpers_test.go.
import { expect } from 'chai';
import { compareKubeVersions, groupVersions, type ResourceDef } from './resources.ts';

describe('kube-aware version priority (discovery order)', () => {
  // [a, b, a preferred over b], as upstream's TestCompareKubeAwareVersionStrings lists them
  const cases: Array<[string, string, boolean]> = [
    ['v1', 'v2', false], ['v2', 'v1', true], ['v10', 'v2', true], ['v1', 'v2alpha1', true], ['v1', 'v2beta1', true],
    ['v1alpha2', 'v1alpha1', true], ['v1beta1', 'v2alpha3', true], ['v1alpha10', 'v1alpha2', true],
    ['v1beta10', 'v1beta2', true], ['foo', 'v1beta2', false], ['bar', 'foo', true], ['version1', 'version2', true],
    ['version1', 'version10', true],
  ];
  for (const [a, b, preferred] of cases) {
    it(`${a} ${preferred ? 'before' : 'after'} ${b}`, () => {
      expect(compareKubeVersions(a, b) < 0).to.equal(preferred);
      expect(compareKubeVersions(b, a) < 0).to.equal(!preferred);
    });
  }

  it('orders non-kube-like versions by bytes, not by the locale', () => {
    // strings.Compare: '-' (0x2d) sorts before '0' and letters; a locale collation may ignore or reorder punctuation
    expect(['x-b', 'xa', 'x0'].sort(compareKubeVersions)).to.deep.equal(['x-b', 'x0', 'xa']);
  });

  it('sorts a group served by several CRDs by priority, never by listing order', () => {
    const def = (resource: string, versions: string[]): ResourceDef => ({
      group: 'example.org', resource, singular: resource, kind: resource, listKind: `${resource}List`, namespaced: true,
      shortNames: [], categories: [], versions: versions.map((name, i) => ({ name, served: true, storage: i === 0 })),
      statusSubresource: false, nameRule: 'subdomain', builtin: false, verbs: [],
    });
    const order = groupVersions([def('gadgets', ['v2alpha1', 'v1beta1']), def('gizmos', ['v1beta2', 'v1'])]).get('example.org');
    expect(order).to.deep.equal(['v1', 'v1beta2', 'v1beta1', 'v2alpha1']);
  });
});

describe('preferred version as the product reads it from the embedded server', function () {
  it('lists a CRD (as the backup does) at the highest-priority served version, not the first listed nor the stored one', async () => {
    const { startCluster } = await import('./index.ts');
    const { KubeClient } = await import('../../../src/kube/client.ts');
    const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.example.org' },
      spec: {
        group: 'example.org', scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
        versions: [
          { name: 'v1beta1', served: true, storage: true, schema },
          { name: 'v2alpha1', served: true, storage: false, schema },
          { name: 'v1', served: true, storage: false, schema },
        ],
      },
    };
    const c = await startCluster({ kubeflowCrds: false, controllers: false, crds: [crd] });
    const kube = await KubeClient.load({ kubeconfig: c.kubeconfigPath });
    try {
      c.api.create({ group: 'example.org', resource: 'gadgets' }, { apiVersion: 'example.org/v1beta1', kind: 'Gadget', metadata: { name: 'g', namespace: 'default' } });
      const gadgets = await kube.findByResource('example.org', 'gadgets');
      expect(gadgets).to.include({ version: 'v1', preferredVersion: 'v1' });
      expect(gadgets!.versions).to.deep.equal(['v1', 'v1beta1', 'v2alpha1']);
      const { items } = await kube.listAll(gadgets!);
      expect(items.map((o) => o.apiVersion)).to.deep.equal(['example.org/v1']);
    } finally {
      kube.close();
      await c.stop();
    }
  });
});
