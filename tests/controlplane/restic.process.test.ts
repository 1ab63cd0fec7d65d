// The control-plane copies with `encryption-key`: the KFP and Katib dumps and the MinIO bucket go into the control-plane
// restic repository (`<path>/restic/_control-plane`), encrypted under a password derived from the key, each pinned by
// its full snapshot id; the bucket then holds none of their plaintext, and the restore brings the rows and objects back
// equal. A backup made without a key (plain files) still restores with a key set. Real MariaDB, real restic and rclone
// run by the local Job runner, s3rver as the store and as MinIO.
//
// Oracles: the password is derived here with node:crypto from the documented salt and label (docs/reliability.md), and
// the repository is read here with this machine's restic, never through product code.
import { hkdfSync, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { execa } from 'execa';
import type { S3Client } from '@aws-sdk/client-s3';
import { startMariaDb, type MariaDbHandle } from '../support/mariadb/server.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { backupControlPlane, ControlPlaneError, restoreControlPlane, type ControlPlaneTargets } from '../../src/controlplane/engine.ts';
import { LocalJobKube } from './local-kube.ts';
import { bucketDigest, controlPlaneState, relatedControlPlane, emptyBucket, getObject, listKeys, putObject, s3Client, seedKfp, snapshotKfp, storeSettings } from './fixtures.ts';

const BACKUP_ID = 'kf-20250301-090000-c0ffee';
const PLAIN_ID = 'kf-20250301-080000-0dd0dd';
const KEY = 'control-plane key: correct horse battery staple';
const REPOSITORY = 'kubeflow/restic/_control-plane';

/** The documented derivation (docs/reliability.md, "Control-plane data with encryption-key"). */
function oraclePassword(key: string): string {
  return Buffer.from(hkdfSync('sha256', key, 'kubeflow-upgrader restic', 'kubeflow-upgrader control-plane restic repository password v1', 32)).toString('hex');
}

describe('control-plane copies in the restic repository (encryption-key)', function () {
  let db: MariaDbHandle;
  let store: S3ServerHandle;
  let minio: S3ServerHandle;
  let storeClient: S3Client;
  let minioClient: S3Client;
  let targets: ControlPlaneTargets;
  const marker = `kfu-confidential-${randomBytes(8).toString('hex')}`;
  const objectMarker = `kfu-object-${randomBytes(8).toString('hex')}`;

  const restic = (args: string[], password = oraclePassword(KEY)) => execa('restic', ['-o', 's3.bucket-lookup=path', '--no-cache', ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp',
      RESTIC_REPOSITORY: `s3:${store.endpoint}/backups/${REPOSITORY}`, RESTIC_PASSWORD: password,
      AWS_ACCESS_KEY_ID: store.accessKeyId, AWS_SECRET_ACCESS_KEY: store.secretAccessKey,
    },
    extendEnv: false,
    reject: false,
  });

  /** Every object of the store bucket whose bytes hold `needle`. */
  async function objectsHolding(needle: string): Promise<string[]> {
    const hits: string[] = [];
    for (const key of await listKeys(storeClient, 'backups')) if ((await getObject(storeClient, 'backups', key)).includes(Buffer.from(needle))) hits.push(key);
    return hits;
  }

  before(async function () {
    [db, store, minio] = await Promise.all([startMariaDb(), startS3Server({ buckets: ['backups'] }), startS3Server({ buckets: ['mlpipeline'] })]);
    storeClient = s3Client(store);
    minioClient = s3Client(minio);
    targets = await relatedControlPlane(db, minio);
    await seedKfp(db, 'mlpipeline', 10);
    await db.sql(`INSERT INTO pipelines VALUES ('p-marker', '${marker}', '${marker} in a description', 1700000100);`, 'mlpipeline');
    await db.sql(`CREATE TABLE observation_logs (trial_name varchar(255), metric_name varchar(255), value text); INSERT INTO observation_logs VALUES ('trial-ü', 'accuracy', '${marker}');`, 'katib');
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/model.bin', randomBytes(40_000));
    await putObject(minioClient, 'mlpipeline', 'artifacts/run-1/metrics.json', Buffer.from(`{"note":"${objectMarker}"}`));
  });

  after(async function () {
    storeClient?.destroy();
    minioClient?.destroy();
    await Promise.all([db?.stop(), store?.stop(), minio?.stop()]);
  });

  it('stores every part encrypted in the repository, pinned by full id, with no plaintext in the bucket; the restore brings it back equal', async function () {
    const original = await controlPlaneState(db, minioClient);
    const kube = new LocalJobKube();
    const progress: string[] = [];
    const options = { backupId: BACKUP_ID, namespace: 'kubeflow', targets, s3: storeSettings(store, 'backups'), encryptionKey: KEY, onProgress: (m: string) => progress.push(m) };

    const result = await backupControlPlane(kube, options);
    expect(result.notCovered).to.deep.equal([]);
    expect(result.entries.map((e) => e.part)).to.deep.equal(['kfp-db', 'katib-db', 'minio']);
    for (const entry of result.entries) {
      expect(entry.restic?.repository).to.equal(REPOSITORY);
      expect(entry.restic?.snapshot).to.match(/^[0-9a-f]{64}$/);
    }
    expect(new Set(result.entries.map((e) => e.restic!.snapshot)).size).to.equal(3);
    // the pinned ids are the repository's snapshot files, as the bucket lists them
    const snapshotFiles = (await listKeys(storeClient, 'backups', `${REPOSITORY}/snapshots/`)).map((k) => k.slice(k.lastIndexOf('/') + 1));
    expect(snapshotFiles.sort()).to.deep.equal(result.entries.map((e) => e.restic!.snapshot).sort());
    // nothing went to the plain control-plane folder, and no Secret stays
    expect(await listKeys(storeClient, 'backups', `kubeflow/backups/${BACKUP_ID}/`)).to.deep.equal([]);
    expect(kube.remaining('Secret')).to.deep.equal([]);
    expect(progress.some((m) => /^dumped kfp-db: \d+ bytes, encrypted$/.test(m))).to.equal(true);

    // Confidential: neither the rows' marker nor the object's is anywhere in the bucket, nor the object's name.
    expect(await objectsHolding(marker)).to.deep.equal([]);
    expect(await objectsHolding(objectMarker)).to.deep.equal([]);
    expect(await objectsHolding('metrics.json')).to.deep.equal([]);

    // The repository opens with the documented password (and not with the unkeyed one), its snapshots carry the
    // backup's and the part's tags, and the dump inside is the database's.
    const listed = await restic(['snapshots', '--json']);
    expect(listed.exitCode, listed.stderr).to.equal(0);
    const snapshots = JSON.parse(listed.stdout) as Array<{ id: string; tags: string[]; paths: string[] }>;
    const byId = new Map(snapshots.map((s) => [s.id, s]));
    const [kfp, katib, bucket] = result.entries;
    expect(byId.get(kfp!.restic!.snapshot)?.tags).to.have.members([`kfu-backup=${BACKUP_ID}`, 'kfu-part=kfp-db']);
    expect(byId.get(katib!.restic!.snapshot)?.tags).to.have.members([`kfu-backup=${BACKUP_ID}`, 'kfu-part=katib-db']);
    expect(byId.get(bucket!.restic!.snapshot)?.tags).to.have.members([`kfu-backup=${BACKUP_ID}`, 'kfu-part=minio-mlpipeline']);
    const dump = await restic(['dump', kfp!.restic!.snapshot, '/mlpipeline.sql']);
    expect(dump.exitCode, dump.stderr).to.equal(0);
    expect(dump.stdout).to.include(marker).and.include('CREATE TABLE `run_details`');
    expect((await restic(['cat', 'config'], 'kubeflow-upgrader-unkeyed-restic-repository')).stderr).to.include('wrong password');

    // A restore without the key refuses before any write, in one sentence that holds no secret.
    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines;', 'mlpipeline');
    await db.sql('DELETE FROM observation_logs;', 'katib');
    await emptyBucket(minioClient, 'mlpipeline');
    const secretsBefore = kube.secretsCreated.length;
    const keyless = await restoreControlPlane(kube, { ...options, encryptionKey: undefined, include: true, entries: result.entries }).then(() => undefined, (e: unknown) => e);
    expect(keyless).to.be.instanceOf(ControlPlaneError);
    expect((keyless as Error).message).to.equal('Restore of kfp-db failed: it is stored encrypted in the control-plane restic repository, which only the encryption-key the backup was made with opens; set that key and rerun.');
    expect(kube.secretsCreated.length).to.equal(secretsBefore);

    const restored = await restoreControlPlane(kube, { ...options, include: true, entries: result.entries });
    expect(restored.restored).to.have.length(3);
    expect(await controlPlaneState(db, minioClient)).to.deep.equal(original);
    expect(kube.remaining('Secret')).to.deep.equal([]);
    expect(kube.remaining('Job')).to.deep.equal([]);
  });

  it('a second backup deduplicates against the first, and a snapshot pinned with the wrong sha256 changes nothing', async function () {
    const kube = new LocalJobKube();
    const options = { backupId: `${BACKUP_ID.slice(0, -1)}1`, namespace: 'kubeflow', targets, s3: storeSettings(store, 'backups'), encryptionKey: KEY };
    const packsBefore = await listKeys(storeClient, 'backups', `${REPOSITORY}/data/`);
    const second = await backupControlPlane(kube, options);
    const packsAfter = await listKeys(storeClient, 'backups', `${REPOSITORY}/data/`);
    // the bucket's 40 kB of random bytes are stored once: the second backup adds no pack as large
    const added = packsAfter.filter((k) => !packsBefore.includes(k));
    let addedBytes = 0;
    for (const key of added) addedBytes += (await getObject(storeClient, 'backups', key)).length;
    expect(addedBytes).to.be.below(20_000);

    const kfpBefore = await snapshotKfp(db, 'mlpipeline');
    await db.sql("INSERT INTO pipelines VALUES ('p-after', 'made after the backup', NULL, 1700000200);", 'mlpipeline');
    const forged = second.entries.map((e) => (e.part === 'kfp-db' ? { ...e, sha256: '0'.repeat(64) } : e)).filter((e) => e.part === 'kfp-db');
    const refused = await restoreControlPlane(kube, { ...options, include: true, entries: forged }).then(() => undefined, (e: unknown) => e);
    expect((refused as Error).message).to.equal('Restore of kfp-db failed: the copy read from the control-plane restic repository does not match its sha256 in the manifest; the backup is corrupt, and nothing was changed.');
    expect(await db.sql("SELECT Name FROM pipelines WHERE UUID = 'p-after'", 'mlpipeline')).to.equal('made after the backup');
    await db.sql("DELETE FROM pipelines WHERE UUID = 'p-after';", 'mlpipeline');
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(kfpBefore);
  });

  it('a backup made without a key (plain files) still restores with the key set', async function () {
    const kube = new LocalJobKube();
    const plainOptions = { backupId: PLAIN_ID, namespace: 'kubeflow', targets, s3: storeSettings(store, 'backups') };
    const kfpBefore = await snapshotKfp(db, 'mlpipeline');
    const bucketBefore = await bucketDigest(minioClient, 'mlpipeline');
    const plain = await backupControlPlane(kube, plainOptions);
    expect(plain.entries.every((e) => e.restic === undefined)).to.equal(true);
    expect(plain.entries[0]).to.include({ key: `kubeflow/backups/${PLAIN_ID}/control-plane/mysql/mlpipeline.sql.gz` });
    // unkeyed copies are plain: the marker is readable in the bucket (docs say so)
    expect((await objectsHolding(objectMarker)).some((k) => k.startsWith(`kubeflow/backups/${PLAIN_ID}/control-plane/minio/`))).to.equal(true);

    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines;', 'mlpipeline');
    await emptyBucket(minioClient, 'mlpipeline');
    const restored = await restoreControlPlane(kube, { ...plainOptions, encryptionKey: KEY, include: true, entries: plain.entries });
    expect(restored.restored).to.have.length(3);
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(kfpBefore);
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(bucketBefore);
  });
});
