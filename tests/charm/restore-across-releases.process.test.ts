// restore-state across CKF releases, the charm's action run in process (runEvent over the fake hook tools): a backup of
// a release with the objects the later release no longer serves or declares (tests/restore/release-scenario.ts)
// restored into a fresh cluster of the later release, the next one (1.9 → 1.10: an MXJob and an InferenceService whose
// ephemeral volume claims 1.10 no longer declares) and two releases later (1.8 → 1.11: a SeldonDeployment, an MXJob,
// and an InferenceService with an Alibi explainer and ephemeral volume claims). The results carry what the target
// refuses, drops and does not serve.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import type { Release } from '../support/cluster/kubeflow/releases.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { backupStore } from '../support/backup-store.ts';
import { expectedDrops, expectedUnserved, stepObjects } from '../restore/release-scenario.ts';

const BUCKET = 'kubeflow-backups';

/** the values of the numbered results `<key>.0`, `<key>.1`, …, sorted */
function listed(results: Record<string, string>, key: string): string[] {
  return Object.entries(results).filter(([k]) => new RegExp(`^${key}\\.\\d+$`).test(k)).map(([, v]) => v).sort();
}

/** The action's tests for the step from → to, in the caller's describe (which names the pair). */
function actionAcross(from: Release, to: Release): void {
  let s3: S3ServerHandle;
  let a: RunningCluster;
  let b: RunningCluster;
  let namespace: string;
  const unserved = expectedUnserved(from, to);

  before(async () => {
    [s3, a, b] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ kubeflowRelease: from, profiles: 2, seed: 3 }), startCluster({ kubeflowRelease: to, seed: 3 })]);
    namespace = a.cluster.list({ group: 'kubeflow.org', resource: 'profiles' })[0]!.metadata.name!;
    for (const object of stepObjects(from, to)(namespace)) a.cluster.create(a.cluster.resourceByKind(object.apiVersion.split('/')[0]!, object.kind)!, object);
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
  const notServed = (u: string) => u.replace(/ \(\d+ objects?\)$/, '').replace(/[./]/g, (c) => `\\${c}`);

  it('dry-run=true: the refusals, the drops and the unserved kinds in the results, nothing written', async () => {
    const before = objectsOnB();
    const { exitCode, state } = await restore({ 'dry-run': true });
    expect(exitCode).to.not.equal(0);
    const any = unserved.map(notServed).join('|');
    expect(state.actionFailure).to.match(new RegExp(`^The dry run found ${unserved.length} object\\(s\\) the target would refuse \\(first: \\w+/.*/\\w+: (${any}) is not served by the target\\); nothing was written\\.$`));
    expect(listed(state.actionResults, 'unserved')).to.deep.equal(unserved);
    expect(listed(state.actionResults, 'dropped')).to.deep.equal(expectedDrops(from, to, namespace, true));
    expect(state.actionResults.failed).to.equal(String(unserved.length));
    const refusals = listed(state.actionResults, 'refusals');
    expect(refusals).to.have.length(unserved.length);
    for (const u of unserved) expect(refusals.some((r) => new RegExp(`: ${notServed(u)} is not served by the target$`).test(r)), u).to.equal(true);
    expect(objectsOnB()).to.equal(before);
  });

  it('a real restore refuses the backup, naming every unserved kind, and writes nothing', async () => {
    const before = objectsOnB();
    const { exitCode, state } = await restore({});
    expect(exitCode).to.not.equal(0);
    expect(state.actionFailure).to.include('The target cluster does not serve ').and.to.include('skip-unserved');
    for (const u of unserved) expect(state.actionFailure).to.include(u);
    expect(listed(state.actionResults, 'offenders')).to.deep.equal(unserved.map((u) => `${u}: not served by the target`));
    expect(objectsOnB()).to.equal(before);
  });

  it('skip-unserved=true restores the rest, names the kinds it left and the dropped fields', async () => {
    const { exitCode, state, stderr } = await restore({ 'skip-unserved': true });
    expect(state.actionFailure, stderr).to.equal(undefined);
    expect(exitCode).to.equal(0);
    expect(listed(state.actionResults, 'unserved')).to.deep.equal(unserved);
    expect(listed(state.actionResults, 'dropped')).to.deep.equal(expectedDrops(from, to, namespace, false));
    expect(state.actionResults).to.include({ failed: '0', skipped: String(unserved.length) });
    for (const drop of expectedDrops(from, to, namespace, false)) {
      expect(state.logs.some((l) => l.level === 'WARNING' && l.message.includes(drop)), `a WARNING log line names ${drop}`).to.equal(true);
    }
  });
}

describe('restore-state action across CKF releases (1.9 → 1.10)', function () {
  this.timeout(180_000);
  actionAcross('1.9', '1.10');
});

describe('restore-state action across CKF releases (1.8 → 1.11)', function () {
  this.timeout(180_000);
  actionAcross('1.8', '1.11');
});
