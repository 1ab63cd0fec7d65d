// backupControlPlane / restoreControlPlane end to end: a KFP-like MariaDB and a MinIO stand-in → backup → wiped →
// restore, with the Jobs run locally; failures stop with one sentence and no Secret stays behind.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startMariaDb, type MariaDbHandle } from '../support/mariadb/server.ts';
import { readRequestLog, startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { backupControlPlane, ControlPlaneError, emptyDatabaseSentence, restoreControlPlane, type ControlPlaneTargets } from '../../src/controlplane/engine.ts';
import { LocalJobKube } from './local-kube.ts';
import { bucketDigest, controlPlaneState, relatedControlPlane, emptyBucket, putObject, s3Client, seedKfp, snapshotKfp, storeSettings } from './fixtures.ts';

const BACKUP_ID = 'kf-20250201-101500-0c0ffe';

describe('control-plane engine', function () {
  let db: MariaDbHandle;
  let store: S3ServerHandle;
  let minio: S3ServerHandle;
  let minioClient: S3Client;
  let targets: ControlPlaneTargets;
  const logDir = mkdtempSync(join(tmpdir(), 'store-requests-'));
  const storeRequests = join(logDir, 'requests.jsonl');

  before(async function () {
    [db, store, minio] = await Promise.all([startMariaDb(), startS3Server({ buckets: ['backups'], requestLog: storeRequests }), startS3Server({ buckets: ['mlpipeline'] })]);
    minioClient = s3Client(minio);
    targets = await relatedControlPlane(db, minio);
  });

  after(async function () {
    minioClient?.destroy();
    await Promise.all([db?.stop(), store?.stop(), minio?.stop()]);
    rmSync(logDir, { recursive: true, force: true });
  });

  it('backs up both databases and the bucket, then restores them equal after a wipe', async function () {
    await seedKfp(db, 'mlpipeline', 12);
    await db.sql("CREATE TABLE observation_logs (trial_name varchar(255), metric_name varchar(255), value text); INSERT INTO observation_logs VALUES ('trial-ü', 'accuracy', '0.91');", 'katib');
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/model.bin', randomBytes(50_000));
    const original = await controlPlaneState(db, minioClient);
    const kube = new LocalJobKube();
    const progress: string[] = [];
    const options = { backupId: BACKUP_ID, namespace: 'kubeflow', targets, s3: storeSettings(store, 'backups'), onProgress: (m: string) => progress.push(m) };

    const result = await backupControlPlane(kube, options);
    expect(result.notCovered).to.deep.equal([]);
    expect(result.entries.map((e) => e.part)).to.deep.equal(['kfp-db', 'katib-db', 'minio']);
    expect(result.entries[0]).to.include({ key: `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/mlpipeline.sql.gz` });
    expect(progress.some((m) => m.startsWith('dumped kfp-db'))).to.equal(true);
    expect(kube.remaining('Secret')).to.deep.equal([]);
    expect(kube.secretsCreated).to.have.length(3);

    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines;', 'mlpipeline');
    await db.sql('DELETE FROM observation_logs;', 'katib');
    await emptyBucket(minioClient, 'mlpipeline');

    const skipped = await restoreControlPlane(kube, { ...options, include: false, entries: result.entries });
    expect(skipped.restored).to.deep.equal([]);
    expect(skipped.skipped[0]).to.match(/include-control-plane=true/);

    const restored = await restoreControlPlane(kube, { ...options, include: true, entries: result.entries });
    expect(restored.restored).to.have.length(3);
    expect(await controlPlaneState(db, minioClient)).to.deep.equal(original);
    expect(kube.remaining('Secret')).to.deep.equal([]);
    expect(kube.remaining('Job')).to.deep.equal([]);
  });

  it('reports what is not related and fails in one sentence on bad credentials, leaving no Secret', async function () {
    const kube = new LocalJobKube();
    const options = {
      backupId: BACKUP_ID, namespace: 'kubeflow', s3: storeSettings(store, 'backups'),
      targets: { 'kfp-db': { ...targets['kfp-db']!, password: 'not-the-password' } },
    };
    const failure = await backupControlPlane(kube, options).then(() => undefined, (e: unknown) => e);
    expect(failure).to.be.instanceOf(ControlPlaneError);
    expect((failure as Error).message).to.equal('Backup of kfp-db failed: the dump of database mlpipeline failed: the database refused the credentials (access denied).');
    expect((failure as Error).message).to.not.include('not-the-password');
    expect(kube.remaining('Secret')).to.deep.equal([]);

    const partial = await backupControlPlane(new LocalJobKube(), { ...options, targets: {} });
    expect(partial.entries).to.deep.equal([]);
    expect(partial.notCovered).to.have.length(3);
    expect(partial.notCovered[0]).to.match(/^control plane not covered: relate kfp-db /);
  });

  it('refuses a restore before any write while a writer has ready replicas, naming each and the command that stops it', async function () {
    const kube = new LocalJobKube();
    const options = { backupId: `${BACKUP_ID}-quiet`, namespace: 'kubeflow', targets, s3: storeSettings(store, 'backups') };
    const backup = await backupControlPlane(kube, options);
    await db.sql('CREATE TABLE made_after_the_backup (x int);', 'mlpipeline');
    const secretsBefore = kube.secretsCreated.length;
    // As Juju lays out a sidecar charm (one StatefulSet per application) and as upstream KFP ships katib-db-manager.
    kube.objects.set('statefulsets/kubeflow/kfp-api', {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'kfp-api', namespace: 'kubeflow', labels: { 'app.kubernetes.io/managed-by': 'juju' } },
      spec: { replicas: 1 }, status: { replicas: 1, readyReplicas: 1 },
    });
    kube.objects.set('deployments/kubeflow/katib-db-manager', {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'katib-db-manager', namespace: 'kubeflow' }, spec: { replicas: 2 }, status: { replicas: 2, readyReplicas: 2 },
    });
    const refused = await restoreControlPlane(kube, { ...options, include: true, entries: backup.entries }).then(() => undefined, (e: unknown) => e);
    expect(refused).to.be.instanceOf(ControlPlaneError);
    expect((refused as Error).message).to.equal(
      'Restore refused before any write: the control plane is not quiet: '
      + 'StatefulSet kubeflow/kfp-api has 1 ready replica(s) (stop it: juju scale-application kfp-api 0); '
      + 'Deployment kubeflow/katib-db-manager has 2 ready replica(s) (stop it: kubectl -n kubeflow scale deployment katib-db-manager --replicas=0). '
      + 'Scale them back up after the restore.',
    );
    expect(kube.secretsCreated.length).to.equal(secretsBefore);
    expect(await db.sql("SHOW TABLES LIKE 'made_after_the_backup'", 'mlpipeline')).to.equal('made_after_the_backup');

    // A pipeline run with a pod still running in a profile namespace writes MinIO and MLMD; a running Katib trial
    // reports through katib-db-manager. Pods labelled as Argo (workflow/common/common.go LabelKeyWorkflow) and Katib
    // (pkg/controller.v1beta1/consts/const.go) label them; a finished pod writes nothing.
    const pod = (namespace: string, name: string, labels: Record<string, string>, phase: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, status: { phase } });
    kube.objects.set('pods/team-a/run-1-step-a', pod('team-a', 'run-1-step-a', { 'workflows.argoproj.io/workflow': 'run-1' }, 'Running'));
    kube.objects.set('pods/team-a/run-1-step-b', pod('team-a', 'run-1-step-b', { 'workflows.argoproj.io/workflow': 'run-1' }, 'Pending'));
    kube.objects.set('pods/team-a/run-0-step-a', pod('team-a', 'run-0-step-a', { 'workflows.argoproj.io/workflow': 'run-0' }, 'Succeeded'));
    kube.objects.set('pods/team-b/tune-x7-trial', pod('team-b', 'tune-x7-trial', { 'katib.kubeflow.org/trial': 'tune-x7', 'katib.kubeflow.org/experiment': 'tune' }, 'Running'));
    const runsBusy = await restoreControlPlane(kube, { ...options, include: true, entries: backup.entries }).then(() => undefined, (e: unknown) => e);
    expect((runsBusy as Error).message).to.include(
      "pipeline run (Workflow) team-a/run-1 has 2 pod(s) running (stop it: kubectl -n team-a patch workflow run-1 --type merge -p '{\"spec\":{\"shutdown\":\"Stop\"}}', or wait for the run to end)",
    ).and.include(
      'Katib Experiment team-b/tune has 1 trial pod(s) running (wait for its trials to end (kubectl -n team-b get trials -l katib.kubeflow.org/experiment=tune), or kubectl -n team-b delete experiment tune)',
    ).and.not.include('run-0');
    expect(await db.sql("SHOW TABLES LIKE 'made_after_the_backup'", 'mlpipeline')).to.equal('made_after_the_backup');
    // Without katib-db in the backup the trials may run; the pipeline run still blocks a restore of MinIO and kfp-db.
    const noKatib = await restoreControlPlane(kube, { ...options, include: true, entries: backup.entries.filter((entry) => entry.part !== 'katib-db') }).then(() => undefined, (e: unknown) => e);
    expect((noKatib as Error).message).to.include('team-a/run-1').and.not.include('tune');
    kube.objects.get('pods/team-a/run-1-step-a')!.status = { phase: 'Succeeded' };
    kube.objects.get('pods/team-a/run-1-step-b')!.status = { phase: 'Failed' };

    // Only the parts being restored count: without katib-db in the backup, katib-db-manager may run.
    const kfpOnly = backup.entries.filter((entry) => entry.part !== 'katib-db');
    kube.objects.get('statefulsets/kubeflow/kfp-api')!.status = { replicas: 0, readyReplicas: 0 };
    const restored = await restoreControlPlane(kube, { ...options, include: true, entries: kfpOnly });
    expect(restored.restored.map((entry) => entry.part)).to.deep.equal(['kfp-db', 'minio']);
    expect(await db.sql("SHOW TABLES LIKE 'made_after_the_backup'", 'mlpipeline')).to.equal('');
  });

  it('dumps but never counts as covered a related database without tables', async function () {
    await db.sql('CREATE DATABASE katib_renamed;');
    await db.createUser('relation-12', 'renamed-pass', 'ALL PRIVILEGES ON katib_renamed.*');
    const kube = new LocalJobKube();
    const result = await backupControlPlane(kube, {
      backupId: `${BACKUP_ID}-empty`, namespace: 'kubeflow', s3: storeSettings(store, 'backups'),
      targets: { 'katib-db': { host: db.host, port: db.port, database: 'katib_renamed', username: 'relation-12', password: 'renamed-pass' } },
    });
    expect(result.entries).to.deep.equal([]);
    expect(result.empty).to.deep.equal([emptyDatabaseSentence('katib-db', 'katib_renamed')]);
    expect(result.notCovered).to.include(result.empty[0]);
    expect(result.empty[0]).to.match(/^control plane not covered: katib-db's database katib_renamed holds no tables, so it is not Katib's /);
  });

  it('reports ML Metadata storage without its database as not covered, and goes on with the rest', async function () {
    // mlmd creates /data/mlmd.db when it first starts: storage found through Juju's labels may not hold it yet.
    const kube = new LocalJobKube();
    const result = await backupControlPlane(kube, {
      backupId: `${BACKUP_ID}-nomlmd`, namespace: 'kubeflow', s3: storeSettings(store, 'backups'),
      targets: { mlmd: { claim: 'mlmd-data-mlmd-0', file: 'mlmd.db' }, 'object-storage': targets['object-storage'] },
    });
    expect(result.entries.map((e) => e.part)).to.deep.equal(['minio']);
    expect(result.empty).to.deep.equal(["control plane not covered: ML Metadata's mlmd.db on mlmd-data-mlmd-0 holds no tables yet (mlmd has not started on this storage, or its database is missing)."]);
    expect(result.notCovered).to.include(result.empty[0]);
    expect(kube.remaining('Secret')).to.deep.equal([]);
  });

  it('mirrors a MinIO bucket again by copying inside the backup bucket what an earlier backup holds, uploading only changes', async function () {
    await emptyBucket(minioClient, 'mlpipeline');
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/model.bin', randomBytes(60_000));
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/metrics.json', Buffer.from('{"accuracy":0.91}'));
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-0/deleted-since.txt', Buffer.from('gone by the second backup'));
    const kube = new LocalJobKube();
    const minioOnly = { 'object-storage': targets['object-storage'] };
    const firstId = 'kf-20250202-101500-0c0ffe';
    const first = await backupControlPlane(kube, { backupId: firstId, namespace: 'kubeflow', s3: storeSettings(store, 'backups'), targets: minioOnly });
    const earlier = first.entries[0] as { keyPrefix: string };

    // Same size, other bytes: only a checksum tells it changed.
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/metrics.json', Buffer.from('{"accuracy":0.19}'));
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-2/new.bin', randomBytes(1000));
    await minioClient.send(new DeleteObjectCommand({ Bucket: 'mlpipeline', Key: 'artifacts/run-0/deleted-since.txt' }));
    writeFileSync(storeRequests, '');
    const secondId = 'kf-20250203-101500-0c0ffe';
    const second = await backupControlPlane(kube, {
      backupId: secondId, namespace: 'kubeflow', s3: storeSettings(store, 'backups'), targets: minioOnly,
      minioCopyFrom: new Map([['mlpipeline', earlier.keyPrefix]]),
    });
    const folder = `/backups/kubeflow/backups/${secondId}/control-plane/minio/mlpipeline/`;
    const writes = readRequestLog(storeRequests).filter((e) => e.path.startsWith(folder) && (e.method === 'PUT' || e.method === 'POST'));
    expect(writes.filter((e) => !e.copySource).map((e) => e.path.slice(folder.length)).sort()).to.deep.equal(['artifacts/run-1/metrics.json', 'artifacts/run-2/new.bin']);
    // The earlier copy is copied whole inside the backup bucket, then MinIO synced onto it: the changed object is
    // uploaded over its copy, the unchanged one stays as copied, and the one deleted from MinIO since is deleted again.
    const deletes = readRequestLog(storeRequests).filter((e) => e.path.startsWith(folder) && e.method === 'DELETE');
    expect(deletes.map((e) => e.path.slice(folder.length))).to.deep.equal(['artifacts/run-0/deleted-since.txt']);
    expect(writes.filter((e) => e.copySource).map((e) => [e.path.slice(folder.length), e.copySource!.replace(/^\//, '')]).sort()).to.deep.equal([
      ['artifacts/run-0/deleted-since.txt', `backups/${earlier.keyPrefix}artifacts/run-0/deleted-since.txt`],
      ['artifacts/run-1/metrics.json', `backups/${earlier.keyPrefix}artifacts/run-1/metrics.json`],
      ['artifacts/run-1/model.bin', `backups/${earlier.keyPrefix}artifacts/run-1/model.bin`],
    ]);

    // The second copy is whole on its own: restored after the first is gone, the bucket is as it was.
    const bucketBefore = await bucketDigest(minioClient, 'mlpipeline');
    await emptyBucket(minioClient, 'mlpipeline');
    const { ObjectStore } = await import('../../src/store/objects.ts');
    const storeClient = s3Client(store);
    try {
      await new ObjectStore({ client: storeClient, bucket: 'backups', prefix: 'kubeflow' }).deleteFolder(`backups/${firstId}/`);
    } finally {
      storeClient.destroy();
    }
    const restored = await restoreControlPlane(kube, { backupId: secondId, namespace: 'kubeflow', s3: storeSettings(store, 'backups'), targets: minioOnly, include: true, entries: second.entries });
    expect(restored.restored).to.have.length(1);
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(bucketBefore);
  });
});
