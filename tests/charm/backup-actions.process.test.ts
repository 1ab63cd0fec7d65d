// backup-state, snapshot-profiles, list-backups and verify-backup: the charm's results and failures, run in process
// (runEvent, over the same fake hook tools' rules as the real ./dispatch) with KUBECONFIG pointing at the embedded
// cluster and s3-integrator's track-1 data pointing at a real s3rver. The packed dispatch runs these actions end to
// end in tests/reliability/secret-hygiene.process.test.ts.
import { expect } from 'chai';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { putVeleroBackup } from '../support/velero/archive.ts';
import { s3ClientFor, veleroProfileNamespace } from '../archive/fixtures.ts';
import { ObjectStore } from '../../src/store/objects.ts';

const BUCKET = 'kubeflow-backups';

describe('backup actions (the charm in process)', function () {
  this.timeout(120_000);
  let s3: S3ServerHandle;
  let cluster: RunningCluster;

  before(async () => {
    [s3, cluster] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 4, seed: 5 })]);
  });
  after(async () => {
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

  function state(params: Record<string, unknown>, config: Record<string, unknown> = {}): FakeJujuState {
    return emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params, config });
  }
  function action(name: string, params: Record<string, unknown>, config: Record<string, unknown> = {}): Promise<EventOutcome> {
    return runEvent(state(params, config), { event: `actions/${name}`, env: { KUBECONFIG: cluster.kubeconfigPath } });
  }

  it('backup-state writes a complete backup and reports it; list-backups and verify-backup find it', async () => {
    const backup = await action('backup-state', { 'include-volumes': false, 'include-control-plane': false, description: 'nightly' });
    expect(backup.state.actionFailure, backup.stderr).to.equal(undefined);
    expect(backup.exitCode).to.equal(0);
    const results = backup.state.actionResults;
    expect(results['backup-id']).to.match(/^kf-\d{8}-\d{6}-[0-9a-f]{6}$/);
    // track-1 data sets the path prefix to "backups": the Velero layout sits under it.
    expect(results.location).to.equal(`s3://${BUCKET}/backups/backups/${results['backup-id']}/`);
    expect(Number(results.objects)).to.be.greaterThan(20);
    expect(results.secrets).to.match(/stored in clear/);
    expect(Object.entries(results).filter(([k]) => k.startsWith('notes.')).map(([, v]) => v)).to.include('include-volumes=false: no volume data was copied');
    expect(backup.state.actionLogs.length).to.be.greaterThan(0);

    const listed = await action('list-backups', {});
    expect(listed.state.actionResults).to.include({ count: '1', 'backups.0.id': results['backup-id'], 'backups.0.phase': 'Completed', 'backups.0.description': 'nightly' });
    expect(listed.state.actionResults['backups.0.scope']).to.match(/^backup-state: 4 namespace\(s\), 4 Profile\(s\)$/);

    const verified = await action('verify-backup', { 'backup-id': 'latest' });
    expect(verified.state.actionResults).to.include({ 'backup-id': results['backup-id'], status: 'ok', 'objects-checked': results.objects });
  });

  it('backup-state names every namespace it leaves out, with the reason, in its results', async () => {
    // a namespace that looks like a profile namespace but has no Profile: no restore could make it again
    cluster.api.create({ group: '', resource: 'namespaces' }, {
      apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'orphaned-team', labels: { 'app.kubernetes.io/part-of': 'kubeflow-profile' }, annotations: { owner: 'gone@example.com' } },
    });
    const backup = await action('backup-state', { 'include-volumes': false, 'include-control-plane': false });
    expect(backup.state.actionFailure, backup.stderr).to.equal(undefined);
    expect(backup.state.actionResults['left-out.0']).to.equal(
      'orphaned-team: namespace orphaned-team has no Profile orphaned-team; only the profile controller makes profile namespaces, from their Profile, so a restore could not recreate it');
    expect(backup.state.actionResults['left-out.1']).to.equal(undefined);
    cluster.api.delete({ group: '', resource: 'namespaces' }, 'orphaned-team');
  });

  it('backup-state names every object it leaves out that no controller makes, with the reason, in its results', async () => {
    const namespace = cluster.api.list({ group: 'kubeflow.org', resource: 'profiles' })[0]!.metadata.name!;
    const bindings = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
    cluster.api.create(bindings, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'ops-root', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'ops@example.com' }],
    });
    const backup = await action('backup-state', { 'include-volumes': false, 'include-control-plane': false });
    expect(backup.state.actionFailure, backup.stderr).to.equal(undefined);
    const named = Object.entries(backup.state.actionResults).filter(([k]) => k.startsWith('left-out-objects.')).map(([, v]) => v);
    expect(named).to.include(`RoleBinding/${namespace}/ops-root: refused: RoleBinding/${namespace}/ops-root binds ClusterRole cluster-admin; only admin, edit, view, kubeflow-admin, kubeflow-edit, kubeflow-view and the ClusterRoles aggregated into them may be bound`);
    expect(named.every((line) => !String(line).includes('generated:')), 'controller output is counted, not named').to.equal(true);
    cluster.api.delete(bindings, 'ops-root', namespace);
  });

  it('snapshot-profiles reports Profiles and contributors', async () => {
    const { state: after, exitCode } = await action('snapshot-profiles', {});
    expect(exitCode).to.equal(0);
    expect(after.actionResults.profiles).to.equal('4');
    expect(Number(after.actionResults.contributors)).to.be.greaterThan(0);
  });

  it('an unknown namespace fails in one sentence naming the profile namespaces, and commits nothing', async () => {
    const before = (await action('list-backups', {})).state.actionResults.count;
    const { state: after, exitCode, stderr } = await action('backup-state', { namespaces: 'nobody-here' });
    expect(exitCode).to.not.equal(0);
    expect(after.actionFailure).to.match(/^Namespace nobody-here is not a profile namespace; the profile namespaces are: .+\.$/);
    expect(stderr).not.to.match(/\n\s+at /);
    expect((await action('list-backups', {})).state.actionResults.count).to.equal(before);
  });

  it('S3 credentials that are refused fail the backup in one sentence with no marker', async () => {
    // s3rver checks the access key id (not SigV4 signatures), so the refused credential is the key id.
    const bad = emptyState({
      relations: [s3Relation(track1Data({ ...s3, accessKeyId: 'NOT-THE-KEY-ID' }, BUCKET))],
      actionParams: { 'include-volumes': false },
    });
    const { state: after, exitCode } = await runEvent(bad, { event: 'actions/backup-state', env: { KUBECONFIG: cluster.kubeconfigPath } });
    expect(exitCode).to.not.equal(0);
    expect(after.actionFailure).to.match(/credentials|rejected|S3/i);
    expect(after.actionFailure).not.to.include('NOT-THE-KEY-ID');
    expect(after.actionFailure!.split('. ').length).to.be.lessThan(3);
  });

  it('verify-backup and restore-state of a Velero backup whose marker says Failed fail in one sentence naming the phase', async () => {
    // the location the charm's track-1 relation points at: prefix "backups"
    const store = new ObjectStore({ client: s3ClientFor(s3), bucket: BUCKET, prefix: 'backups' });
    await putVeleroBackup(store, { name: 'velero-failed', items: veleroProfileNamespace('velero-dave'), phase: 'Failed' });
    const reason = 'its velero-backup.json says phase Failed, and only a Completed or PartiallyFailed backup is whole.';
    const verified = await action('verify-backup', { 'backup-id': 'velero-failed' });
    expect(verified.exitCode).to.not.equal(0);
    expect(verified.state.actionFailure).to.equal(`Backup velero-failed could not be verified: ${reason}`);
    const restored = await action('restore-state', { 'backup-id': 'velero-failed' });
    expect(restored.exitCode).to.not.equal(0);
    expect(restored.state.actionFailure).to.equal(`Backup velero-failed cannot be restored: ${reason}`);
    const listed = (await action('list-backups', {})).state.actionResults;
    const at = Object.entries(listed).find(([, v]) => v === 'velero-failed')![0].replace(/\.id$/, '');
    expect(listed[`${at}.phase`]).to.equal('Failed');
    await store.deleteFolder('backups/velero-failed/');
  });
});
