// restore-state's results and refusals: the charm's action run in process (runEvent, over the same fake hook tools'
// rules as the real ./dispatch), s3-integrator data pointing at s3rver, KUBECONFIG at the embedded cluster. The packed
// dispatch restores end to end in user-state-roundtrip.process.test.ts and tests/reliability.
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
import { collectUserState, compareStates } from '../../src/restore/compare.ts';
import { putForeignArchive } from '../restore/fixtures.ts';
import { backupStore } from '../support/backup-store.ts';

const BUCKET = 'kubeflow-backups';

describe('restore-state action (the charm in process)', function () {
  this.timeout(120_000);
  let s3: S3ServerHandle;
  let a: RunningCluster;
  let b: RunningCluster;
  let objects: number;
  let store: ObjectStore;

  before(async () => {
    [s3, a, b] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 4, seed: 9 }), startCluster({ seed: 9 })]);
    const kube = await KubeClient.load({ kubeconfig: a.kubeconfigPath });
    store = new ObjectStore({
      client: new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } }),
      bucket: BUCKET, prefix: 'backups',
    });
    const backup = await runBackup(kube, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    objects = backup.objects;
    kube.close();
  });
  after(async () => Promise.all([s3?.stop(), a?.stop(), b?.stop()]));

  const restore = (params: Record<string, unknown>, config: Record<string, unknown> = {}): Promise<EventOutcome> =>
    runEvent(emptyState({ config: { 'restore-wait-timeout': 30, ...config }, relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params }), {
      event: 'actions/restore-state',
      env: { KUBECONFIG: b.kubeconfigPath },
    });

  it('restores the latest backup into a fresh cluster and reports the counts', async () => {
    const { exitCode, state, stderr } = await restore({ 'backup-id': 'latest' });
    expect(state.actionFailure, stderr).to.equal(undefined);
    expect(exitCode).to.equal(0);
    expect(state.actionResults).to.include({ created: String(objects), updated: '0', failed: '0' });
    expect(state.actionLogs.length).to.be.greaterThan(0);
    const [kubeA, kubeB] = await Promise.all([KubeClient.load({ kubeconfig: a.kubeconfigPath }), KubeClient.load({ kubeconfig: b.kubeconfigPath })]);
    try {
      expect(compareStates(await collectUserState(kubeA), await collectUserState(kubeB))).to.deep.equal([]);
    } finally {
      kubeA.close();
      kubeB.close();
    }
  });

  it('dry-run returns the plan: everything unchanged', async () => {
    const { exitCode, state } = await restore({ 'backup-id': 'latest', 'dry-run': true });
    expect(exitCode).to.equal(0);
    expect(state.actionResults).to.include({ created: '0', unchanged: String(objects) });
    expect(Object.keys(state.actionResults).some((k) => /^plan\.0\.namespace$/.test(k))).to.equal(true);
  });

  it('an unknown backup fails in one sentence and changes nothing', async () => {
    const { exitCode, state } = await restore({ 'backup-id': 'kf-20200101-000000-abcdef' });
    expect(exitCode).to.not.equal(0);
    expect(state.actionFailure).to.match(/^There is no complete backup kf-20200101-000000-abcdef in s3:\/\/.*list-backups/);
    expect(state.actionFailure).not.to.include('\n');
  });

  describe('an archive with a binding the allow-list refuses', () => {
    const namespace = 'shared-team';
    before(async () => {
      const binding = (name: string, role: string) => ({
        path: `resources/rolebindings.rbac.authorization.k8s.io/namespaces/${namespace}/${name}.json`,
        object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', name: 'pat@example.com' }] },
      });
      await putForeignArchive(store, 'with-escalation', [
        { path: `resources/profiles.kubeflow.org/cluster/${namespace}.json`, object: { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: namespace }, spec: { owner: { kind: 'User', name: 'lead@example.com' } } } },
        binding('pat-edit', 'edit'),
        binding('pat-root', 'cluster-admin'),
        { path: `resources/configmaps/namespaces/${namespace}/notes.json`, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'notes', namespace }, data: { a: 'b' } } },
      ]);
    });

    it('is refused by default, naming the offender in the results', async () => {
      const { exitCode, state } = await restore({ 'backup-id': 'with-escalation' });
      expect(exitCode).to.not.equal(0);
      expect(state.actionFailure).to.match(/^Backup with-escalation was refused and nothing was restored: 1 item breaks the restore rules/);
      expect(state.actionResults['offenders.0']).to.include('cluster-admin');
    });

    it('with skip-refused restores the rest and lists the refused binding; exclude-resources from config applies too', async () => {
      const { exitCode, state, stderr } = await restore({ 'backup-id': 'with-escalation', 'skip-refused': true }, { 'exclude-resources': 'configmaps' });
      expect(state.actionFailure, stderr).to.equal(undefined);
      expect(exitCode).to.equal(0);
      expect(state.actionResults['refused.0']).to.match(/^RoleBinding\/shared-team\/pat-root .*binds ClusterRole cluster-admin/);
      expect(state.actionResults['refused.1']).to.equal(undefined);
      // the Profile and the edit binding
      expect(state.actionResults).to.include({ created: '2', failed: '0' });
      const kube = await KubeClient.load({ kubeconfig: b.kubeconfigPath });
      try {
        const bindings = await kube.findByResource('rbac.authorization.k8s.io', 'rolebindings');
        const names = (await kube.listAll(bindings!, { namespace })).items.map((o) => o.metadata.name);
        expect(names).to.include('pat-edit').and.not.to.include('pat-root');
        const configmaps = await kube.findByResource('', 'configmaps');
        expect((await kube.listAll(configmaps!, { namespace })).items.map((o) => o.metadata.name)).not.to.include('notes');
      } finally {
        kube.close();
      }
    });
  });
});
