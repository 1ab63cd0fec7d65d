// The control plane through the real dispatch, with nothing configured beyond the relations: kfp-db points at a real
// MariaDB holding KFP-like tables, object-storage at a second s3rver playing MinIO, and the copy Jobs run in the
// embedded cluster on the simulated kubelet with the default official images (mysql:8.4 → the local MariaDB client
// tools, rclone → Debian's rclone). backup-state → wipe → restore-state include-control-plane=true → equal.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
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
import { bucketDigest, emptyBucket, getObject, listKeys, putObject, s3Client, seedKfp, snapshotKfp } from '../controlplane/fixtures.ts';

const BUCKET = 'kubeflow-backups';
const DB_SECRET = 'secret:cta0mysqlk8s000000000007';
const DB_PASSWORD = 'kfp-Pässword "with" $(quotes)';
const SERVICES = { group: '', resource: 'services' };
const JOBS = { group: 'batch', resource: 'jobs' };
const SECRETS = { group: '', resource: 'secrets' };

function relation(id: string, endpoint: string, remoteApp: string, remoteAppData: Record<string, string>): FakeRelation {
  return { id, endpoint, remoteApp, remoteUnits: [`${remoteApp}/0`], localAppData: {}, localUnitData: {}, remoteAppData, remoteUnitsData: { [`${remoteApp}/0`]: {} } };
}

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
      ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startS3Server({ buckets: ['mlpipeline'] }), startMariaDb(), startCluster({ profiles: 1, seed: 5 }),
    ]);
    dataDir = mkdtempSync(join(tmpdir(), 'cp-kubelet-'));
    kubelet = simulatedKubelet({ dataDir, configRetryMs: 3000 });
    stopKubelet = kubelet.start(cluster.api);
    minioClient = s3Client(minio);
    storeClient = s3Client(store);
    // What the relations name: mysql-k8s's primary Service and MinIO's, both in the kubeflow model.
    const service = (name: string, port: number) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'kubeflow' }, spec: { ports: [{ port }] } });
    cluster.api.create(SERVICES, service('kfp-db-primary', db.port));
    cluster.api.create(SERVICES, service('minio', Number(new URL(minio.endpoint).port)));
    await db.sql('CREATE DATABASE mlpipeline;');
    await db.createUser('relation-7', DB_PASSWORD, 'ALL PRIVILEGES ON mlpipeline.*');
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

  function state(actionParams: Record<string, unknown>, s3Data: Record<string, string> = track1Data(store, BUCKET)): FakeJujuState {
    const minioPort = new URL(minio.endpoint).port;
    const start = emptyState({
      relations: [
        s3Relation(s3Data),
        relation('kfp-db:7', 'kfp-db', 'kfp-db', { endpoints: `kfp-db-primary.kubeflow.svc.cluster.local:${db.port}`, database: 'mlpipeline', version: '8.0.36', 'secret-user': DB_SECRET }),
        relation('object-storage:8', 'object-storage', 'minio', {
          _supported_versions: '- v1\n',
          data: `access-key: ${minio.accessKeyId}\nsecret-key: ${minio.secretAccessKey}\nservice: minio\nport: ${minioPort}\nnamespace: kubeflow\nsecure: false\n`,
        }),
      ],
      actionParams,
    });
    start.secrets[DB_SECRET] = { revisions: [{ username: 'relation-7', password: DB_PASSWORD }] };
    return start;
  }
  function dispatch(event: string, start: FakeJujuState): Promise<DispatchOutcome> {
    return runDispatch(charmDir, start, { event, env: { KUBECONFIG: cluster.kubeconfigPath } });
  }
  function leftovers(): string[] {
    const selector = 'app.kubernetes.io/managed-by=kubeflow-upgrader';
    return [...cluster.api.list(SECRETS, { namespace: 'kubeflow', labelSelector: selector }), ...cluster.api.list(JOBS, { namespace: 'kubeflow', labelSelector: selector })]
      .map((o) => `${o.kind}/${o.metadata.name}`);
  }
  function expectNoPassword(outcome: DispatchOutcome): void {
    const { actionResults, actionLogs, logs, statusHistory, calls } = outcome.state;
    expect(JSON.stringify({ actionResults, actionLogs, logs, statusHistory, calls })).not.to.include(DB_PASSWORD);
    expect(outcome.stdout + outcome.stderr).not.to.include(DB_PASSWORD);
  }

  it('backs up kfp-db and MinIO with the default images, then restores them row for row and byte for byte', async () => {
    await seedKfp(db, 'mlpipeline', 25);
    const artefacts: Record<string, Buffer> = {
      'artifacts/training-pipeline/run-1/model.bin': randomBytes(200_000),
      'artifacts/training-pipeline/run-1/metrics.json': Buffer.from('{"accuracy":0.97}'),
      'pipelines/流水线 ü.yaml': Buffer.from('name: ünïcødé\n'),
    };
    for (const [key, body] of Object.entries(artefacts)) await putObject(minioClient, 'mlpipeline', key, body);
    const rowsBefore = await snapshotKfp(db, 'mlpipeline');
    const objectsBefore = await bucketDigest(minioClient, 'mlpipeline');

    const backup = await dispatch('actions/backup-state', state({ 'include-volumes': false, 'include-control-plane': true }));
    expect(backup.exitCode, `${backup.state.actionFailure}\n${backup.stderr.slice(-3000)}`).to.equal(0);
    const results = backup.state.actionResults;
    const id = results['backup-id']!;
    expect(results['control-plane.covered']).to.equal('kfp-db (database mlpipeline); object-storage (bucket mlpipeline)');
    const notCovered = Object.entries(results).filter(([key]) => key.startsWith('control-plane.not-covered.')).map(([, value]) => value);
    expect(notCovered).to.deep.equal(['control plane not covered: relate katib-db to the mysql-k8s application of Katib (katib-db) to cover experiment results.']);
    expect(Number(results['control-plane.bytes'])).to.be.greaterThan(200_000);
    expectNoPassword(backup);
    expect(leftovers()).to.deep.equal([]);

    // The manifest records each part with its size, checksum and the tools that made it.
    const prefix = `backups/backups/${id}/`;
    const manifest = JSON.parse((await getObject(storeClient, BUCKET, `${prefix}kubeflow-upgrader.json`)).toString('utf8')) as { extras: { controlPlane: { entries: { part: string; bytes: number; sha256?: string; tool: string }[] } } };
    const entries = manifest.extras.controlPlane.entries;
    expect(entries.map((e) => e.part)).to.deep.equal(['kfp-db', 'minio']);
    expect(entries[0]!.bytes).to.be.greaterThan(0);
    expect(entries[0]!.sha256).to.match(/^[0-9a-f]{64}$/);
    expect(entries[0]!.tool).to.match(/dump/i);
    expect(entries[1]!.bytes).to.equal(Object.values(artefacts).reduce((n, b) => n + b.length, 0));
    expect(await listKeys(storeClient, BUCKET, `${prefix}control-plane/`)).to.include(`${prefix}control-plane/mysql/mlpipeline.sql.gz`);

    // Wipe: tables gone (a stray one appears), bucket emptied (a stray object appears).
    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines; CREATE TABLE stray (x int);', 'mlpipeline');
    await emptyBucket(minioClient, 'mlpipeline');
    await putObject(minioClient, 'mlpipeline', 'made-after-the-backup', Buffer.from('stray'));

    const restore = await dispatch('actions/restore-state', state({ 'backup-id': id, 'include-control-plane': true }));
    expect(restore.exitCode, `${restore.state.actionFailure}\n${restore.stderr.slice(-3000)}`).to.equal(0);
    expect(restore.state.actionResults['control-plane']).to.equal('2 part(s) restored');
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(rowsBefore);
    expect(await db.sql("SHOW TABLES LIKE 'stray'", 'mlpipeline')).to.equal('');
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(objectsBefore);
    expectNoPassword(restore);
    expect(leftovers()).to.deep.equal([]);
  });
  it('reaches a TLS store behind a private CA from the copy Jobs (tls-ca-chain), and gives every upload the storage-class', async () => {
    // s3-integrator 1 sends the chain as a JSON list of PEM strings (data-platform-libs v0 s3.py update_connection_info).
    const s3Data = track1Data(tlsStore, BUCKET, { 'tls-ca-chain': JSON.stringify([caCert]), 'storage-class': 'STANDARD_IA' });
    await putObject(minioClient, 'mlpipeline', 'artifacts/tls-run/model.bin', randomBytes(10_000));
    const backup = await dispatch('actions/backup-state', state({ 'include-volumes': false, 'include-control-plane': true }, s3Data));
    expect(backup.exitCode, `${backup.state.actionFailure}\n${backup.stderr.slice(-3000)}`).to.equal(0);
    const id = backup.state.actionResults['backup-id']!;
    expect(backup.state.actionResults['control-plane.covered']).to.equal('kfp-db (database mlpipeline); object-storage (bucket mlpipeline)');
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
      expect([...classes].filter(([, storageClass]) => storageClass !== 'STANDARD_IA')).to.deep.equal([]);
    } finally {
      client.destroy();
    }
  });
});
