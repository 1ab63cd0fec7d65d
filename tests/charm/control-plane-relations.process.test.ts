// The control-plane relations, the charm's hooks and actions run in process (runEvent, over the same fake hook tools'
// rules as the real ./dispatch): the leader asks mysql-k8s for its database, bad MinIO data is a status note (exit 0),
// and backup-state lists what it covers and what not, with reasons. control-plane-roundtrip.process.test.ts runs the packed
// dispatch end to end over these relations.
import { expect } from 'chai';
import { unitStatus } from '../support/juju/hook-context.ts';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState, type FakeRelation } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { minioSideOf, otherConsumer, runMinio, type MinioCharm } from '../support/providers/minio.ts';
import { mysqlK8sRelationChanged, rotateMysqlPassword, type MysqlK8sApp } from '../support/providers/mysql-k8s.ts';

const BUCKET = 'kubeflow-backups';
const DB_SECRET = 'secret:cta0mysqlk8s000000000001';
const DB_PASSWORD = 'kfp-db-password-never-shown';

function relation(id: string, endpoint: string, remoteApp: string, remoteAppData: Record<string, string>): FakeRelation {
  return { id, endpoint, remoteApp, remoteUnits: [`${remoteApp}/0`], localAppData: {}, localUnitData: {}, remoteAppData, remoteUnitsData: { [`${remoteApp}/0`]: {} } };
}

describe('control-plane relations (the charm in process)', function () {
  this.timeout(120_000);
  let s3: S3ServerHandle;
  let cluster: RunningCluster;

  before(async () => {
    [s3, cluster] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 1, seed: 3 })]);
  });
  after(async () => {
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

  function state(extra: FakeRelation[], overrides: Partial<FakeJujuState> = {}): FakeJujuState {
    const start = emptyState({ relations: [s3Relation(track1Data(s3, BUCKET)), ...extra], ...overrides });
    start.secrets[DB_SECRET] = { revisions: [{ username: 'relation-7', password: DB_PASSWORD }] };
    return start;
  }
  // Joined, not answered yet: mysql-k8s defers database_requested until its cluster is initialised
  // (src/relations/mysql_provider.py), so a relation can sit without endpoints or credentials; related but not usable
  // (control-plane-roundtrip.process.test.ts covers a usable one).
  const kfpDb = () => relation('kfp-db:7', 'kfp-db', 'kfp-db', {});
  // Not what MinIO writes (SDI validates its answer against the v1 schema before sending) but what another
  // object-storage provider could: the charm must say so, not fail.
  const brokenMinio = () => relation('object-storage:8', 'object-storage', 'minio', { data: 'access-key: only-this' });
  function dispatch(event: string, start: FakeJujuState, relationId?: string): Promise<EventOutcome> {
    return runEvent(start, { event, ...(relationId ? { relation: relationId } : {}), env: { KUBECONFIG: cluster.kubeconfigPath } });
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
    // Only what the absent relations bring is said missing: ML Metadata needs none, and a backup copies it.
    expect(unitStatus(changed.state)?.message).to.include("KFP's database and Katib's database not backed up: relate kfp-db, katib-db (ML Metadata needs no relation)");
    expect(unitStatus(changed.state)?.message).not.to.include('control plane not covered: relate');
  });

  it('backup-state lists the control-plane parts it covers and those it does not, with why, and no password anywhere', async () => {
    const backup = await dispatch('actions/backup-state', state([kfpDb(), brokenMinio()], { actionParams: { 'include-volumes': false, 'include-control-plane': true } }));
    expect(backup.exitCode, backup.state.actionFailure).to.equal(0);
    const results = backup.state.actionResults;
    expect(results['control-plane.covered']).to.equal('nothing');
    const notCovered = Object.entries(results).filter(([key]) => key.startsWith('control-plane.not-covered.')).map(([, value]) => value);
    expect(notCovered).to.have.length(4);
    // No kubelet here: mlmd's claim stays Pending, so ML Metadata is said not covered instead of waiting on a Job.
    expect(notCovered).to.include('control plane not covered: ML Metadata (SQLite mlmd.db on mlmd\'s mlmd-data storage): the mlmd-data claim mlmd-mlmd-data-mlmd-uuid-mlmd-0 is not bound.');
    expect(notCovered).to.include('control plane not covered: relate katib-db to the mysql-k8s application of Katib (katib-db) to cover experiment results.');
    expect(notCovered.some((sentence) => sentence.startsWith('control plane not covered: kfp-db is related but the database has not published its endpoints yet'))).to.equal(true);
    expect(notCovered.some((sentence) => sentence.startsWith('control plane not covered: object-storage is related but'))).to.equal(true);
    const { actionResults, actionLogs, logs, statusHistory, calls } = backup.state;
    expect(JSON.stringify({ actionResults, actionLogs, logs, statusHistory, calls })).not.to.include(DB_PASSWORD);
    expect(backup.stdout + backup.stderr).not.to.include(DB_PASSWORD);
  });

  // MinIO's own config: keys PyYAML writes unquoted that YAML 1.2 would read as numbers.
  const minio: MinioCharm = { app: 'minio', model: 'kubeflow', accessKey: '1e3', secretKey: '12345678E9', port: 9000 };
  const ourMinioRelation = () => relation('object-storage:8', 'object-storage', 'minio', {});
  const find = (outcome: EventOutcome, id: string) => outcome.state.relations.find((r) => r.id === id)!;

  it('lists our object-storage versions first on every object-storage event whatever the config says, so MinIO answers every consumer', async () => {
    const kfpUi = otherConsumer('object-storage:3', 'kfp-ui', true);
    const stalled = runMinio(minio, [kfpUi, minioSideOf(ourMinioRelation())]);
    expect(stalled).to.deep.equal({ status: 'waiting', message: 'List of <ops.model.Relation object-storage:8> versions not found for apps: kubeflow-upgrader', workloadApplied: false });
    expect(kfpUi.minioAppData['data']).to.equal(undefined);

    let last: EventOutcome | undefined;
    for (const event of ['created', 'joined', 'changed']) {
      // kfp-db's own option is a typo: its request cannot be written, object-storage's must be anyway.
      const start = state([ourMinioRelation(), relation('kfp-db:7', 'kfp-db', 'kfp-db', {})], { config: { 'kfp-db': 'ml-pipeline!' } });
      last = await dispatch(`object-storage-relation-${event}`, start, 'object-storage:8');
      expect(last.exitCode, last.stderr).to.equal(0);
      expect(last.state.relationSets.map((set) => set.relation), event).to.deep.equal(['object-storage:8']);
      const firstWrite = last.state.calls.findIndex((call) => call.tool === 'relation-set');
      const firstOther = last.state.calls.findIndex((call) => !['is-leader', 'relation-ids', 'relation-get', 'relation-set'].includes(call.tool));
      expect(firstWrite, event).to.be.greaterThan(-1);
      if (firstOther !== -1) expect(firstWrite, `${event}: ${last.state.calls[firstOther]!.tool} ran before relation-set`).to.be.lessThan(firstOther);
      expect(unitStatus(last.state)).to.deep.equal({ status: 'blocked', message: 'config option kfp-db must be a MySQL database name' });
    }
    const answered = runMinio(minio, [kfpUi, minioSideOf(find(last!, 'object-storage:8'))]);
    expect(answered.workloadApplied).to.equal(true);
    expect(kfpUi.minioAppData['data']).to.include('secret-key: 12345678E9\n');

    // With MinIO's answer in place and the config fixed, object-storage is usable: 1e3 and 12345678E9 stay strings.
    const fixed = last!.state;
    fixed.config = {};
    const read = await dispatch('object-storage-relation-changed', fixed, 'object-storage:8');
    expect(read.exitCode, read.stderr).to.equal(0);
    expect(unitStatus(read.state)?.message).not.to.include('object-storage is related but');
    expect(unitStatus(read.state)?.message).to.include("Katib's database not backed up: relate katib-db (ML Metadata needs no relation); control plane not covered: kfp-db is related but");
  });

  it('a relation-set refused on kfp-db does not stop object-storage or katib-db, and the hook fails so Juju retries it', async () => {
    const start = state([ourMinioRelation(), relation('kfp-db:7', 'kfp-db', 'kfp-db', {}), relation('katib-db:9', 'katib-db', 'katib-db', {})]);
    start.relationSetFailures = { 'kfp-db:7': 'connection is shut down' };
    const changed = await dispatch('kfp-db-relation-changed', start, 'kfp-db:7');
    expect(changed.exitCode).to.equal(1);
    expect(changed.stderr).not.to.match(/\n\s+at /);
    expect(changed.state.relationSets.map((set) => set.relation)).to.deep.equal(['object-storage:8', 'katib-db:9']);
    expect(unitStatus(changed.state)).to.deep.equal({ status: 'waiting', message: 'kfp-db request not written: ERROR connection is shut down; Juju retries this hook' });
    expect(changed.state.logs.some((log) => log.level === 'ERROR' && log.message.includes('kfp-db request not written'))).to.equal(true);
  });

  it('reads mysql-k8s as data_interfaces answers it: secret-user, a trailing-dot endpoint, rotation with --refresh, a changed name said', async () => {
    const created: string[] = [];
    const mysql: MysqlK8sApp = { app: 'kfp-db', model: 'kubeflow', modelUuid: '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0', version: '8.0.41-0ubuntu0.22.04.1', createDatabase: async (database) => void created.push(database) };
    const joined = await dispatch('kfp-db-relation-joined', state([relation('kfp-db:7', 'kfp-db', 'kfp-db', {})]), 'kfp-db:7');
    expect(joined.exitCode, joined.stderr).to.equal(0);
    const answer = await mysqlK8sRelationChanged(joined.state, find(joined, 'kfp-db:7'), mysql, 'first-password-value');
    expect(answer).to.deep.equal({ requested: 'mlpipeline', user: 'relation-7_0b1c2d3e4f50617' });
    const databag = find(joined, 'kfp-db:7').remoteAppData;
    expect(databag['endpoints']).to.equal('kfp-db-primary.kubeflow.svc.cluster.local.:3306');
    expect(databag).to.not.have.property('password');

    const changed = await dispatch('kfp-db-relation-changed', joined.state, 'kfp-db:7');
    expect(changed.exitCode, changed.stderr).to.equal(0);
    expect(unitStatus(changed.state)?.message).not.to.include('kfp-db is related but');
    const uri = databag['secret-user']!;
    const secretReads = changed.state.calls.filter((call) => call.tool === 'secret-get' && call.args.includes(uri));
    expect(secretReads.length).to.be.greaterThan(0);
    expect(secretReads.every((call) => call.args.includes('--refresh'))).to.equal(true);

    await rotateMysqlPassword(changed.state, find(changed, 'kfp-db:7'), 'rotated-password-value', async () => undefined);
    // secret-changed names the secret that changed (JUJU_SECRET_ID), as Juju's hook context does
    const rotated = await runEvent(changed.state, { event: 'secret-changed', secret: { id: uri }, env: { KUBECONFIG: cluster.kubeconfigPath } });
    expect(rotated.state.secrets[uri]!.tracked).to.equal(2);
    const { actionResults, logs, statusHistory, calls } = rotated.state;
    expect(JSON.stringify({ actionResults, logs, statusHistory, calls })).not.to.include('rotated-password-value');

    // A new name for kfp-db: our request changes, mysql-k8s ignores a changed (not added) `database`, and we say so.
    rotated.state.config = { 'kfp-db': 'pipelines' };
    const renamed = await dispatch('config-changed', rotated.state, undefined);
    expect(find(renamed, 'kfp-db:7').localAppData['database']).to.equal('pipelines');
    expect(await mysqlK8sRelationChanged(renamed.state, find(renamed, 'kfp-db:7'), mysql, 'unused')).to.deep.equal({ requested: undefined });
    expect(created).to.deep.equal(['mlpipeline']);
    const after = await dispatch('kfp-db-relation-changed', renamed.state, 'kfp-db:7');
    expect(unitStatus(after.state)?.message).to.include('control plane not covered: kfp-db is related but mysql-k8s serves database mlpipeline, not the configured pipelines');
  });

  it('restore-state leaves the control plane alone unless asked', async () => {
    const restore = await dispatch('actions/restore-state', state([], { actionParams: { 'backup-id': 'latest', 'dry-run': true } }));
    expect(restore.exitCode, restore.state.actionFailure).to.equal(0);
    expect(restore.state.actionResults['control-plane']).to.equal('not restored (include-control-plane=false)');
  });
});
