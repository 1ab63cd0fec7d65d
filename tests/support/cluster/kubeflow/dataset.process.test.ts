// The dataset applied through the real client to the embedded cluster, with the controllers answering over HTTP.
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startCluster, type RunningCluster } from '../index.ts';
import { applyDataset, generateDataset } from './dataset.ts';
import { refs } from './refs.ts';

describe('applyDataset against the embedded cluster', () => {
  let cluster: RunningCluster;
  before(async () => { cluster = await startCluster(); });
  after(async () => { await cluster?.stop(); });

  it('creates every dataset object after its profile namespace, and a rerun changes nothing', async () => {
    const options = { profiles: 6, seed: 3, concurrency: 6 };
    const expected = generateDataset(options).profiles.reduce((sum, p) => sum + 1 + p.objects.length, 0);
    const first = await applyDataset(cluster.kubeconfigPath, options);
    expect(first.created).to.equal(expected);
    expect(first.byKind.Profile).to.equal(6);
    const again = await applyDataset(cluster.kubeconfigPath, options);
    expect(again).to.include({ created: 0, existing: expected });

    const config = new k8s.KubeConfig();
    config.loadFromFile(cluster.kubeconfigPath);
    const core = config.makeApiClient(k8s.CoreV1Api);
    const namespaces = await core.listNamespace({ labelSelector: 'app.kubernetes.io/part-of=kubeflow-profile' });
    expect(namespaces.items).to.have.length(6);
    const large = cluster.api.list(refs.configMaps, { labelSelector: 'size=large' });
    expect(JSON.stringify(large[0]).length).to.be.within(800 * 1024, 1000 * 1024);
  });
});
