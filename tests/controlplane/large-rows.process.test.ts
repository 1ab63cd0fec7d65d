// Rows near the server's packet limit, with the exact copy scripts against a real MariaDB whose max_allowed_packet is
// made small (1 MiB) so the test stays fast: mysqldump --hex-blob writes a BLOB of n bytes as 2n+2 characters on a
// line of its own, and the server refuses any statement over max_allowed_packet (mysql-k8s keeps MySQL's 64 MiB:
// canonical/mysql-k8s-operator lib/charms/mysql/v0/mysql.py render_mysqld_configuration sets none). A row whose dump
// fits round-trips; one whose dump does not is refused before the database is emptied, in one sentence.
import { expect } from 'chai';
import { startMariaDb, type MariaDbHandle } from '../support/mariadb/server.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { buildCopyJob, type CopySpec } from '../../src/controlplane/jobs.ts';
import { MysqlCopySuccess, parseCopyOutcome } from '../../src/controlplane/outcome.ts';
import type { MysqlEndpoint } from '../../src/controlplane/relations.ts';
import { runJobLocally } from './local-job.ts';
import { storeSettings } from './fixtures.ts';

const BACKUP_ID = 'kf-20250131-142500-b1b2b3';
const KIB = 1024;

describe('control-plane copy scripts: rows near max_allowed_packet (real MariaDB, 1 MiB packets)', function () {
  let db: MariaDbHandle;
  let store: S3ServerHandle;
  let endpoint: (database: string) => MysqlEndpoint;

  before(async function () {
    [db, store] = await Promise.all([startMariaDb({ maxAllowedPacket: '1M' }), startS3Server({ buckets: ['backups'] })]);
    expect(await db.sql('SELECT @@GLOBAL.max_allowed_packet')).to.equal(String(1024 * KIB));
    await db.sql('CREATE DATABASE fits; CREATE DATABASE toobig;');
    await db.createUser('kfp', 'kfp-password', 'ALL PRIVILEGES ON fits.*');
    await db.sql("GRANT ALL PRIVILEGES ON toobig.* TO 'kfp'@'%'");
    endpoint = (database) => ({ host: db.host, port: db.port, database, username: 'kfp', password: 'kfp-password' });
  });
  after(async () => {
    await Promise.all([db?.stop(), store?.stop()]);
  });

  async function run(spec: CopySpec) {
    const images = { rclone: 'docker.io/rclone/rclone:1.68.2', mysql: 'docker.io/library/mysql:8.4', sqlite: 'docker.io/library/python:3.12-slim' };
    const { job, secret } = buildCopyJob(spec, { namespace: 'kubeflow', backupId: BACKUP_ID, part: 'kfp-db', images });
    const result = await runJobLocally(job, [secret]);
    return { ...result, outcome: parseCopyOutcome(result.terminationMessage, MysqlCopySuccess) };
  }
  /** A blob of `bytes` made on the server, so the statement that makes it stays small. */
  const blob = (bytes: number) => `REPEAT(UNHEX('00FF7F27225C0A0D1A'), ${Math.floor(bytes / 9)})`;
  const digest = (database: string) => db.sql('SELECT id, LENGTH(data), MD5(data) FROM artifacts ORDER BY id', database);

  it('round-trips a BLOB whose hex statement fits the server\'s packet (400 KiB: an 800 KiB line)', async function () {
    await db.sql(`CREATE TABLE artifacts (id int PRIMARY KEY, data longblob); INSERT INTO artifacts VALUES (1, ${blob(400 * KIB)}), (2, ${blob(10 * KIB)});`, 'fits');
    const before = await digest('fits');
    const key = `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/fits.sql.gz`;
    const backup = await run({ kind: 'mysql-backup', db: endpoint('fits'), store: storeSettings(store, 'backups'), key });
    expect(backup.outcome.ok, backup.terminationMessage).to.equal(true);
    await db.sql('DELETE FROM artifacts', 'fits');
    const restore = await run({ kind: 'mysql-restore', db: endpoint('fits'), store: storeSettings(store, 'backups'), key });
    expect(restore.outcome.ok, `${restore.terminationMessage}\n${restore.stderr.slice(-1000)}`).to.equal(true);
    expect(await digest('fits')).to.equal(before);
  });

  it('refuses, before emptying anything, a dump whose hex statement is over the packet (700 KiB: a 1.4 MiB line)', async function () {
    await db.sql(`CREATE TABLE artifacts (id int PRIMARY KEY, data longblob); INSERT INTO artifacts VALUES (1, ${blob(700 * KIB)});`, 'toobig');
    const key = `kubeflow/backups/${BACKUP_ID}/control-plane/mysql/toobig.sql.gz`;
    const backup = await run({ kind: 'mysql-backup', db: endpoint('toobig'), store: storeSettings(store, 'backups'), key });
    expect(backup.outcome.ok, backup.terminationMessage).to.equal(true);
    await db.sql('INSERT INTO artifacts VALUES (2, X\'00\'); CREATE TABLE made_after_the_backup (x int);', 'toobig');
    const before = await digest('toobig');
    const restore = await run({ kind: 'mysql-restore', db: endpoint('toobig'), store: storeSettings(store, 'backups'), key });
    expect(restore.exitCode).to.not.equal(0);
    expect(restore.outcome.ok).to.equal(false);
    expect(!restore.outcome.ok && restore.outcome.error).to.match(
      /^the dump holds a statement of 1[34]\d\d KiB, over this server's max_allowed_packet of 1024 KiB \(mysqldump --hex-blob doubles a BLOB, so a row over about half the limit cannot be loaded\); as the database's admin run SET GLOBAL max_allowed_packet = 3145728 on its primary for the restore, then rerun \(nothing was changed\)$/,
    );
    expect(await digest('toobig')).to.equal(before);
    expect(await db.sql("SHOW TABLES LIKE 'made_after_the_backup'", 'toobig')).to.equal('made_after_the_backup');
  });
});
