import { expect } from 'chai';
import fc from 'fast-check';
import { itemPaths, parseItemPath, SEALED_ROOT } from '../../src/archive/paths.ts';
import { ROLEBINDINGS, SECRETS, colonRbac, secret } from './sample-objects.ts';

const reason = (path: string) => {
  const parsed = parseItemPath(path);
  return parsed.ok ? 'ok' : parsed.reason;
};

describe('archive paths', () => {
  it('writes and reads names with ":" and other characters Kubernetes allows in RBAC names', () => {
    const { binding } = colonRbac('alice');
    const paths = itemPaths(ROLEBINDINGS, binding);
    expect(paths).to.deep.equal({
      unversioned: 'resources/rolebindings.rbac.authorization.k8s.io/namespaces/alice/system:image-pullers.json',
      preferred: 'resources/rolebindings.rbac.authorization.k8s.io/v1-preferredversion/namespaces/alice/system:image-pullers.json',
    });
    expect(parseItemPath(paths.unversioned)).to.deep.equal({
      ok: true,
      item: { path: paths.unversioned, root: 'resources', resource: 'rolebindings', group: 'rbac.authorization.k8s.io', preferredVersion: undefined, otherVersion: undefined, namespace: 'alice', name: 'system:image-pullers' },
    });
    for (const name of ['system:controller:bootstrap-signer', 'a b', 'café ☕', '...']) {
      expect(reason(`resources/roles.rbac.authorization.k8s.io/namespaces/alice/${name}.json`), name).to.equal('ok');
    }
  });

  it('tells the plain, preferred and other-version copies apart', () => {
    const at = (path: string) => {
      const parsed = parseItemPath(path);
      if (!parsed.ok) throw new Error(parsed.reason);
      return [parsed.item.preferredVersion, parsed.item.otherVersion];
    };
    expect(at('resources/notebooks.kubeflow.org/namespaces/a/nb.json')).to.deep.equal([undefined, undefined]);
    expect(at('resources/notebooks.kubeflow.org/v1-preferredversion/namespaces/a/nb.json')).to.deep.equal(['v1', undefined]);
    expect(at('resources/notebooks.kubeflow.org/v1beta1/namespaces/a/nb.json')).to.deep.equal([undefined, 'v1beta1']);
    expect(at('resources/profiles.kubeflow.org/v1beta1/cluster/alice.json')).to.deep.equal([undefined, 'v1beta1']);
  });

  it('puts sealed Secrets in a folder of our own, which holds nothing else', () => {
    expect(itemPaths(SECRETS, secret('alice', 'db', { a: 'b' }), SEALED_ROOT).unversioned).to.equal('kubeflow-upgrader-sealed/secrets/namespaces/alice/db.json');
    expect(reason('kubeflow-upgrader-sealed/secrets/v1-preferredversion/namespaces/alice/db.json')).to.equal('ok');
    expect(reason('kubeflow-upgrader-sealed/configmaps/namespaces/alice/x.json')).to.equal('is in kubeflow-upgrader-sealed/, which holds only secrets/');
  });

  it('refuses what could leave its folder, whatever characters the name has', () => {
    expect(reason('/resources/configmaps/namespaces/a/x.json')).to.equal('is an absolute path');
    expect(reason('resources/configmaps/namespaces/a/..\\x.json')).to.equal('contains a backslash');
    expect(reason('resources/configmaps/namespaces/../x.json')).to.equal('escapes its folder with ".."');
    expect(reason('resources/configmaps/namespaces/a/x\u0000.json')).to.equal('has an empty, dot or control-character segment');
    expect(reason('resources/configmaps/namespaces/a/./x.json')).to.equal('has an empty, dot or control-character segment');
    expect(reason('resources/configmaps/namespaces/a/b/x.json')).to.equal('is neither cluster/<name>.json nor namespaces/<ns>/<name>.json');
    expect(reason('other/configmaps/namespaces/a/x.json')).to.equal('is not under resources/<resource>/');
    expect(() => itemPaths(ROLEBINDINGS, { ...colonRbac('alice').binding, metadata: { name: '..', namespace: 'alice' } })).to.throw(/cannot be stored safely/);
  });

  it('gives a path with a control character, an empty or a dot segment the same reason wherever it is', () => {
    // the rule as the archive format states it, segment by segment: the reference for the whole-path check
    const segmentRefused = (segment: string) => segment === '' || segment === '.' || [...segment].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
    const segment = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('resources', 'configmaps', 'namespaces', 'alice', 'x.json', 'v1-preferredversion', 'cluster') },
      { weight: 1, arbitrary: fc.constantFrom('', '.', 'a\u0001b', '\u007f', 'tab\there', 'x\n.json', '..') },
    );
    fc.assert(fc.property(fc.array(segment, { minLength: 1, maxLength: 7 }), (parts) => {
      const path = parts.join('/');
      const got = reason(path);
      if (parts[0] === '' && parts.length > 1) expect(got).to.equal('is an absolute path');
      else if (parts.includes('..')) expect(got).to.equal('escapes its folder with ".."');
      else if (parts.some(segmentRefused)) expect(got).to.equal('has an empty, dot or control-character segment');
      else expect(got).not.to.equal('has an empty, dot or control-character segment');
    }), { numRuns: 400 });
  });
});
