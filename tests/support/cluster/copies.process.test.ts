// What the embedded API server keeps is its own: the copies it saves (the HTTP front end's, the watch events shared by
// every in-process listener, the key index kept in order) must never let a caller's object and a stored one meet,
// and a write that changes nothing stays a no-op, as on a real server (kubernetes/kubernetes
// staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go GuaranteedUpdate; client-go tools/cache/shared_informer.go).
import { expect } from 'chai';
import { KubeClient } from '../../../src/kube/client.ts';
import type { ApiResource, KubeObject } from '../../../src/kube/types.ts';
import { Cluster } from './cluster.ts';
import type { ClusterEvent, ResourceRef } from './contract.ts';
import { startCluster, type RunningCluster } from './index.ts';
import { WIDGETS } from './widgets-crd.ts';

const CONFIGMAPS: ResourceRef = { group: '', resource: 'configmaps' };
const NAMESPACES: ResourceRef = { group: '', resource: 'namespaces' };


function configMap(namespace: string, name: string, data: Record<string, string> = { a: '1' }): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { app: 'x' } }, data };
}

/** delivered after the write returns (store.ts flushes on setImmediate) */
const delivered = () => new Promise((resolve) => setImmediate(resolve));

describe('embedded API server: what it keeps is its own', () => {
  describe('in process', () => {
    let cluster: Cluster;
    beforeEach(() => {
      cluster = new Cluster();
      for (const name of ['a', 'b', 'c']) cluster.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    });

    it('changes nothing stored when a caller modifies what it gave or got from create, get, list, update and updateStatus', () => {
      const given = configMap('a', 'one');
      const made = cluster.create(CONFIGMAPS, given);
      given.data = { a: 'given' };
      made.data = { a: 'made' };
      made.metadata.labels!.app = 'changed';
      const got = cluster.get(CONFIGMAPS, 'one', 'a')!;
      (got.data as Record<string, string>).a = 'got';
      cluster.list(CONFIGMAPS, { namespace: 'a' })[0]!.metadata.labels!.app = 'listed';
      expect(cluster.get(CONFIGMAPS, 'one', 'a')).to.deep.include({ data: { a: '1' } });
      expect(cluster.get(CONFIGMAPS, 'one', 'a')!.metadata.labels).to.deep.equal({ app: 'x' });

      const change = { ...cluster.get(CONFIGMAPS, 'one', 'a')!, data: { a: '2' } };
      const updated = cluster.update(CONFIGMAPS, change);
      (change.data as Record<string, string>).a = 'change';
      (updated.data as Record<string, string>).a = 'updated';
      expect(cluster.get(CONFIGMAPS, 'one', 'a')!.data).to.deep.equal({ a: '2' });

      const noOp = cluster.update(CONFIGMAPS, cluster.get(CONFIGMAPS, 'one', 'a')!);
      noOp.metadata.labels!.app = 'no-op answer';
      expect(cluster.get(CONFIGMAPS, 'one', 'a')!.metadata.labels).to.deep.equal({ app: 'x' });
    });

    it('hands every listener the same event object, frozen, so one listener cannot change what another or the store sees', async () => {
      const seen: KubeObject[] = [];
      let refused: unknown;
      const stops = [
        cluster.subscribe((e: ClusterEvent) => {
          if (e.ref.resource !== 'configmaps') return;
          try {
            (e.object.data as Record<string, string>).a = 'changed by a listener';
          } catch (error) {
            refused = error;
          }
          seen.push(e.object);
        }),
        cluster.subscribe((e: ClusterEvent) => { if (e.ref.resource === 'configmaps') seen.push(e.object); }),
      ];
      cluster.create(CONFIGMAPS, configMap('a', 'watched'));
      await delivered();
      for (const stop of stops) stop();
      expect(refused).to.be.instanceOf(TypeError);
      expect(seen).to.have.length(2);
      expect(seen[0]).to.equal(seen[1]);
      expect(seen[1]!.data).to.deep.equal({ a: '1' });
      expect(cluster.get(CONFIGMAPS, 'watched', 'a')!.data).to.deep.equal({ a: '1' });
    });

    it('keeps a no-op update a no-op: same resourceVersion, no event, as etcd3 skips a write of the same bytes', async () => {
      const made = cluster.create(CONFIGMAPS, configMap('a', 'still'));
      await delivered();
      const events: string[] = [];
      const stop = cluster.subscribe((e) => { if (e.ref.resource === 'configmaps') events.push(e.type); });
      const again = cluster.update(CONFIGMAPS, { ...made });
      const patched = cluster.mergePatch(CONFIGMAPS, 'still', 'a', { data: { a: '1' } });
      await delivered();
      stop();
      expect(again.metadata.resourceVersion).to.equal(made.metadata.resourceVersion);
      expect(patched.metadata.resourceVersion).to.equal(made.metadata.resourceVersion);
      expect(events).to.deep.equal([]);
      const changed = cluster.update(CONFIGMAPS, { ...made, data: { a: '2' } });
      expect(Number(changed.metadata.resourceVersion)).to.be.greaterThan(Number(made.metadata.resourceVersion));
    });

    it('lists in key order while objects come and go between the lists, per namespace and across them', () => {
      const names = ['m', 'c', 'x', 'a', 'q', 'b', 'z', 'k'];
      const expected: string[] = [];
      names.forEach((name, i) => {
        const namespace = ['c', 'a', 'b'][i % 3]!;
        cluster.create(CONFIGMAPS, configMap(namespace, name));
        expected.push(`${namespace}/${name}`);
        const listed = cluster.list(CONFIGMAPS).map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
        expect(listed).to.deep.equal([...expected].sort());
      });
      cluster.delete(CONFIGMAPS, 'q', 'a');
      cluster.delete(CONFIGMAPS, 'm', 'c');
      cluster.create(CONFIGMAPS, configMap('b', 'aa'));
      expect(cluster.list(CONFIGMAPS).map((o) => `${o.metadata.namespace}/${o.metadata.name}`))
        .to.deep.equal(['a/c', 'a/k', 'b/aa', 'b/b', 'b/x', 'c/a', 'c/z']);
      expect(cluster.list(CONFIGMAPS, { namespace: 'b' }).map((o) => o.metadata.name)).to.deep.equal(['aa', 'b', 'x']);
    });
  });

  describe('over HTTP', function () {
    let running: RunningCluster;
    let client: KubeClient;
    let widgets: ApiResource;
    let configMaps: ApiResource;
    before(async () => {
      running = await startCluster({ kubeflowCrds: false, crds: [WIDGETS] });
      client = await KubeClient.load({ kubeconfig: running.kubeconfigPath });
      const resources = await client.discover();
      widgets = resources.find((r) => r.group === 'example.org' && r.resource === 'widgets')!;
      configMaps = resources.find((r) => r.group === '' && r.resource === 'configmaps')!;
    });
    after(async () => {
      client.close();
      await running.stop();
    });

    it('answers a create and an update in the version asked for and stores the storage version', async () => {
      const old = { ...widgets, version: 'v1alpha1' };
      const made = await client.create(old, { apiVersion: 'example.org/v1alpha1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
      expect(made.apiVersion).to.equal('example.org/v1alpha1');
      expect(running.api.get(widgets, 'w', 'default')!.apiVersion).to.equal('example.org/v1');
      const replaced = await client.replace(old, { ...made, spec: { size: 2 } });
      expect(replaced.apiVersion).to.equal('example.org/v1alpha1');
      const status = await client.replaceStatus(old, { ...replaced, status: { phase: 'Ready' } });
      expect(status.apiVersion).to.equal('example.org/v1alpha1');
      expect(running.api.get(widgets, 'w', 'default')).to.deep.include({ apiVersion: 'example.org/v1', spec: { size: 2 }, status: { phase: 'Ready' } });
    });

    it('keeps the resourceVersion of a PUT and a status PUT that change nothing', async () => {
      const made = await client.create(configMaps, configMap('default', 'same'));
      const again = await client.replace(configMaps, made);
      expect(again.metadata.resourceVersion).to.equal(made.metadata.resourceVersion);
      const widget = await client.create(widgets, { apiVersion: 'example.org/v1', kind: 'Widget', metadata: { name: 'quiet', namespace: 'default' } });
      const withStatus = await client.replaceStatus(widgets, { ...widget, status: { phase: 'Ready' } });
      expect(Number(withStatus.metadata.resourceVersion)).to.be.greaterThan(Number(widget.metadata.resourceVersion));
      const sameStatus = await client.replaceStatus(widgets, withStatus);
      expect(sameStatus.metadata.resourceVersion).to.equal(withStatus.metadata.resourceVersion);
    });
  });
});
