// The control-plane copies with `encryption-key` on a real Ceph RADOS Gateway (tests/support/rgw) as the backup store:
// the KFP and Katib dumps and the MinIO bucket go into the control-plane restic repository there, each pinned by its
// full snapshot id, and the restore brings rows and objects back equal; then the same parts as plain files (no key).
// Real MariaDB, real restic and rclone run by the local Job runner; s3rver stands in for Kubeflow's MinIO, as in
// restic.process.test.ts. The oracle is the test fixtures' reading of the databases and the bucket (fixtures.ts) and
// radosgw's own listing, never product code. `npm run test:rgw`.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { startMariaDb, type MariaDbHandle } from '../support/mariadb/server.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { rgwSettings } from '../support/rgw/settings.ts';
import { backupControlPlane, restoreControlPlane, type ControlPlaneTargets } from '../../src/controlplane/engine.ts';
import { LocalJobKube } from './local-kube.ts';
import { controlPlaneState, emptyBucket, listKeys, putObject, relatedControlPlane, s3Client, seedKfp } from './fixtures.ts';

const KEY = 'control-plane key on radosgw: correct horse battery staple';
const REPOSITORY = 'kubeflow/restic/_control-plane';

describe('control-plane copies on radosgw (restic repository with encryption-key, and plain files)', function () {
  this.timeout(300_000);
  let db: MariaDbHandle;
  let rgw: RgwHandle;
  let minio: S3ServerHandle;
  let minioClient: S3Client;
  let rgwClient: S3Client;
  let targets: ControlPlaneTargets;

  const keysUnder = (prefix: string) => listKeys(rgwClient, 'backups', prefix);
  /** drops what a restore must bring back: the KFP tables, Katib's rows, MinIO's objects */
  const loseEverything = async () => {
    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines;', 'mlpipeline');
    await db.sql('DELETE FROM observation_logs;', 'katib');
    await emptyBucket(minioClient, 'mlpipeline');
  };

  before(async function () {
    [db, rgw, minio] = await Promise.all([startMariaDb(), startRgw({ buckets: ['backups'] }), startS3Server({ buckets: ['mlpipeline'] })]);
    minioClient = s3Client(minio);
    rgwClient = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    targets = await relatedControlPlane(db, minio);
    await seedKfp(db, 'mlpipeline', 10);
    await db.sql("CREATE TABLE observation_logs (trial_name varchar(255), metric_name varchar(255), value text); INSERT INTO observation_logs VALUES ('trial-ü', 'accuracy', '0.93');", 'katib');
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/model.bin', randomBytes(6 * 1024 * 1024));
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/metrics.json', Buffer.from('{"accuracy":0.93}'));
  });
  after(async function () {
    minioClient?.destroy();
    rgwClient?.destroy();
    await Promise.all([db?.stop(), rgw?.stop(), minio?.stop()]);
  });

  it('with a key: every part a pinned snapshot in the repository on radosgw, restored equal', async function () {
    const original = await controlPlaneState(db, minioClient);
    const kube = new LocalJobKube();
    const options = { backupId: 'kf-20250301-090000-c0ffee', namespace: 'kubeflow', targets, s3: rgwSettings(rgw, 'backups', 'kubeflow'), encryptionKey: KEY };
    const result = await backupControlPlane(kube, options);
    expect(result.notCovered).to.deep.equal([]);
    expect(result.entries.map((e) => e.part)).to.deep.equal(['kfp-db', 'katib-db', 'minio']);
    const snapshotFiles = (await keysUnder(`${REPOSITORY}/snapshots/`)).map((k) => k.slice(k.lastIndexOf('/') + 1));
    expect(snapshotFiles.sort()).to.deep.equal(result.entries.map((e) => e.restic!.snapshot).sort());

    await loseEverything();
    const restored = await restoreControlPlane(kube, { ...options, include: true, entries: result.entries });
    expect(restored.restored).to.have.length(3);
    expect(await controlPlaneState(db, minioClient)).to.deep.equal(original);
    expect(kube.remaining('Secret')).to.deep.equal([]);
    expect(kube.remaining('Job')).to.deep.equal([]);
  });

  it('without a key: plain files under the backup on radosgw, restored equal', async function () {
    const original = await controlPlaneState(db, minioClient);
    const kube = new LocalJobKube();
    const options = { backupId: 'kf-20250301-080000-0dd0dd', namespace: 'kubeflow', targets, s3: rgwSettings(rgw, 'backups', 'kubeflow') };
    const plain = await backupControlPlane(kube, options);
    expect(plain.entries.every((e) => e.restic === undefined)).to.equal(true);
    expect(await keysUnder(`kubeflow/backups/${options.backupId}/control-plane/mysql/`)).to.include(`kubeflow/backups/${options.backupId}/control-plane/mysql/mlpipeline.sql.gz`);

    await loseEverything();
    const restored = await restoreControlPlane(kube, { ...options, include: true, entries: plain.entries });
    expect(restored.restored).to.have.length(3);
    expect(await controlPlaneState(db, minioClient)).to.deep.equal(original);
  });
});
