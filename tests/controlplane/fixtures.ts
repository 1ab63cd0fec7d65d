// KFP-like data for the control-plane tests: tables shaped like ml-pipeline's (pipelines, experiments, run_details
// with a blob column and unicode text), and S3 helpers to seed and read a MinIO stand-in.
import { createHash, randomBytes } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { MariaDbHandle } from '../support/mariadb/server.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import type { S3Settings } from '../../src/store/settings.ts';
import type { ControlPlaneTargets } from '../../src/controlplane/engine.ts';

export const KFP_SCHEMA = `
CREATE TABLE pipelines (UUID varchar(64) PRIMARY KEY, Name varchar(128) NOT NULL, Description longtext,
  CreatedAtInSec bigint NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE experiments (UUID varchar(64) PRIMARY KEY, Name varchar(128) NOT NULL, Namespace varchar(63),
  StorageState varchar(32)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE run_details (UUID varchar(64) PRIMARY KEY, ExperimentUUID varchar(64) NOT NULL, DisplayName varchar(255),
  PipelineSpecManifest longblob, WorkflowRuntimeManifest longtext, CreatedAtInSec bigint,
  FOREIGN KEY (ExperimentUUID) REFERENCES experiments(UUID)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TRIGGER run_name_default BEFORE INSERT ON run_details FOR EACH ROW
  SET NEW.DisplayName = COALESCE(NEW.DisplayName, CONCAT('run-', NEW.UUID));
CREATE VIEW runs_per_experiment AS SELECT ExperimentUUID, COUNT(*) AS n FROM run_details GROUP BY ExperimentUUID;
`;

const UNICODE = ['Ünïcødé 流水线', 'эксперимент 🚀', "quote ' and \\ backslash", 'tab\tand\nnewline', 'Ελληνικά'];

function hex(bytes: Buffer): string {
  return `X'${bytes.toString('hex')}'`;
}

function str(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\t/g, '\\t')}'`;
}

/** Creates the schema and `runs` runs with random blobs (some with NUL and high bytes) and unicode names. */
export async function seedKfp(db: MariaDbHandle, database: string, runs: number): Promise<void> {
  const statements = [KFP_SCHEMA];
  statements.push(`INSERT INTO pipelines VALUES ('p-1', ${str(UNICODE[0]!)}, ${str(UNICODE[3]!)}, 1700000000);`);
  statements.push(`INSERT INTO experiments VALUES ('e-1', ${str(UNICODE[1]!)}, 'kubeflow-user', 'AVAILABLE'), ('e-2', ${str(UNICODE[4]!)}, 'alice', 'ARCHIVED');`);
  for (let i = 0; i < runs; i++) {
    const blob = Buffer.concat([Buffer.from([0, 255, 0x5c, 0x27, 10, 13]), randomBytes(64 + i * 37)]);
    statements.push(
      `INSERT INTO run_details (UUID, ExperimentUUID, DisplayName, PipelineSpecManifest, WorkflowRuntimeManifest, CreatedAtInSec) VALUES ` +
        `('r-${i}', 'e-${(i % 2) + 1}', ${i % 3 === 0 ? 'NULL' : str(UNICODE[i % UNICODE.length]!)}, ${hex(blob)}, ${str(`{"status":"Succeeded","i":${i},"name":"${UNICODE[i % UNICODE.length]}"}`)}, ${1700000000 + i});`,
    );
  }
  await db.sql(statements.join('\n'), database);
}

/** Every row of every KFP table, blobs as hex, in a stable order: two snapshots are equal iff the data is. */
export async function snapshotKfp(db: MariaDbHandle, database: string): Promise<string> {
  return db.sql(
    `SELECT 'pipelines', UUID, HEX(Name), HEX(Description), CreatedAtInSec FROM pipelines ORDER BY UUID;
     SELECT 'experiments', UUID, HEX(Name), Namespace, StorageState FROM experiments ORDER BY UUID;
     SELECT 'runs', UUID, ExperimentUUID, HEX(DisplayName), HEX(PipelineSpecManifest), HEX(WorkflowRuntimeManifest), CreatedAtInSec FROM run_details ORDER BY UUID;
     SELECT 'view', ExperimentUUID, n FROM runs_per_experiment ORDER BY ExperimentUUID;
     SELECT 'trigger', TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE();`,
    database,
  );
}

/** Bytes in the big row of seedLargeRowAndFunction: over the mysql client's default 16 MiB packet, and over
 * mysqldump's 24 MiB once written as hex (--hex-blob doubles it), under MySQL 8's 64 MiB server default. */
export const LARGE_ROW_BYTES = 20 * 1024 * 1024;

/**
 * What a dump must carry into a server with the binary log on: a stored function and a pipeline version whose spec is
 * one 20 MiB row, built server-side from a random 1 KiB so the statement that makes it stays small. Root (SUPER)
 * creates the function for `definer`, the relation user that dumps it: a user may read the body of a routine only
 * as its definer or with SHOW_ROUTINE / global SELECT (MySQL 8 SHOW CREATE FUNCTION), which a relation user lacks.
 */
export async function seedLargeRowAndFunction(db: MariaDbHandle, database: string, definer: string): Promise<void> {
  const chunk = randomBytes(1024).toString('hex');
  await db.sql(`CREATE TABLE pipeline_versions (UUID varchar(64) PRIMARY KEY, PipelineSpec longblob) ENGINE=InnoDB;
INSERT INTO pipeline_versions VALUES ('pv-large', REPEAT(UNHEX('${chunk}'), ${LARGE_ROW_BYTES / 1024}));
CREATE DEFINER = '${definer}'@'%' FUNCTION runs_since(since bigint) RETURNS int READS SQL DATA
  RETURN (SELECT COUNT(*) FROM run_details WHERE CreatedAtInSec >= since);`, database);
}

/** The big row by length and digest, the function by what it answers, and which routines exist. */
export async function snapshotLargeRowAndFunction(db: MariaDbHandle, database: string): Promise<string> {
  return db.sql(
    `SELECT UUID, LENGTH(PipelineSpec), SHA2(PipelineSpec, 256) FROM pipeline_versions ORDER BY UUID;
     SELECT 'runs_since', runs_since(1700000000), runs_since(1700000010);
     SELECT ROUTINE_TYPE, ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY ROUTINE_NAME;`,
    database,
  );
}

export function s3Client(server: S3ServerHandle): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
}

export function storeSettings(server: S3ServerHandle, bucket: string, path = 'kubeflow'): S3Settings {
  return {
    accessKey: server.accessKeyId,
    secretKey: server.secretAccessKey,
    bucket,
    path,
    endpoint: server.endpoint,
    region: 'us-east-1',
    uriStyle: 'path',
  };
}

export async function putObject(client: S3Client, bucket: string, key: string, body: Buffer): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

export async function getObject(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

export async function listKeys(client: S3Client, bucket: string, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

/** key → sha256 of every object in the bucket. */
export async function bucketDigest(client: S3Client, bucket: string): Promise<Record<string, string>> {
  const digest: Record<string, string> = {};
  for (const key of await listKeys(client, bucket)) {
    digest[key] = createHash('sha256').update(await getObject(client, bucket, key)).digest('hex');
  }
  return digest;
}

export async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  for (const key of await listKeys(client, bucket)) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

/** What a control-plane restore must bring back as it was: KFP's tables, Katib's observation logs, MinIO's bucket. */
export async function controlPlaneState(db: MariaDbHandle, minio: S3Client): Promise<{ kfp: string; katib: string; bucket: Record<string, string> }> {
  return {
    kfp: await snapshotKfp(db, 'mlpipeline'),
    katib: await db.sql('SELECT HEX(trial_name), value FROM observation_logs', 'katib'),
    bucket: await bucketDigest(minio, 'mlpipeline'),
  };
}

/**
 * The KFP and Katib databases with a user each, as mysql-k8s gives them to a related charm, and MinIO's mlpipeline
 * bucket: the control plane a backup copies.
 */
export async function relatedControlPlane(db: MariaDbHandle, minio: S3ServerHandle): Promise<ControlPlaneTargets> {
  await db.sql('CREATE DATABASE mlpipeline; CREATE DATABASE katib;');
  await db.createUser('relation-7', 'kfp-pass', 'ALL PRIVILEGES ON mlpipeline.*');
  await db.createUser('relation-9', 'katib-pass', 'ALL PRIVILEGES ON katib.*');
  return {
    'kfp-db': { host: db.host, port: db.port, database: 'mlpipeline', username: 'relation-7', password: 'kfp-pass' },
    'katib-db': { host: db.host, port: db.port, database: 'katib', username: 'relation-9', password: 'katib-pass' },
    'object-storage': {
      minio: { endpoint: minio.endpoint, accessKey: minio.accessKeyId, secretKey: minio.secretAccessKey, service: 'minio', namespace: 'kubeflow' },
      buckets: ['mlpipeline'],
    },
  };
}
