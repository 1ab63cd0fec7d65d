// The control plane through the real dispatch, with nothing configured beyond the relations: kfp-db points at a real
// MariaDB run as mysql-k8s runs MySQL (binary log on, GTIDs, log_bin_trust_function_creators OFF) holding KFP-like
// tables with a trigger, a stored function and a 20 MiB row; object-storage at a second s3rver playing MinIO. The
// relation data are what the provider models (tests/support/providers) write for our charm's requests. The copy Jobs
// run in the embedded cluster on the simulated kubelet with the default official images (mysql:8.4 → the local
// MariaDB client tools, rclone → Debian's rclone). backup-state → wipe → restore-state include-control-plane=true:
// refused while KFP runs, refused before any change while the server would refuse the function, then equal.
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, HeadObjectCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/store/s3-client.ts';
import { makeCertificates } from '../support/cluster/tls.ts';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState, type FakeRelation } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { simulatedKubelet, type SimulatedKubelet } from '../support/kubelet/index.ts';
import { startMariaDb, type MariaDbHandle } from '../support/mariadb/server.ts';
import { pvcFolder } from '../support/kubelet/storage.ts';
import { execa } from 'execa';
import {
  bucketDigest, emptyBucket, getObject, listKeys, putObject, s3Client, seedKfp, seedLargeRowAndFunction, snapshotKfp, snapshotLargeRowAndFunction,
} from '../controlplane/fixtures.ts';
import { minioSideOf, runMinio, type MinioCharm } from '../support/providers/minio.ts';
import { mysqlK8sRelationChanged, type MysqlK8sApp } from '../support/providers/mysql-k8s.ts';

const BUCKET = 'kubeflow-backups';
const DB_PASSWORD = 'kfp-Pässword "with" $(quotes)';
// MinIO's keys: the secret is one YAML 1.2 reads as a number, and PyYAML leaves unquoted.
const MINIO_KEYS = { accessKeyId: 'minio-access', secretAccessKey: '12345678E9' };
const STATEFULSETS = { group: 'apps', resource: 'statefulsets' };
const KFP_WRITERS = ['kfp-api', 'kfp-persistence', 'kfp-schedwf'];
const MLMD_WRITERS = ['mlmd', 'kfp-metadata-writer'];
const WRITERS = [...KFP_WRITERS, ...MLMD_WRITERS];
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
// unit 0's claim of mlmd's storage, as the simulated model names it (tests/support/cluster/kubeflow/model-workloads.ts)
const MLMD_CLAIM = 'mlmd-mlmd-data-mlmd-uuid-mlmd-0';

// ML Metadata's tables, shaped like ml-metadata's SQLite schema (a few of them), with rows.
const MLMD_SEED = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript('''
CREATE TABLE Type (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(255) NOT NULL, version VARCHAR(255), type_kind TINYINT(1) NOT NULL);
CREATE TABLE Artifact (id INTEGER PRIMARY KEY AUTOINCREMENT, type_id INT NOT NULL, uri TEXT, state INT, name VARCHAR(255), create_time_since_epoch INT NOT NULL DEFAULT 0);
CREATE TABLE Execution (id INTEGER PRIMARY KEY AUTOINCREMENT, type_id INT NOT NULL, last_known_state INT, name VARCHAR(255));
INSERT INTO Type (name, type_kind) VALUES ('system.Model', 1), ('system.ContainerExecution', 0);
''')
for i in range(200):
    db.execute('INSERT INTO Artifact (type_id, uri, state, name, create_time_since_epoch) VALUES (1, ?, 2, ?, ?)', (f'minio://mlpipeline/v2/artifacts/run-{i}/model', f'model-{i} ü', 1700000000 + i))
    db.execute('INSERT INTO Execution (type_id, last_known_state, name) VALUES (2, 3, ?)', (f'run-{i}',))
db.commit()
`;
const MLMD_SNAPSHOT = "import sqlite3, sys\nprint('\\n'.join(sqlite3.connect(sys.argv[1]).iterdump()))";
const SERVICES = { group: '', resource: 'services' };
const JOBS = { group: 'batch', resource: 'jobs' };
const SECRETS = { group: '', resource: 'secrets' };

describe('control-plane round trip through the real dispatch and the simulated kubelet', function () {
  this.timeout(300_000);
  let charmDir: string;
  let store: S3ServerHandle;
  let minio: S3ServerHandle;
  let minioClient: S3Client;
  let storeClient: S3Client;
  let db: MariaDbHandle;
  let cluster: RunningCluster;
  let kubelet: SimulatedKubelet;
  let stopKubelet: () => void;
  let dataDir: string;
  /** a second store: TLS with a certificate from a private CA, as an on-premises MinIO or Ceph RGW often has */
  let tlsStore: S3ServerHandle;
  let caCert: string;

  before(async () => {
    [charmDir, store, minio, db, cluster] = await Promise.all([
      ensureCharmBuilt(), startS3Server({ buckets: [BUCKET], multipartEtag: 'aws' }), startS3Server({ buckets: ['mlpipeline'], credentials: MINIO_KEYS }), startMariaDb({ mysqlK8s: true }), startCluster({ profiles: 1, seed: 5 }),
    ]);
    dataDir = mkdtempSync(join(tmpdir(), 'cp-kubelet-'));
    kubelet = simulatedKubelet({ dataDir, configRetryMs: 3000 });
    stopKubelet = kubelet.start(cluster.api);
    // mlmd's claim binds (Immediate) and mlmd has written its SQLite file there.
    await until('the mlmd claim to bind', async () => (cluster.api.get(PVCS, MLMD_CLAIM, 'kubeflow')?.status as { phase?: string } | undefined)?.phase === 'Bound');
    await execa('python3', ['-c', MLMD_SEED, mlmdFile()]);
    minioClient = s3Client(minio);
    storeClient = s3Client(store);
    // What the relations name: mysql-k8s's primary Service and MinIO's, both in the kubeflow model.
    const service = (name: string, port: number) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'kubeflow' }, spec: { ports: [{ port }] } });
    cluster.api.create(SERVICES, service('kfp-db-primary', db.port));
    cluster.api.create(SERVICES, service('minio', Number(new URL(minio.endpoint).port)));
    const pems = await makeCertificates();
    caCert = pems.caCert;
    writeFileSync(join(dataDir, 'store-key.pem'), pems.key);
    writeFileSync(join(dataDir, 'store-cert.pem'), pems.cert);
    tlsStore = await startS3Server({ buckets: [BUCKET], tlsKeyFile: join(dataDir, 'store-key.pem'), tlsCertFile: join(dataDir, 'store-cert.pem') });
  });
  after(async () => {
    stopKubelet?.();
    await kubelet?.idle();
    minioClient?.destroy();
    storeClient?.destroy();
    await Promise.all([store?.stop(), tlsStore?.stop(), minio?.stop(), db?.stop(), cluster?.stop()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  // Our charm's requests, answered by the provider models: mysql-k8s creates the database and its scoped user in the
  // MariaDB (its port stands in for 3306), MinIO publishes its data once our versions are listed.
  let related: FakeJujuState | undefined;
  let relationUser = '';
  async function relatedState(): Promise<FakeJujuState> {
    if (related) return structuredClone(related);
    const empty = (id: string, endpoint: string, app: string): FakeRelation => ({
      id, endpoint, remoteApp: app, remoteUnits: [`${app}/0`], localAppData: {}, localUnitData: {}, remoteAppData: {}, remoteUnitsData: { [`${app}/0`]: {} },
    });
    const start = emptyState({ relations: [s3Relation(track1Data(store, BUCKET)), empty('kfp-db:7', 'kfp-db', 'kfp-db'), empty('object-storage:8', 'object-storage', 'minio')] });
    const joined = await dispatch('kfp-db-relation-joined', start, 'kfp-db:7');
    expect(joined.exitCode, joined.stderr).to.equal(0);
    const mysql: MysqlK8sApp = {
      app: 'kfp-db', model: 'kubeflow', modelUuid: '7c4f1f1e-0000-4000-8000-00000000cafe', version: '8.0.41-0ubuntu0.22.04.1', port: db.port,
      createDatabase: async (database, user, password) => {
        await db.sql(`CREATE DATABASE \`${database}\`;`);
        await db.createUser(user, password, `ALL PRIVILEGES ON \`${database}\`.*`);
      },
    };
    const relationOf = (id: string) => joined.state.relations.find((r) => r.id === id)!;
    const answer = await mysqlK8sRelationChanged(joined.state, relationOf('kfp-db:7'), mysql, DB_PASSWORD);
    expect(answer.requested).to.equal('mlpipeline');
    relationUser = answer.user!;
    const minioCharm: MinioCharm = { app: 'minio', model: 'kubeflow', accessKey: MINIO_KEYS.accessKeyId, secretKey: MINIO_KEYS.secretAccessKey, port: Number(new URL(minio.endpoint).port) };
    expect(runMinio(minioCharm, [minioSideOf(relationOf('object-storage:8'))]).workloadApplied).to.equal(true);
    related = joined.state;
    return structuredClone(related);
  }
  /** The related state with the action's params, and s3-integrator's answer replaced when `s3Data` is given. */
  async function state(actionParams: Record<string, unknown>, s3Data?: Record<string, string>): Promise<FakeJujuState> {
    const start = await relatedState();
    start.actionParams = actionParams;
    if (s3Data) start.relations.find((r) => r.endpoint === 's3-credentials')!.remoteAppData = s3Data;
    return start;
  }
  function dispatch(event: string, start: FakeJujuState, relation?: string): Promise<DispatchOutcome> {
    return runDispatch(charmDir, start, { event, ...(relation ? { relation } : {}), env: { KUBECONFIG: cluster.kubeconfigPath } });
  }
  function mlmdFile(): string {
    return join(pvcFolder(dataDir, 'kubeflow', MLMD_CLAIM), 'mlmd.db');
  }
  async function mlmdSnapshot(): Promise<string> {
    return (await execa('python3', ['-c', MLMD_SNAPSHOT, mlmdFile()])).stdout;
  }
  async function readyReplicas(app: string): Promise<number | undefined> {
    return (cluster.api.get(STATEFULSETS, app, 'kubeflow')?.status as { readyReplicas?: number } | undefined)?.readyReplicas;
  }
  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  function leftovers(): string[] {
    const selector = 'app.kubernetes.io/managed-by=kubeflow-upgrader';
    return [...cluster.api.list(SECRETS, { namespace: 'kubeflow', labelSelector: selector }), ...cluster.api.list(JOBS, { namespace: 'kubeflow', labelSelector: selector })]
      .map((o) => `${o.kind}/${o.metadata.name}`);
  }
  function expectNoPassword(outcome: DispatchOutcome): void {
    const { actionResults, actionLogs, logs, statusHistory, calls } = outcome.state;
    for (const secret of [DB_PASSWORD, MINIO_KEYS.secretAccessKey]) {
      expect(JSON.stringify({ actionResults, actionLogs, logs, statusHistory, calls })).not.to.include(secret);
      expect(outcome.stdout + outcome.stderr).not.to.include(secret);
    }
  }

  it('backs up kfp-db (trigger, stored function, 20 MiB row) and MinIO, refuses to restore into a running KFP, then restores them equal', async () => {
    const base = await relatedState();
    await seedKfp(db, 'mlpipeline', 25);
    await seedLargeRowAndFunction(db, 'mlpipeline', relationUser);
    const artefacts: Record<string, Buffer> = {
      'artifacts/training-pipeline/run-1/model.bin': randomBytes(200_000),
      'artifacts/training-pipeline/run-1/metrics.json': Buffer.from('{"accuracy":0.97}'),
      'pipelines/流水线 ü.yaml': Buffer.from('name: ünïcødé\n'),
    };
    for (const [key, body] of Object.entries(artefacts)) await putObject(minioClient, 'mlpipeline', key, body);
    const rowsBefore = await snapshotKfp(db, 'mlpipeline');
    const largeBefore = await snapshotLargeRowAndFunction(db, 'mlpipeline');
    const objectsBefore = await bucketDigest(minioClient, 'mlpipeline');
    const mlmdBefore = await mlmdSnapshot();
    expect(mlmdBefore).to.include("model-199 ü");
    expect(base.relations.find((r) => r.id === 'kfp-db:7')!.remoteAppData['endpoints']).to.equal(`kfp-db-primary.kubeflow.svc.cluster.local.:${db.port}`);

    const backup = await dispatch('actions/backup-state', await state({ 'include-volumes': false, 'include-control-plane': true }));
    expect(backup.exitCode, `${backup.state.actionFailure}\n${backup.stderr.slice(-3000)}`).to.equal(0);
    const results = backup.state.actionResults;
    const id = results['backup-id']!;
    expect(results['control-plane.covered']).to.equal('kfp-db (database mlpipeline); object-storage (bucket mlpipeline); mlmd (SQLite mlmd.db)');
    const notCovered = Object.entries(results).filter(([key]) => key.startsWith('control-plane.not-covered.')).map(([, value]) => value);
    expect(notCovered).to.deep.equal(['control plane not covered: relate katib-db to the mysql-k8s application of Katib (katib-db) to cover experiment results.']);
    expect(Number(results['control-plane.bytes'])).to.be.greaterThan(200_000);
    expectNoPassword(backup);
    expect(leftovers()).to.deep.equal([]);

    // The manifest records each part with its size, checksum and the tools that made it.
    const prefix = `backups/backups/${id}/`;
    const manifest = JSON.parse((await getObject(storeClient, BUCKET, `${prefix}kubeflow-upgrader.json`)).toString('utf8')) as { extras: { controlPlane: { entries: { part: string; bytes: number; sha256?: string; tool: string }[] } } };
    const entries = manifest.extras.controlPlane.entries;
    expect(entries.map((e) => e.part)).to.deep.equal(['kfp-db', 'mlmd', 'minio']);
    expect(await listKeys(storeClient, BUCKET, `${prefix}control-plane/`)).to.include(`${prefix}control-plane/sqlite/mlmd.db.gz`);
    expect(entries[0]!.bytes).to.be.greaterThan(0);
    expect(entries[0]!.sha256).to.match(/^[0-9a-f]{64}$/);
    expect(entries[0]!.tool).to.match(/dump/i);
    expect(entries[2]!.bytes).to.equal(Object.values(artefacts).reduce((n, b) => n + b.length, 0));
    expect(await listKeys(storeClient, BUCKET, `${prefix}control-plane/`)).to.include(`${prefix}control-plane/mysql/mlpipeline.sql.gz`);

    // Wipe: tables gone (a stray one appears), bucket emptied (a stray object appears).
    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines, pipeline_versions; DROP FUNCTION runs_since; CREATE TABLE stray (x int);', 'mlpipeline');
    await emptyBucket(minioClient, 'mlpipeline');
    await putObject(minioClient, 'mlpipeline', 'made-after-the-backup', Buffer.from('stray'));
    await execa('python3', ['-c', "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\ndb.execute('DELETE FROM Artifact WHERE id > 100')\ndb.execute(\"INSERT INTO Execution (type_id, name) VALUES (2, 'made-after-the-backup')\")\ndb.commit()", mlmdFile()]);
    const mlmdAfterWipe = await mlmdSnapshot();
    expect(mlmdAfterWipe).to.not.equal(mlmdBefore);
    const untouched = async () => {
      expect(await db.sql("SHOW TABLES LIKE 'stray'", 'mlpipeline')).to.equal('stray');
      expect(Object.keys(await bucketDigest(minioClient, 'mlpipeline'))).to.deep.equal(['made-after-the-backup']);
    };

    // KFP runs (the model's StatefulSets are ready): refused before any write, each writer named with its command.
    await until('the KFP and MLMD StatefulSets to be ready', async () => (await Promise.all(WRITERS.map(readyReplicas))).every((n) => n === 1));
    const busy = await dispatch('actions/restore-state', await state({ 'backup-id': id, 'include-control-plane': true }));
    expect(busy.exitCode).to.not.equal(0);
    expect(busy.state.actionFailure).to.match(/^Restore refused before any write: the control plane is not quiet: /);
    for (const app of WRITERS) expect(busy.state.actionFailure).to.include(`StatefulSet kubeflow/${app} has 1 ready replica(s) (stop it: juju scale-application ${app} 0)`);
    expect(await mlmdSnapshot()).to.equal(mlmdAfterWipe);
    await untouched();
    expect(leftovers()).to.deep.equal([]);

    // juju scale-application <app> 0 sets the StatefulSet's replicas; wait for the pods to go.
    for (const app of WRITERS) cluster.api.mergePatch(STATEFULSETS, app, 'kubeflow', { spec: { replicas: 0 } });
    await until('the KFP and MLMD StatefulSets to scale to 0', async () => (await Promise.all(WRITERS.map(readyReplicas))).every((n) => n === 0));

    // The server has the binary log on and log_bin_trust_function_creators OFF: the relation user may not create the
    // trigger and the function, and the load stops before the database is emptied.
    const binlog = await dispatch('actions/restore-state', await state({ 'backup-id': id, 'include-control-plane': true }));
    expect(binlog.exitCode).to.not.equal(0);
    expect(binlog.state.actionFailure).to.include('Restore of kfp-db failed: the dump holds triggers or stored functions');
    expect(binlog.state.actionFailure).to.include('SET GLOBAL log_bin_trust_function_creators = ON');
    expect(await mlmdSnapshot()).to.equal(mlmdAfterWipe);
    expect(await db.sql("SHOW TABLES LIKE 'stray'", 'mlpipeline')).to.equal('stray');
    expect(leftovers()).to.deep.equal([]);

    // What the message asks of the database's admin, then the restore goes through.
    await db.sql('SET GLOBAL log_bin_trust_function_creators = ON;');
    const restore = await dispatch('actions/restore-state', await state({ 'backup-id': id, 'include-control-plane': true }));
    expect(restore.exitCode, `${restore.state.actionFailure}\n${restore.stderr.slice(-3000)}`).to.equal(0);
    expect(restore.state.actionResults['control-plane']).to.equal('3 part(s) restored');
    expect(await mlmdSnapshot()).to.equal(mlmdBefore);
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(rowsBefore);
    expect(await snapshotLargeRowAndFunction(db, 'mlpipeline')).to.equal(largeBefore);
    expect(largeBefore).to.include(`pv-large\t${20 * 1024 * 1024}\t`);
    expect(await db.sql("SHOW TABLES LIKE 'stray'", 'mlpipeline')).to.equal('');
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(objectsBefore);
    expectNoPassword(restore);
    expect(leftovers()).to.deep.equal([]);
  });
  it('with encryption-key stores kfp-db, ML Metadata and MinIO encrypted in the control-plane restic repository (no plaintext in the bucket), verifies it and restores them equal', async () => {
    const KEY_SECRET = 'secret:cta0controlplanekey0000001';
    const KEY = 'control-plane passphrase of the operator';
    const keyed = async (params: Record<string, unknown>) => {
      const start = await state(params);
      start.config['encryption-key'] = KEY_SECRET;
      start.secrets[KEY_SECRET] = { revisions: [{ key: KEY }] };
      return start;
    };
    // the documented derivation (docs/reliability.md), computed here: it must never be printed either
    const password = Buffer.from(hkdfSync('sha256', KEY, 'kubeflow-upgrader restic', 'kubeflow-upgrader control-plane restic repository password v1', 32)).toString('hex');
    const noSecret = (outcome: DispatchOutcome) => {
      expectNoPassword(outcome);
      const { actionResults, actionLogs, logs, statusHistory, calls } = outcome.state;
      for (const secret of [KEY, password]) {
        expect(JSON.stringify({ actionResults, actionLogs, logs, statusHistory, calls })).not.to.include(secret);
        expect(outcome.stdout + outcome.stderr).not.to.include(secret);
      }
    };
    await relatedState(); // mysql-k8s has made the database and its user
    // KFP and MLMD stopped, the function allowed (what the first case leaves, made sure of here)
    for (const app of WRITERS) cluster.api.mergePatch(STATEFULSETS, app, 'kubeflow', { spec: { replicas: 0 } });
    await until('the KFP and MLMD StatefulSets to scale to 0', async () => (await Promise.all(WRITERS.map(readyReplicas))).every((n) => !n));
    await db.sql('SET GLOBAL log_bin_trust_function_creators = ON;');
    if ((await db.sql("SHOW TABLES LIKE 'pipelines'", 'mlpipeline')) === '') await seedKfp(db, 'mlpipeline', 5);
    const marker = `kfu-rows-${randomBytes(6).toString('hex')}`;
    const objectMarker = `kfu-object-${randomBytes(6).toString('hex')}`;
    const mlmdMarker = `kfu-mlmd-${randomBytes(6).toString('hex')}`;
    await db.sql(`INSERT INTO pipelines (UUID, Name, Description, CreatedAtInSec) VALUES ('p-${marker}', '${marker}', NULL, 1700000300);`, 'mlpipeline');
    await putObject(minioClient, 'mlpipeline', 'artifacts/keyed-run/notes.txt', Buffer.from(`${objectMarker}\n`));
    await execa('python3', ['-c', `import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\ndb.execute("INSERT INTO Execution (type_id, name) VALUES (2, '${mlmdMarker}')")\ndb.commit()`, mlmdFile()]);
    const rowsBefore = await snapshotKfp(db, 'mlpipeline');
    const objectsBefore = await bucketDigest(minioClient, 'mlpipeline');
    const mlmdBefore = await mlmdSnapshot();

    const backup = await dispatch('actions/backup-state', await keyed({ 'include-volumes': false, 'include-control-plane': true }));
    expect(backup.exitCode, `${backup.state.actionFailure}\n${backup.stderr.slice(-3000)}`).to.equal(0);
    const id = backup.state.actionResults['backup-id']!;
    expect(backup.state.actionResults['control-plane.covered']).to.equal('kfp-db (database mlpipeline); object-storage (bucket mlpipeline); mlmd (SQLite mlmd.db)');
    noSecret(backup);
    expect(leftovers()).to.deep.equal([]);

    // Each part is a snapshot of the control-plane repository, pinned by full id; nothing under the backup's
    // control-plane/ folder, and none of the three markers (nor the object's name) anywhere in the bucket.
    const prefix = `backups/backups/${id}/`;
    const manifest = JSON.parse((await getObject(storeClient, BUCKET, `${prefix}kubeflow-upgrader.json`)).toString('utf8')) as { extras: { controlPlane: { entries: { part: string; restic?: { repository: string; snapshot: string } }[] } } };
    const entries = manifest.extras.controlPlane.entries;
    expect(entries.map((e) => e.part)).to.deep.equal(['kfp-db', 'mlmd', 'minio']);
    const snapshotFiles = await listKeys(storeClient, BUCKET, 'backups/restic/_control-plane/snapshots/');
    for (const entry of entries) {
      expect(entry.restic?.repository).to.equal('backups/restic/_control-plane');
      expect(snapshotFiles).to.include(`backups/restic/_control-plane/snapshots/${entry.restic!.snapshot}`);
    }
    expect(await listKeys(storeClient, BUCKET, `${prefix}control-plane/`)).to.deep.equal([]);
    for (const needle of [marker, objectMarker, mlmdMarker, 'keyed-run/notes.txt']) {
      const holding: string[] = [];
      for (const key of await listKeys(storeClient, BUCKET)) if ((await getObject(storeClient, BUCKET, key)).includes(Buffer.from(needle))) holding.push(key);
      expect(holding, needle).to.deep.equal([]);
    }

    // verify-backup checks the control-plane repository with a Job, each pinned snapshot looked up.
    const verify = await dispatch('actions/verify-backup', await keyed({ 'backup-id': id }));
    expect(verify.state.actionFailure, verify.stderr.slice(-2000)).to.equal(undefined);
    expect(verify.state.actionResults.status).to.equal('ok');
    expect(verify.state.actionResults['restic-repositories.0.namespace']).to.equal('_control-plane');
    expect(verify.state.actionResults['restic-repositories.0.status']).to.equal('ok');
    expect(verify.state.actionResults['restic-repositories.0.pinned-snapshots']).to.equal('3');
    noSecret(verify);

    // Wipe, then restore with the key: rows, objects and ML Metadata come back equal.
    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines;', 'mlpipeline');
    await emptyBucket(minioClient, 'mlpipeline');
    await execa('python3', ['-c', "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\ndb.execute('DELETE FROM Execution')\ndb.commit()", mlmdFile()]);
    const restore = await dispatch('actions/restore-state', await keyed({ 'backup-id': id, 'include-control-plane': true }));
    expect(restore.exitCode, `${restore.state.actionFailure}\n${restore.stderr.slice(-3000)}`).to.equal(0);
    expect(restore.state.actionResults['control-plane']).to.equal('3 part(s) restored');
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(rowsBefore);
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(objectsBefore);
    expect(await mlmdSnapshot()).to.equal(mlmdBefore);
    noSecret(restore);
    expect(leftovers()).to.deep.equal([]);
  });

  it('reaches a TLS store behind a private CA from the copy Jobs (tls-ca-chain), and gives the data the storage-class and the rest STANDARD', async () => {
    // s3-integrator 1 sends the chain as a JSON list of PEM strings (data-platform-libs v0 s3.py update_connection_info).
    const s3Data = track1Data(tlsStore, BUCKET, { 'tls-ca-chain': [caCert], 'storage-class': 'STANDARD_IA' });
    await putObject(minioClient, 'mlpipeline', 'artifacts/tls-run/model.bin', randomBytes(10_000));
    const backup = await dispatch('actions/backup-state', await state({ 'include-volumes': false, 'include-control-plane': true }, s3Data));
    expect(backup.exitCode, `${backup.state.actionFailure}\n${backup.stderr.slice(-3000)}`).to.equal(0);
    const id = backup.state.actionResults['backup-id']!;
    expect(backup.state.actionResults['control-plane.covered']).to.include('kfp-db (database mlpipeline)').and.include('object-storage (bucket mlpipeline)');
    expect(leftovers()).to.deep.equal([]);

    const client = createS3Client({ accessKey: tlsStore.accessKeyId, secretKey: tlsStore.secretAccessKey, bucket: BUCKET, path: '', endpoint: tlsStore.endpoint, region: 'us-east-1', uriStyle: 'path', tlsCaChain: [caCert] });
    try {
      const prefix = `backups/backups/${id}/`;
      const keys = await listKeys(client, BUCKET, prefix);
      // rclone's uploads (the dump, the mirrored MinIO objects) and the charm's own (tarball, manifest).
      expect(keys).to.include(`${prefix}control-plane/mysql/mlpipeline.sql.gz`);
      expect(keys.some((key) => key.startsWith(`${prefix}control-plane/minio/`))).to.equal(true);
      expect(keys).to.include(`${prefix}kubeflow-upgrader.json`);
      const classes = new Map<string, string | undefined>();
      for (const key of keys) classes.set(key, (await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).StorageClass);
      // The data (the tarball, every object under control-plane/) takes the storage-class; what list, verify and a
      // restore read first (marker, manifest, index, side files) is STANDARD whatever the class.
      const isData = (key: string) => key === `${prefix}${id}.tar.gz` || key.startsWith(`${prefix}control-plane/`);
      expect([...classes].filter(([key, storageClass]) => storageClass !== (isData(key) ? 'STANDARD_IA' : 'STANDARD'))).to.deep.equal([]);
      expect(classes.get(`${prefix}velero-backup.json`)).to.equal('STANDARD');
    } finally {
      client.destroy();
    }
  });

  it('never reports as covered a database mysql-k8s created empty for a non-default kfp-db, and says so in the results and the status', async () => {
    // kfp-db=pipelines set before relating: mysql-k8s creates `pipelines`, empty; KFP's tables are in mlpipeline.
    const start = emptyState({
      config: { 'kfp-db': 'pipelines' },
      relations: [s3Relation(track1Data(store, BUCKET)), {
        id: 'kfp-db:11', endpoint: 'kfp-db', remoteApp: 'kfp-db', remoteUnits: ['kfp-db/0'], localAppData: {}, localUnitData: {}, remoteAppData: {}, remoteUnitsData: { 'kfp-db/0': {} },
      }],
    });
    const joined = await dispatch('kfp-db-relation-joined', start, 'kfp-db:11');
    const mysql: MysqlK8sApp = {
      app: 'kfp-db', model: 'kubeflow', modelUuid: '7c4f1f1e-0000-4000-8000-00000000cafe', version: '8.0.41-0ubuntu0.22.04.1', port: db.port,
      createDatabase: async (database, user, password) => {
        await db.sql(`CREATE DATABASE \`${database}\`;`);
        await db.createUser(user, password, `ALL PRIVILEGES ON \`${database}\`.*`);
      },
    };
    const kfpDb = joined.state.relations.find((r) => r.id === 'kfp-db:11')!;
    expect((await mysqlK8sRelationChanged(joined.state, kfpDb, mysql, DB_PASSWORD)).requested).to.equal('pipelines');
    joined.state.actionParams = { 'include-volumes': false, 'include-control-plane': true };
    const backup = await dispatch('actions/backup-state', joined.state);
    expect(backup.exitCode, `${backup.state.actionFailure}\n${backup.stderr.slice(-2000)}`).to.equal(0);
    const sentence = "control plane not covered: kfp-db's database pipelines holds no tables, so it is not Kubeflow Pipelines' (mysql-k8s creates an empty database for a name it is asked; set kfp-db to the database the application uses).";
    expect(backup.state.actionResults['control-plane.covered']).to.equal('mlmd (SQLite mlmd.db)');
    const notCovered = Object.entries(backup.state.actionResults).filter(([key]) => key.startsWith('control-plane.not-covered.')).map(([, value]) => value);
    expect(notCovered).to.include(sentence);
    expectNoPassword(backup);

    const status = await dispatch('update-status', backup.state);
    expect(status.state.statusHistory.at(-1)?.message).to.include(sentence.replace(/\.$/, ''));
  });

  // The red team (issue 29, tests/reliability/red-team.process.test.ts): a bucket writer rewrites one mirrored MinIO object as a
  // multipart upload whose metadata claims the original's MD5, which is what rclone would read as its hash. The restore
  // compares the data folders with the backup's index first, and refuses before MinIO or anything else is written (the
  // Job's own sha256 check of what it downloads, for a change in between, is in tests/controlplane/scripts.process.test.ts).
  it('refuses a restore whose MinIO copy was rewritten in the bucket with a forged MD5, before MinIO is written', async () => {
    await emptyBucket(minioClient, 'mlpipeline');
    const original = randomBytes(150_000);
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-9/model.bin', original);
    const backup = await dispatch('actions/backup-state', await state({ 'include-volumes': false, 'include-control-plane': true }));
    expect(backup.exitCode, `${backup.state.actionFailure}\n${backup.stderr.slice(-3000)}`).to.equal(0);
    const id = backup.state.actionResults['backup-id']!;
    const key = `backups/backups/${id}/control-plane/minio/mlpipeline/artifacts/run-9/model.bin`;
    const forged = Buffer.from(original);
    forged.write('attacker weights', 0);
    const upload = await storeClient.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key, Metadata: { md5chksum: createHash('md5').update(original).digest('base64') } }));
    const part = await storeClient.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId: upload.UploadId, PartNumber: 1, Body: forged }));
    await storeClient.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId: upload.UploadId, MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] } }));
    await emptyBucket(minioClient, 'mlpipeline');
    await putObject(minioClient, 'mlpipeline', 'made-after-the-backup', Buffer.from('live'));
    const before = await bucketDigest(minioClient, 'mlpipeline');

    const restore = await dispatch('actions/restore-state', await state({ 'backup-id': id, 'include-control-plane': true }));
    expect(restore.exitCode).to.not.equal(0);
    expect(restore.state.actionFailure).to.equal(
      `Backup ${id} was refused and nothing was restored: its volume or control-plane files differ from the ones it was made with (File control-plane/minio/mlpipeline/artifacts/run-9/model.bin of backup ${id} was changed in the bucket after the backup was made).`,
    );
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(before);
    expect(leftovers()).to.deep.equal([]);
  });
});
