// The in-process dataset path: the same objects as the HTTP path, and the controllers still make theirs. No simulated
// behaviour of its own: the controllers it starts name the kubeflow/kubeflow files they follow.
import { expect } from 'chai';
import { startCluster, type RunningCluster } from '../index.ts';
import { applyDatasetInProcess } from './apply-in-process.ts';
import { generateDataset } from './dataset.ts';
import { refs } from './refs.ts';

describe('applyDatasetInProcess', () => {
  let cluster: RunningCluster;
  before(async () => { cluster = await startCluster(); });
  after(async () => { await cluster?.stop(); });

  it('creates every dataset object after its profile namespace, the controllers make theirs, and a rerun changes nothing', async () => {
    const options = { profiles: 6, seed: 3, batch: 4 };
    const expected = generateDataset(options).profiles.reduce((sum, p) => sum + 1 + p.objects.length, 0);
    const first = await applyDatasetInProcess(cluster.cluster, options);
    expect(first.created).to.equal(expected);
    expect(first.byKind.Profile).to.equal(6);
    const again = await applyDatasetInProcess(cluster.cluster, options);
    expect(again).to.include({ created: 0, existing: expected });

    expect(cluster.api.list(refs.namespaces, { labelSelector: 'app.kubernetes.io/part-of=kubeflow-profile' })).to.have.length(6);
    const notebooks = cluster.api.list(refs.notebooks);
    const deadline = Date.now() + 5000;
    while (cluster.api.list(refs.statefulSets).filter((s) => s.metadata.namespace !== 'kubeflow').length < notebooks.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cluster.api.list(refs.statefulSets).filter((s) => s.metadata.namespace !== 'kubeflow')).to.have.length(notebooks.length);
    const configMap = cluster.api.list(refs.configMaps).find((c) => c.metadata.name === 'pipeline-config');
    expect(configMap?.metadata.managedFields?.[0]).to.include({ manager: 'kubernetes-client-javascript', operation: 'Update' });
  });
});
