// The control-plane relations through the real dispatch: the leader asks mysql-k8s for its database, bad MinIO data
// is a status note (exit 0), and backup-state lists what it covers and what not, with reasons.
import { expect } from 'chai';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, unitStatus, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState, type FakeRelation } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';

const BUCKET = 'kubeflow-backups';
const DB_SECRET = 'secret:cta0mysqlk8s000000000001';
const DB_PASSWORD = 'kfp-db-password-never-shown';

function relation(id: string, endpoint: string, remoteApp: string, remoteAppData: Record<string, string>): FakeRelation {
  return { id, endpoint, remoteApp, remoteUnits: [`${remoteApp}/0`], localAppData: {}, localUnitData: {}, remoteAppData, remoteUnitsData: { [`${remoteApp}/0`]: {} } };
}

describe('control-plane relations through the real dispatch', function () {
  this.timeout(120_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let cluster: RunningCluster;

  before(async () => {
    [charmDir, s3, cluster] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 1, seed: 3 })]);
  });
  after(async () => {
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

  function state(extra: FakeRelation[], overrides: Partial<FakeJujuState> = {}): FakeJujuState {
    const start = emptyState({ relations: [s3Relation(track1Data(s3, BUCKET)), ...extra], ...overrides });
    start.secrets[DB_SECRET] = { revisions: [{ username: 'relation-7', password: DB_PASSWORD }] };
    return start;
  }
  // Credentials published, endpoints not yet: related but not usable (control-plane-roundtrip.test.ts covers a usable one).
  const kfpDb = () => relation('kfp-db:7', 'kfp-db', 'kfp-db', { database: 'mlpipeline', 'secret-user': DB_SECRET });
  const brokenMinio = () => relation('object-storage:8', 'object-storage', 'minio', { data: 'access-key: only-this' });
  function dispatch(event: string, start: FakeJujuState, relationId?: string): Promise<DispatchOutcome> {
    return runDispatch(charmDir, start, { event, ...(relationId ? { relation: relationId } : {}), env: { KUBECONFIG: cluster.kubeconfigPath } });
  }

  it('the leader asks for the configured database on kfp-db-relation-joined', async () => {
    const joined = await dispatch('kfp-db-relation-joined', state([relation('kfp-db:7', 'kfp-db', 'kfp-db', {})], { config: { 'kfp-db': 'pipelines' } }), 'kfp-db:7');
    expect(joined.exitCode, joined.stderr).to.equal(0);
    const written = joined.state.relationSets.find((set) => set.relation === 'kfp-db:7');
    expect(written).to.deep.include({ app: true });
    expect(written?.data).to.include({ database: 'pipelines' });
    expect(JSON.parse(written?.data['requested-secrets'] ?? '[]')).to.include('username');
  });

  it('bad MinIO data is a status note, not a failed hook', async () => {
    const changed = await dispatch('object-storage-relation-changed', state([brokenMinio()]), 'object-storage:8');
    expect(changed.exitCode, changed.stderr).to.equal(0);
    expect(changed.stderr).not.to.match(/\n\s+at /);
    expect(unitStatus(changed.state)?.status).to.equal('active');
    expect(unitStatus(changed.state)?.message).to.include("control plane not covered: object-storage is related but MinIO's connection data is missing or has invalid secret-key");
    expect(unitStatus(changed.state)?.message).to.include('control plane not covered: relate kfp-db, katib-db');
  });

  it('backup-state lists the control-plane parts it covers and those it does not, with why, and no password anywhere', async () => {
    const backup = await dispatch('actions/backup-state', state([kfpDb(), brokenMinio()], { actionParams: { 'include-volumes': false, 'include-control-plane': true } }));
    expect(backup.exitCode, backup.state.actionFailure).to.equal(0);
    const results = backup.state.actionResults;
    expect(results['control-plane.covered']).to.equal('nothing');
    const notCovered = Object.entries(results).filter(([key]) => key.startsWith('control-plane.not-covered.')).map(([, value]) => value);
    expect(notCovered).to.have.length(3);
    expect(notCovered).to.include('control plane not covered: relate katib-db to the mysql-k8s application of Katib (katib-db) to cover experiment results.');
    expect(notCovered.some((sentence) => sentence.startsWith('control plane not covered: kfp-db is related but the database has not published its endpoints yet'))).to.equal(true);
    expect(notCovered.some((sentence) => sentence.startsWith('control plane not covered: object-storage is related but'))).to.equal(true);
    const { actionResults, actionLogs, logs, statusHistory, calls } = backup.state;
    expect(JSON.stringify({ actionResults, actionLogs, logs, statusHistory, calls })).not.to.include(DB_PASSWORD);
    expect(backup.stdout + backup.stderr).not.to.include(DB_PASSWORD);
  });

  it('restore-state leaves the control plane alone unless asked', async () => {
    const restore = await dispatch('actions/restore-state', state([], { actionParams: { 'backup-id': 'latest', 'dry-run': true } }));
    expect(restore.exitCode, restore.state.actionFailure).to.equal(0);
    expect(restore.state.actionResults['control-plane']).to.equal('not restored (include-control-plane=false)');
  });
});
