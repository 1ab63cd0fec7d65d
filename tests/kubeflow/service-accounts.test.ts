import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { generatedReason } from '../../src/kubeflow/generated.ts';
import { serviceAccountMerge, userChanges } from '../../src/kubeflow/service-accounts.ts';

const profileOwner = [{ apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: 'alice', uid: 'p', controller: true }];
const sa = (name: string, extra: Partial<KubeObject> & { annotations?: Record<string, string> } = {}): KubeObject => {
  const { annotations, ...body } = extra;
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'alice', ownerReferences: profileOwner, ...(annotations ? { annotations } : {}) }, ...body };
};

describe('ServiceAccounts controllers make and users change', () => {
  it('is generated as the controller made it, and state once users added a pull secret or an annotation', () => {
    expect(generatedReason(sa('default-editor'))).to.match(/^generated: ServiceAccount\/default-editor is made by the profile controller/);
    expect(generatedReason(sa('default-editor', { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } }))).to.match(/^generated:/);
    expect(generatedReason(sa('default-editor', { imagePullSecrets: [{ name: 'regcred' }] }))).to.equal(undefined);
    expect(generatedReason(sa('default', { annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/x' } }))).to.equal(undefined);
    expect(userChanges(sa('default-viewer', { imagePullSecrets: [{ name: 'a' }], annotations: { x: 'y' } }))).to.deep.equal(['imagePullSecrets a', 'annotation x']);
    // another controller-owned ServiceAccount is generated whatever it holds
    expect(generatedReason(sa('runner', { imagePullSecrets: [{ name: 'a' }] }))).to.match(/controller ownerReference to Profile\/alice/);
  });

  it('merges as Velero does: pull secrets joined by name, annotations only where the live object has none', () => {
    const live = sa('default-editor', { imagePullSecrets: [{ name: 'cluster-wide' }], annotations: { team: 'live' } });
    const archived = sa('default-editor', { imagePullSecrets: [{ name: 'regcred' }, { name: 'cluster-wide' }], annotations: { team: 'old', cost: 'ml' } });
    expect(serviceAccountMerge(live, archived)).to.deep.equal({
      imagePullSecrets: [{ name: 'cluster-wide' }, { name: 'regcred' }],
      metadata: { annotations: { cost: 'ml' } },
    });
    const merged = { ...live, imagePullSecrets: [{ name: 'cluster-wide' }, { name: 'regcred' }], metadata: { ...live.metadata, annotations: { team: 'live', cost: 'ml' } } };
    expect(serviceAccountMerge(merged, archived)).to.equal(undefined);
  });
});
