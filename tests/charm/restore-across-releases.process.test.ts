// restore-state across CKF releases, the charm's action run in process (runEvent over the fake hook tools): a backup of
// a 1.9 cluster (with an MXJob and an InferenceService whose ephemeral volume claims 1.10 no longer declares) restored
// into a fresh 1.10 cluster. The results carry what the target refuses, drops and does not serve.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { backupStore } from '../support/backup-store.ts';
import { expectedDrops, stepObjects } from '../restore/release-scenario.ts';

const BUCKET = 'kubeflow-backups';

describe('restore-state action across CKF releases (1.9 → 1.10)', function () {
  this.timeout(180_000);
  let s3: S3ServerHandle;
  let a: RunningCluster;
  let b: RunningCluster;
  let namespace: string;

  before(async () => {
    [s3, a, b] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ kubeflowRelease: '1.9', profiles: 2, seed: 3 }), startCluster({ kubeflowRelease: '1.10', seed: 3 })]);
    namespace = a.cluster.list({ group: 'kubeflow.org', resource: 'profiles' })[0]!.metadata.name!;
    for (const object of stepObjects('1.9', '1.10')(namespace)) a.cluster.create(a.cluster.resourceByKind(object.apiVersion.split('/')[0]!, object.kind)!, object);
    const kube = await KubeClient.load({ kubeconfig: a.kubeconfigPath });
    const store = new ObjectStore({
      client: new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } }),
      bucket: BUCKET, prefix: 'backups',
    });
    await runBackup(kube, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    kube.close();
  });
  after(async () => Promise.all([s3?.stop(), a?.stop(), b?.stop()]));

  const restore = (params: Record<string, unknown>): Promise<EventOutcome> =>
    runEvent(emptyState({ config: { 'restore-wait-timeout': 30 }, relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: { 'backup-id': 'latest', 'include-volumes': false, ...params } }), {
      event: 'actions/restore-state',
      env: { KUBECONFIG: b.kubeconfigPath },
    });
  const objectsOnB = () => b.cluster.store.totalObjects();

  it('dry-run=true: the refusal, the drop and the unserved kind in the results, nothing written', async () => {
    const before = objectsOnB();
    const { exitCode, state } = await restore({ 'dry-run': true });
    expect(exitCode).to.not.equal(0);
    expect(state.actionFailure).to.match(/^The dry run found 1 object\(s\) the target would refuse \(first: MXJob\/.*\/mnist: mxjobs\.kubeflow\.org\/v1 is not served by the target\); nothing was written\.$/);
    expect(state.actionResults).to.include({ 'unserved.0': 'mxjobs.kubeflow.org/v1 (1 object)', 'dropped.0': expectedDrops('1.9', '1.10', namespace, true)[0]!, failed: '1' });
    expect(state.actionResults['refusals.0']).to.match(/mnist: mxjobs\.kubeflow\.org\/v1 is not served by the target$/);
    expect(objectsOnB()).to.equal(before);
  });

  it('a real restore refuses the backup, naming the kind, and writes nothing', async () => {
    const before = objectsOnB();
    const { exitCode, state } = await restore({});
    expect(exitCode).to.not.equal(0);
    expect(state.actionFailure).to.include('The target cluster does not serve mxjobs.kubeflow.org/v1 (1 object)').and.to.include('skip-unserved');
    expect(state.actionResults['offenders.0']).to.equal('mxjobs.kubeflow.org/v1 (1 object): not served by the target');
    expect(objectsOnB()).to.equal(before);
  });

  it('skip-unserved=true restores the rest, names the MXJob and the dropped field', async () => {
    const { exitCode, state, stderr } = await restore({ 'skip-unserved': true });
    expect(state.actionFailure, stderr).to.equal(undefined);
    expect(exitCode).to.equal(0);
    expect(state.actionResults).to.include({ 'unserved.0': 'mxjobs.kubeflow.org/v1 (1 object)', 'dropped.0': expectedDrops('1.9', '1.10', namespace, false)[0]!, failed: '0', skipped: '1' });
    expect(state.logs.some((l) => l.level === 'WARNING' && l.message.includes(expectedDrops('1.9', '1.10', namespace, false)[0]!)), 'a WARNING log line names the drop').to.equal(true);
  });
});
