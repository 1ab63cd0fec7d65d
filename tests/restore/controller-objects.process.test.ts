// writeArchivedStatus against the embedded API server: the archived status replaces whatever the controller wrote
// first, in one request, as a JSON patch of the status subresource does on a real server.
import { expect } from 'chai';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import { writeArchivedStatus } from '../../src/restore/controller-objects.ts';

const FIELD_MANAGER = 'kubeflow-upgrader';

const archivedStatus = {
  conditions: [
    { type: 'Created', status: 'True', reason: 'ExperimentCreated' },
    { type: 'Succeeded', status: 'True', reason: 'ExperimentGoalReached' },
  ],
  trials: 4,
  trialsSucceeded: 4,
};

describe('restore: writing an archived status', function () {
  let running: RunningCluster;
  let kube: KubeClient;
  let experiments: ApiResource;
  let count = 0;

  before(async () => {
    // no controllers: the test plays the Katib controller's first status write itself, at the moment that matters
    running = await startCluster({ controllers: false });
    kube = await KubeClient.load({ kubeconfig: running.kubeconfigPath });
    experiments = (await kube.findByResource('kubeflow.org', 'experiments'))!;
  });
  after(async () => {
    kube.close();
    await running.stop();
  });

  const created = () => kube.create(experiments, {
    apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment',
    metadata: { name: `tuned-${++count}`, namespace: 'kubeflow' },
    spec: { maxTrialCount: 4 },
  });

  it('replaces a status the controller wrote after the create, in one request: no 409, no GET, no PUT', async () => {
    const made = await created();
    // the controller marks the new Experiment Created before the restore's write arrives
    const live = running.api.get(refs.experiments, made.metadata.name!, 'kubeflow')!;
    running.api.updateStatus(refs.experiments, { ...live, status: { conditions: [{ type: 'Created', status: 'True', reason: 'ExperimentCreated' }], startTime: '2026-12-01T00:00:00Z' } });
    const before = kube.requestCounts();
    const problem = await writeArchivedStatus(kube, experiments, made, archivedStatus, FIELD_MANAGER);
    const after = kube.requestCounts();
    expect(problem).to.equal(undefined);
    expect({ patch: after.patch - before.patch, update: after.update - before.update, get: after.get - before.get }).to.deep.equal({ patch: 1, update: 0, get: 0 });
    const written: KubeObject = running.api.get(refs.experiments, made.metadata.name!, 'kubeflow')!;
    // whole: the controller's startTime, absent from the archive, does not survive beside it
    expect(written.status).to.deep.equal(archivedStatus);
    expect(written.spec).to.deep.equal({ maxTrialCount: 4 });
  });

  it('writes it on an object no controller has touched', async () => {
    const made = await created();
    expect(await writeArchivedStatus(kube, experiments, made, archivedStatus, FIELD_MANAGER)).to.equal(undefined);
    expect(running.api.get(refs.experiments, made.metadata.name!, 'kubeflow')!.status).to.deep.equal(archivedStatus);
  });

  it('says the object was deleted meanwhile when it is gone', async () => {
    const made = await created();
    running.api.delete(refs.experiments, made.metadata.name!, 'kubeflow');
    expect(await writeArchivedStatus(kube, experiments, made, archivedStatus, FIELD_MANAGER)).to.equal('it was deleted meanwhile');
  });
});
