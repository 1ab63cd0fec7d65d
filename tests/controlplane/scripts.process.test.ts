// The exact `sh -c` text of the copy Jobs, run on this machine with the environment their Secret gives, against a
// real MariaDB, an s3rver as the backup store and a second s3rver playing MinIO.
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, HeadObjectCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { execa } from 'execa';
import { rcloneBehaviourEnv, rcloneRemoteEnv, REMOTE_NAME } from '../../src/volumes/rclone-env.ts';
import { startMariaDb, type MariaDbHandle } from '../support/mariadb/server.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { buildCopyJob, type CopySpec } from '../../src/controlplane/jobs.ts';
import { MinioCopySuccess, MysqlCopySuccess, parseCopyOutcome, type CopyOutcome } from '../../src/controlplane/outcome.ts';
import type { MinioEndpoint, MysqlEndpoint } from '../../src/controlplane/relations.ts';
import { runJobLocally } from './local-job.ts';
import { bucketDigest, emptyBucket, getObject, listKeys, putObject, s3Client, seedKfp, snapshotKfp, storeSettings } from './fixtures.ts';

const PASSWORD = `p"a\\ss #;x'y $(id) \`z\``;
const BACKUP_ID = 'kf-20250131-142500-a1b2c3';

function expectOk<T>(outcome: CopyOutcome<T>, ran: { terminationMessage: string; stderr: string }): asserts outcome is { ok: true; value: T } {
  expect(outcome.ok, `${ran.terminationMessage}\n${ran.stderr.slice(-2000)}`).to.equal(true);
}

async function run(spec: CopySpec, part: string) {
  const { job, secret } = buildCopyJob(spec, { namespace: 'kubeflow', backupId: BACKUP_ID, part, images: { rclone: 'docker.io/rclone/rclone:1.68.2', mysql: 'docker.io/library/mysql:8.4', sqlite: 'docker.io/library/python:3.12-slim' } });
  const result = await runJobLocally(job, [secret]);
  return { ...result, job, secret };
}

/** rclone as a mover runs it against the store: only the remote and behaviour variables. */
function rcloneEnv(server: S3ServerHandle): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...rcloneBehaviourEnv(),
    ...rcloneRemoteEnv({ endpoint: server.endpoint, bucket: 'backups', accessKey: server.accessKeyId, secretKey: server.secretAccessKey, uriStyle: 'path', region: 'us-east-1' }),
  };
}

describe('control-plane copy scripts (run locally)', function () {
  let db: MariaDbHandle;
  let store: S3ServerHandle;
  let minio: S3ServerHandle;
  let storeClient: S3Client;
  let minioClient: S3Client;
  let kfp: MysqlEndpoint;
  const storeServer = () => store;

  before(async function () {
    [db, store, minio] = await Promise.all([
      startMariaDb(),
      // multipart ETags as AWS and MinIO make them: rclone cannot read an MD5 from those (the MinIO attack below)
      startS3Server({ buckets: ['backups'], multipartEtag: 'aws' }),
      startS3Server({ buckets: ['mlpipeline'] }),
    ]);
    storeClient = s3Client(store);
    minioClient = s3Client(minio);
    await db.sql('CREATE DATABASE mlpipeline; CREATE DATABASE consistency;');
    await db.createUser('kfp', PASSWORD, 'ALL PRIVILEGES ON mlpipeline.*');
    await db.sql("GRANT ALL PRIVILEGES ON consistency.* TO 'kfp'@'%'");
    kfp = { host: db.host, port: db.port, database: 'mlpipeline', username: 'kfp', password: PASSWORD };
  });

  after(async function () {
    storeClient?.destroy();
    minioClient?.destroy();
    await Promise.all([db?.stop(), store?.stop(), minio?.stop()]);
  });

  it('dumps, wipes and restores a KFP-like database row for row, blobs and unicode included', async function () {
    await seedKfp(db, 'mlpipeline', 40);
    const before = await snapshotKfp(db, 'mlpipeline');
    const key = `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/mlpipeline.sql.gz`;

    const backup = await run({ kind: 'mysql-backup', db: kfp, store: storeSettings(store, 'backups'), key }, 'kfp-db');
    const outcome = parseCopyOutcome(backup.terminationMessage, MysqlCopySuccess);
    expectOk(outcome, backup);
    const uploaded = await getObject(storeClient, 'backups', key);
    expect(outcome.value.bytes).to.equal(uploaded.length);
    expect(outcome.value.sha256).to.equal(createHash('sha256').update(uploaded).digest('hex'));
    expect(outcome.value.tool).to.match(/mariadb-dump|mysqldump/i);

    // Wipe: rows gone, a table the backup never saw appears.
    await db.sql('SET FOREIGN_KEY_CHECKS=0; DROP VIEW runs_per_experiment; DROP TABLE run_details, experiments, pipelines; CREATE TABLE stray (x int);', 'mlpipeline');
    const restore = await run({ kind: 'mysql-restore', db: kfp, store: storeSettings(store, 'backups'), key, expectedSha256: outcome.value.sha256 }, 'kfp-db');
    expectOk(parseCopyOutcome(restore.terminationMessage, MysqlCopySuccess), restore);
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(before);
    expect(await db.sql("SHOW TABLES LIKE 'stray'", 'mlpipeline')).to.equal('');
  });

  it('refuses a dump whose sha256 differs from the manifest and leaves the database untouched', async function () {
    const key = `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/tampered.sql.gz`;
    const backup = await run({ kind: 'mysql-backup', db: kfp, store: storeSettings(store, 'backups'), key }, 'kfp-db');
    const outcome = parseCopyOutcome(backup.terminationMessage, MysqlCopySuccess);
    if (!outcome.ok) throw new Error(outcome.error);
    const before = await snapshotKfp(db, 'mlpipeline');
    const restore = await run({ kind: 'mysql-restore', db: kfp, store: storeSettings(store, 'backups'), key, expectedSha256: 'a'.repeat(64) }, 'kfp-db');
    expect(restore.exitCode).to.not.equal(0);
    const failed = parseCopyOutcome(restore.terminationMessage, MysqlCopySuccess);
    expect(failed).to.deep.include({ ok: false, error: "the dump's sha256 does not match the manifest; the backup is corrupt" });
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(before);
  });

  it('takes a consistent snapshot while rows are inserted throughout the dump', async function () {
    await db.sql('CREATE TABLE events (id int PRIMARY KEY, payload longblob) ENGINE=InnoDB; CREATE TABLE event_audit (id int PRIMARY KEY) ENGINE=InnoDB;', 'consistency');
    const big = randomBytes(200_000).toString('hex');
    let inserted = 0;
    let writing = true;
    // Each transaction writes the same id into both tables: a mix would show up as a mismatch or a gap.
    const writer = (async () => {
      while (writing) {
        inserted += 1;
        await db.sql(`START TRANSACTION; INSERT INTO events VALUES (${inserted}, X'${big}'); INSERT INTO event_audit VALUES (${inserted}); COMMIT;`, 'consistency');
      }
    })();
    while (inserted < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    const key = `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/consistency.sql.gz`;
    const spec = { kind: 'mysql-backup' as const, db: { ...kfp, database: 'consistency' }, store: storeSettings(store, 'backups'), key };
    const backup = await run(spec, 'consistency');
    const insertedDuringDump = inserted;
    writing = false;
    await writer;
    const outcome = parseCopyOutcome(backup.terminationMessage, MysqlCopySuccess);
    expectOk(outcome, backup);

    await db.sql('DROP TABLE events, event_audit;', 'consistency');
    const restore = await run({ ...spec, kind: 'mysql-restore' }, 'consistency');
    expectOk(parseCopyOutcome(restore.terminationMessage, MysqlCopySuccess), restore);
    const ids = (await db.sql('SELECT id FROM events ORDER BY id', 'consistency')).split('\n').filter(Boolean).map(Number);
    const audit = (await db.sql('SELECT id FROM event_audit ORDER BY id', 'consistency')).split('\n').filter(Boolean).map(Number);
    expect(ids.length).to.be.greaterThan(0);
    expect(ids).to.deep.equal(Array.from({ length: ids.length }, (_, i) => i + 1));
    expect(audit).to.deep.equal(ids);
    expect(ids.length).to.be.at.most(insertedDuringDump);
  });

  it('fails in one sentence on bad credentials and leaves no dump behind', async function () {
    const key = `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/denied.sql.gz`;
    const backup = await run({ kind: 'mysql-backup', db: { ...kfp, password: 'wrong-password' }, store: storeSettings(store, 'backups'), key }, 'kfp-db');
    expect(backup.exitCode).to.not.equal(0);
    const outcome = parseCopyOutcome(backup.terminationMessage, MysqlCopySuccess);
    expect(outcome).to.deep.include({ ok: false, error: 'the dump of database mlpipeline failed: the database refused the credentials (access denied)' });
    expect(backup.terminationMessage).to.not.include('wrong-password');
    expect(await listKeys(storeClient, 'backups', key)).to.deep.equal([]);
  });

  it('fails in one sentence when the database is unreachable', async function () {
    const key = `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/unreachable.sql.gz`;
    const backup = await run({ kind: 'mysql-backup', db: { ...kfp, port: 1 }, store: storeSettings(store, 'backups'), key }, 'kfp-db');
    const outcome = parseCopyOutcome(backup.terminationMessage, MysqlCopySuccess);
    expect(outcome).to.deep.include({ ok: false, error: 'the dump of database mlpipeline failed: the database server is unreachable' });
    expect(await listKeys(storeClient, 'backups', key)).to.deep.equal([]);
  });

  it('mirrors a MinIO bucket into the backup and makes it byte-for-byte equal again on restore', async function () {
    const artefacts: Record<string, Buffer> = {
      'artifacts/pipeline-x/run-1/model.bin': randomBytes(300_000),
      'artifacts/pipeline-x/run-1/metrics.json': Buffer.from('{"accuracy":0.93}'),
      'pipelines/流水线 ü.yaml': Buffer.from('name: ünïcødé\n'),
      'empty-object': Buffer.alloc(0),
    };
    for (const [key, body] of Object.entries(artefacts)) await putObject(minioClient, 'mlpipeline', key, body);
    const before = await bucketDigest(minioClient, 'mlpipeline');
    const endpoint: MinioEndpoint = { endpoint: minio.endpoint, accessKey: minio.accessKeyId, secretKey: minio.secretAccessKey, service: 'minio', namespace: 'kubeflow' };
    const keyPrefix = `kubeflow/backups/${BACKUP_ID}/control-plane/minio/mlpipeline/`;
    const spec = { minio: endpoint, bucket: 'mlpipeline', store: storeSettings(store, 'backups'), keyPrefix };

    const backup = await run({ kind: 'minio-backup', ...spec }, 'minio-mlpipeline');
    const outcome = parseCopyOutcome(backup.terminationMessage, MinioCopySuccess);
    expectOk(outcome, backup);
    expect(await listKeys(storeClient, "backups", keyPrefix)).to.deep.equal(Object.keys(artefacts).map((k) => keyPrefix + k).sort());
    expect(outcome.value).to.include({ objects: 4, bytes: Object.values(artefacts).reduce((n, b) => n + b.length, 0) });
    expect(await listKeys(storeClient, 'backups', keyPrefix)).to.deep.equal(Object.keys(artefacts).map((k) => keyPrefix + k).sort());

    await emptyBucket(minioClient, 'mlpipeline');
    await putObject(minioClient, 'mlpipeline', 'made-after-the-backup', Buffer.from('stray'));
    const restore = await run({ kind: 'minio-restore', ...spec, expectedSha256: outcome.value.listingSha256 }, 'minio-mlpipeline');
    expectOk(parseCopyOutcome(restore.terminationMessage, MinioCopySuccess), restore);
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(before);
  });

  it("checks a MinIO copy by the sha256 of the bytes it downloaded, never the MD5 a multipart upload's metadata claims: a rewrite is refused before MinIO is written", async function () {
    await emptyBucket(minioClient, 'mlpipeline');
    const original = randomBytes(200_000);
    await putObject(minioClient, 'mlpipeline', 'artifacts/model.bin', original);
    await putObject(minioClient, 'mlpipeline', 'artifacts/metrics.json', Buffer.from('{"accuracy":0.93}'));
    const endpoint: MinioEndpoint = { endpoint: minio.endpoint, accessKey: minio.accessKeyId, secretKey: minio.secretAccessKey, service: 'minio', namespace: 'kubeflow' };
    const keyPrefix = `kubeflow/backups/${BACKUP_ID}-mp/control-plane/minio/mlpipeline/`;
    const spec = { minio: endpoint, bucket: 'mlpipeline', store: storeSettings(store, 'backups'), keyPrefix };
    const backup = await run({ kind: 'minio-backup', ...spec }, 'minio-mlpipeline');
    const outcome = parseCopyOutcome(backup.terminationMessage, MinioCopySuccess);
    expectOk(outcome, backup);
    // the listing beside the copy: the sha256 of each object as read back, the manifest's digest is of this text
    const listing = (await getObject(storeClient, 'backups', `${keyPrefix.replace(/\/$/, '')}.sha256sums`)).toString('utf8');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(listing).to.equal(`${sha(Buffer.from('{"accuracy":0.93}'))}  artifacts/metrics.json\n${sha(original)}  artifacts/model.bin\n`);
    expect(outcome.value.listingSha256).to.equal(sha(Buffer.from(listing)));

    // A bucket writer without the key: the same size, other bytes, as a multipart upload whose user metadata claims the
    // original's MD5 (what rclone writes as X-Amz-Meta-Md5chksum and reads back as the object's hash).
    const forged = Buffer.from(original);
    forged.write('attacker model', 0);
    const key = `${keyPrefix}artifacts/model.bin`;
    const md5 = createHash('md5').update(original).digest();
    const upload = await storeClient.send(new CreateMultipartUploadCommand({ Bucket: 'backups', Key: key, Metadata: { md5chksum: md5.toString('base64') } }));
    const part = await storeClient.send(new UploadPartCommand({ Bucket: 'backups', Key: key, UploadId: upload.UploadId, PartNumber: 1, Body: forged }));
    await storeClient.send(new CompleteMultipartUploadCommand({ Bucket: 'backups', Key: key, UploadId: upload.UploadId, MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] } }));
    // what the old check trusted: rclone's MD5 of the forged object is the claimed one (rclone backend/s3/s3.go Object.Hash)
    const head = await storeClient.send(new HeadObjectCommand({ Bucket: 'backups', Key: key }));
    expect(head.ETag).to.match(/^"[0-9a-f]{32}-1"$/);
    const claimed = await execa('rclone', ['md5sum', `${REMOTE_NAME}:backups/${key}`], { env: rcloneEnv(store), extendEnv: false });
    expect(claimed.stdout.split(' ')[0]).to.equal(md5.toString('hex'));

    await emptyBucket(minioClient, 'mlpipeline');
    await putObject(minioClient, 'mlpipeline', 'live-object', Buffer.from('written after the backup'));
    const liveBefore = await bucketDigest(minioClient, 'mlpipeline');
    const restore = () => run({ kind: 'minio-restore', ...spec, expectedSha256: outcome.value.listingSha256 }, 'minio-mlpipeline');
    const errorOf = (ran: { terminationMessage: string }) => {
      const parsed = parseCopyOutcome(ran.terminationMessage, MinioCopySuccess);
      return parsed.ok ? 'it succeeded' : parsed.error;
    };
    // rclone's own transfer check compares the downloaded bytes with the claimed MD5 and stops the download
    expect(errorOf(await restore())).to.equal('the copy of MinIO bucket mlpipeline could not be downloaded from the backup bucket');
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(liveBefore);

    // rewritten consistently (the metadata claims the forged bytes' own MD5): only the manifest's sha256s can tell
    const honest = await storeClient.send(new CreateMultipartUploadCommand({ Bucket: 'backups', Key: key, Metadata: { md5chksum: createHash('md5').update(forged).digest('base64') } }));
    const honestPart = await storeClient.send(new UploadPartCommand({ Bucket: 'backups', Key: key, UploadId: honest.UploadId, PartNumber: 1, Body: forged }));
    await storeClient.send(new CompleteMultipartUploadCommand({ Bucket: 'backups', Key: key, UploadId: honest.UploadId, MultipartUpload: { Parts: [{ ETag: honestPart.ETag, PartNumber: 1 }] } }));
    expect(errorOf(await restore())).to.equal('the copy of MinIO bucket mlpipeline in the backup bucket does not match the sha256s in the manifest; the backup is corrupt, and MinIO was not changed');
    expect(await bucketDigest(minioClient, 'mlpipeline')).to.deep.equal(liveBefore);
  });

  it('restores a MinIO copy from before the sha256 listing by the MD5s of the bytes it downloaded', async function () {
    await emptyBucket(minioClient, 'mlpipeline');
    const objects: Record<string, Buffer> = { 'a/one.bin': randomBytes(70_000), 'b two.txt': Buffer.from('second') };
    const keyPrefix = `kubeflow/backups/${BACKUP_ID}-old/control-plane/minio/mlpipeline/`;
    for (const [name, body] of Object.entries(objects)) await putObject(storeClient, 'backups', keyPrefix + name, body);
    // the digest an older backup recorded: sha256 of the `md5  path` lines sorted by path
    const lines = Object.entries(objects).sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      .map(([name, body]) => `${createHash('md5').update(body).digest('hex')}  ${name}\n`).join('');
    const endpoint: MinioEndpoint = { endpoint: minio.endpoint, accessKey: minio.accessKeyId, secretKey: minio.secretAccessKey, service: 'minio', namespace: 'kubeflow' };
    const spec = { minio: endpoint, bucket: 'mlpipeline', store: storeSettings(store, 'backups'), keyPrefix };
    const restore = await run({ kind: 'minio-restore', ...spec, expectedSha256: createHash('sha256').update(lines).digest('hex') }, 'minio-mlpipeline');
    expectOk(parseCopyOutcome(restore.terminationMessage, MinioCopySuccess), restore);
    expect(await getObject(minioClient, 'mlpipeline', 'b two.txt')).to.deep.equal(objects['b two.txt']);
  });

  it('splits each database copy between the official MySQL and rclone images, sharing only an emptyDir', function () {
    const images = { rclone: 'docker.io/rclone/rclone:1.68.2', mysql: 'docker.io/library/mysql:8.4', sqlite: 'docker.io/library/python:3.12-slim' };
    const store = storeSettings(storeServer(), 'backups');
    type C = { name: string; image: string; command: string[]; env: { name: string }[]; volumeMounts?: { name: string }[] };
    const podOf = (spec: CopySpec) => (buildCopyJob(spec, { namespace: 'kubeflow', backupId: BACKUP_ID, part: 'kfp-db', images }).job.spec as { template: { spec: { initContainers?: C[]; containers: C[]; volumes?: unknown[] } } }).template.spec;
    const backup = podOf({ kind: 'mysql-backup', db: kfp, store, key: 'k' });
    expect(backup.initContainers?.map((c) => [c.name, c.image])).to.deep.equal([['dump', images.mysql]]);
    expect(backup.containers.map((c) => [c.name, c.image])).to.deep.equal([['upload', images.rclone]]);
    expect(backup.volumes).to.deep.equal([{ name: 'transfer', emptyDir: {} }]);
    const restore = podOf({ kind: 'mysql-restore', db: kfp, store, key: 'k' });
    expect(restore.initContainers?.map((c) => [c.name, c.image])).to.deep.equal([['download', images.rclone]]);
    expect(restore.containers.map((c) => [c.name, c.image])).to.deep.equal([['load', images.mysql]]);
    for (const c of [...backup.initContainers!, ...backup.containers, ...restore.initContainers!, ...restore.containers]) {
      const names = c.env.map((e) => e.name);
      const script = c.command[2]!;
      if (c.image === images.mysql) {
        expect(script).to.not.match(/(^|[\s;|&(])rclone(\s|$)/m);
        expect(names.some((n) => n.startsWith('RCLONE_'))).to.equal(false);
        expect(names).to.include('DB_CLIENT_CNF');
      } else {
        expect(script).to.not.match(/mysqldump|mariadb|\$CLIENT|\$DUMP/);
        expect(names).to.not.include('DB_CLIENT_CNF');
        expect(names).to.include('RCLONE_CONFIG_STORE_SECRET_ACCESS_KEY');
      }
    }
  });

  it('keeps every credential out of the Job spec and the command line', async function () {
    const minioEndpoint: MinioEndpoint = { endpoint: minio.endpoint, accessKey: 'MINIO-ACCESS', secretKey: 'minio-secret-value', service: 'minio', namespace: 'kubeflow' };
    const specs: CopySpec[] = [
      { kind: 'mysql-backup', db: kfp, store: { ...storeSettings(store, 'backups'), secretKey: 'store-secret-value' }, key: 'k' },
      { kind: 'minio-restore', minio: minioEndpoint, bucket: 'mlpipeline', store: { ...storeSettings(store, 'backups'), secretKey: 'store-secret-value' }, keyPrefix: 'p/' },
    ];
    for (const spec of specs) {
      const { job, secret } = buildCopyJob(spec, { namespace: 'kubeflow', backupId: BACKUP_ID, part: 'x', images: { rclone: 'r', mysql: 'm', sqlite: 's' } });
      const text = JSON.stringify(job);
      for (const value of [PASSWORD, 'store-secret-value', 'minio-secret-value']) expect(text).to.not.include(value);
      // the Secret's data is base64, as the API stores it
      expect(Object.values(secret.data as Record<string, string>).map((v) => Buffer.from(v, 'base64').toString()).join('\n')).to.include('store-secret-value');
    }
  });
});
