// Upstream: kubernetes/kubernetes pkg/controller/garbagecollector.
// The garbage collector of the embedded cluster and ownerReferences whose owner is not there (background.ts; kubernetes
// pkg/controller/garbagecollector/garbagecollector.go, attemptToDeleteItem and classifyReferences).
import { expect } from 'chai';
import type { KubeObject } from '../../../src/kube/types.ts';
import { startCluster, type RunningCluster } from './index.ts';

const CONFIGMAPS = { group: '', resource: 'configmaps' };
const NAMESPACES = { group: '', resource: 'namespaces' };

async function until(what: string, probe: () => boolean, ms = 5000): Promise<void> {
  for (const deadline = Date.now() + ms; !probe(); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe('embedded cluster: dependents of owners that are not there', function () {
  let c: RunningCluster;
  before(async () => {
    c = await startCluster({ kubeflowCrds: false });
    for (const name of ['one', 'two']) c.api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(async () => c.stop());

  const map = (name: string, namespace: string, owners?: KubeObject['metadata']['ownerReferences']): KubeObject => c.api.create(CONFIGMAPS, {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(owners ? { ownerReferences: owners } : {}) },
  });
  const ref = (o: KubeObject) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name!, uid: o.metadata.uid! });

  it('deletes an object whose only owner never existed', async () => {
    map('orphaned', 'one', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-4000-8000-000000000000' }]);
    await until('the dependent to be collected', () => c.api.get(CONFIGMAPS, 'orphaned', 'one') === undefined);
  });

  it('deletes a dependent whose owner lives in another namespace, and keeps one with its owner beside it', async () => {
    const owner = map('owner', 'one');
    map('same-namespace', 'one', [ref(owner)]);
    map('other-namespace', 'two', [ref(owner)]);
    await until('the cross-namespace dependent to be collected', () => c.api.get(CONFIGMAPS, 'other-namespace', 'two') === undefined);
    expect(c.api.get(CONFIGMAPS, 'same-namespace', 'one')?.metadata.ownerReferences).to.deep.equal([ref(owner)]);
  });

  it('drops the reference to an absent owner from a dependent that has a living one', async () => {
    const living = map('living', 'one');
    map('two-owners', 'one', [ref(living), { apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: '11111111-0000-4000-8000-000000000000' }]);
    await until('the absent owner to be dropped', () => c.api.get(CONFIGMAPS, 'two-owners', 'one')?.metadata.ownerReferences?.length === 1);
    expect(c.api.get(CONFIGMAPS, 'two-owners', 'one')!.metadata.ownerReferences).to.deep.equal([ref(living)]);
  });

  it('refuses an ownerReference that does not name its owner fully, or a second controller, with the real messages', () => {
    const refused = (owners: KubeObject['metadata']['ownerReferences']): string => {
      try {
        map('bad-owners', 'one', owners);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refused([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '' }])).to.equal('ConfigMap "bad-owners" is invalid: metadata.ownerReferences.uid: Invalid value: "": uid must not be empty');
    const a = { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'u-a', controller: true };
    const b = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'b', uid: 'u-b', controller: true };
    expect(refused([a, b])).to.match(/^ConfigMap "bad-owners" is invalid: metadata\.ownerReferences: Invalid value: .*: Only one reference can have Controller set to true\. Found "true" in references for ConfigMap\/a and Deployment\/b$/);
  });
});
