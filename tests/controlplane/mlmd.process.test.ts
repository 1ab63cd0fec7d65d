// Finding ML Metadata's SQLite storage through Juju's storage labels, and the Job that copies it.
import { expect } from 'chai';
import { findMlmdStorage, mlmdNotCoveredSentence } from '../../src/controlplane/mlmd.ts';
import { buildCopyJob } from '../../src/controlplane/jobs.ts';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { LocalJobKube } from './local-kube.ts';
import { runJobLocally } from './local-job.ts';
import { storeSettings } from './fixtures.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';

const TEMPLATE = 'mlmd-mlmd-data-0d1e2f3a';

function mlmdSet(labels: Record<string, string>) {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'mlmd', namespace: 'kubeflow', labels: { 'app.kubernetes.io/managed-by': 'juju' } },
    spec: { replicas: 1, volumeClaimTemplates: [{ metadata: { name: TEMPLATE, labels } }] },
  };
}

describe('ML Metadata storage', function () {
  it('follows the storage.juju.is/name label to unit 0 claim, and says why when it cannot', async function () {
    const kube = new LocalJobKube();
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: 'there is no mlmd StatefulSet in namespace kubeflow' });
    kube.objects.set('statefulsets/kubeflow/mlmd', mlmdSet({ 'storage.juju.is/name': 'other' }));
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: 'the mlmd StatefulSet has no Juju storage mlmd-data' });
    kube.objects.set('statefulsets/kubeflow/mlmd', mlmdSet({ 'storage.juju.is/name': 'mlmd-data', 'app.kubernetes.io/managed-by': 'juju' }));
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: `the mlmd-data claim ${TEMPLATE}-mlmd-0 of mlmd/0 does not exist` });
    kube.objects.set(`persistentvolumeclaims/kubeflow/${TEMPLATE}-mlmd-0`, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${TEMPLATE}-mlmd-0`, namespace: 'kubeflow' }, status: { phase: 'Pending' } });
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: `the mlmd-data claim ${TEMPLATE}-mlmd-0 is not bound` });
    kube.objects.get(`persistentvolumeclaims/kubeflow/${TEMPLATE}-mlmd-0`)!.status = { phase: 'Bound' };
    kube.objects.set('pods/kubeflow/mlmd-0', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mlmd-0', namespace: 'kubeflow' }, spec: { nodeName: 'node-2' } });
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: true, target: { claim: `${TEMPLATE}-mlmd-0`, file: 'mlmd.db', nodeName: 'node-2' } });
    expect(mlmdNotCoveredSentence('there is no mlmd StatefulSet in namespace kubeflow')).to.equal(
      "control plane not covered: ML Metadata (SQLite mlmd.db on mlmd's mlmd-data storage): there is no mlmd StatefulSet in namespace kubeflow.",
    );
  });

  it('mounts the claim only into the SQLite container, on the node of the Pod using it, with no credential in the spec', function () {
    const store = { ...storeSettings({ endpoint: 'http://127.0.0.1:9', accessKeyId: 'store-access', secretAccessKey: 'store-secret-value' } as never, 'backups') };
    const { job, secret } = buildCopyJob(
      { kind: 'sqlite-backup', sqlite: { claim: `${TEMPLATE}-mlmd-0`, file: 'mlmd.db', nodeName: 'node-2' }, store, key: 'kubeflow/backups/x/control-plane/sqlite/mlmd.db.gz' },
      { namespace: 'kubeflow', backupId: 'x', part: 'mlmd', images: { rclone: 'docker.io/rclone/rclone:1.68.2', mysql: 'docker.io/library/mysql:8.4', sqlite: 'docker.io/library/python:3.12-slim' } },
    );
    type C = { name: string; image: string; env: { name: string; value?: string }[]; volumeMounts?: { name: string; mountPath: string }[] };
    const pod = (job.spec as { template: { spec: { nodeName?: string; initContainers: C[]; containers: C[]; volumes: unknown[] } } }).template.spec;
    expect(pod.nodeName).to.equal('node-2');
    expect(pod.volumes).to.deep.include({ name: 'sqlite-data', persistentVolumeClaim: { claimName: `${TEMPLATE}-mlmd-0` } });
    const [backup, upload] = [pod.initContainers[0]!, pod.containers[0]!];
    expect(backup.image).to.equal('docker.io/library/python:3.12-slim');
    expect(backup.volumeMounts!.map((m) => m.name)).to.deep.equal(['transfer', 'sqlite-data']);
    expect(backup.env.find((e) => e.name === 'SQLITE_FILE')?.value).to.equal('/sqlite-data/mlmd.db');
    expect(backup.env.some((e) => e.name.startsWith('RCLONE_'))).to.equal(false);
    expect(upload.volumeMounts!.map((m) => m.name)).to.deep.equal(['transfer']);
    expect(JSON.stringify(job)).not.to.include('store-secret-value');
    // the Secret's data is base64, as the API stores it
    expect(Object.values(secret.data as Record<string, string>).map((v) => Buffer.from(v, 'base64').toString()).join('\n')).to.include('store-secret-value');
  });
});

describe('ML Metadata copy scripts (run locally, as root as a Job runs them)', function () {
  // mlmd on CKF 1.10 runs as the rock's user, uid 584792, and canonical/mlmd-operator chowns its storage to it
  // (src/components/chown_component.py); the Job's containers run as root with umask 077 (scripts.ts PRELUDE).
  const MLMD_UID = 584792;
  let s3: S3ServerHandle;
  let work: string;
  before(async function () {
    if (process.getuid?.() !== 0) throw new Error('these tests give files to another uid: run them as root, as CI does');
    s3 = await startS3Server({ buckets: ['backups'] });
    work = mkdtempSync(join(tmpdir(), 'mlmd-scripts-'));
    chmodSync(work, 0o755);
  });
  after(async () => {
    await s3?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const images = { rclone: 'docker.io/rclone/rclone:1.68.2', mysql: 'docker.io/library/mysql:8.4', sqlite: 'docker.io/library/python:3.12-slim' };
  async function copy(kind: 'sqlite-backup' | 'sqlite-restore', storage: string, key: string, owner?: string) {
    const spec = { kind, sqlite: { claim: 'mlmd-data', file: 'mlmd.db', ...(owner ? { owner } : {}) }, store: storeSettings(s3, 'backups'), key } as const;
    const { job, secret } = buildCopyJob(spec, { namespace: 'kubeflow', backupId: 'x', part: 'mlmd', images });
    return runJobLocally(job, [secret], { 'sqlite-data': storage });
  }
  function python(code: string, args: string[], options: { uid?: number; gid?: number } = {}) {
    return execa('python3', ['-c', code, ...args], { reject: false, ...options });
  }
  const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  /** A storage folder owned by uid:uid, or (uid 0) root's with mlmd's group, setgid and group-writable, as fsGroup leaves it. */
  function storage(name: string, uid: number): string {
    const folder = join(work, name);
    mkdirSync(folder);
    if (uid === 0) {
      chownSync(folder, 0, MLMD_UID);
      chmodSync(folder, 0o2775);
    } else chownSync(folder, uid, uid);
    return folder;
  }
  /** An MLMD-shaped database written by mlmd's uid, as mlmd writes it. */
  async function makeDb(file: string, rows: number) {
    const made = await python('import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.execute("CREATE TABLE Artifact (id INTEGER PRIMARY KEY, uri TEXT)")\nc.executemany("INSERT INTO Artifact (uri) VALUES (?)", [("s3://mlpipeline/a%d" % i,) for i in range(int(sys.argv[2]))])\nc.commit()', [file, String(rows)], { uid: MLMD_UID, gid: MLMD_UID });
    expect(made.exitCode, made.stderr).to.equal(0);
  }

  it('never writes into the live database: a journal a crashed mlmd left stops the backup, both files untouched', async function () {
    const folder = storage('crashed', MLMD_UID);
    const live = join(folder, 'mlmd.db');
    await makeDb(live, 50);
    // A writer killed mid-transaction: its cache spilled changed pages into the file, the journal holds the old ones.
    const crashed = await python('import sqlite3,sys,os\nc=sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute("PRAGMA cache_size=1")\nc.execute("BEGIN")\nc.executemany("INSERT INTO Artifact (uri) VALUES (?)", [("x" * 500,) for i in range(400)])\nos._exit(0)', [live], { uid: MLMD_UID, gid: MLMD_UID });
    expect(crashed.exitCode, crashed.stderr).to.equal(0);
    expect(existsSync(`${live}-journal`)).to.equal(true);
    const before = [sha(live), sha(`${live}-journal`)];
    const run = await copy('sqlite-backup', folder, 'kubeflow/backups/x/control-plane/mlmd/crashed.db.gz');
    expect(run.exitCode).to.not.equal(0);
    expect(JSON.parse(run.terminationMessage).error).to.match(/\/mlmd\.db has an unfinished transaction \(a journal left by a crash\), which a read-only copy cannot roll back; start mlmd so it recovers it, then back up again$/);
    expect([sha(live), existsSync(`${live}-journal`) ? sha(`${live}-journal`) : 'journal removed']).to.deep.equal(before);
    // mlmd itself, opening the file read-write, rolls the journal back: the backup then goes through.
    const recovered = await python('import sqlite3,sys\nprint(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM Artifact").fetchone()[0])', [live], { uid: MLMD_UID, gid: MLMD_UID });
    expect(recovered.stdout.trim(), recovered.stderr).to.equal('50');
    const again = await copy('sqlite-backup', folder, 'kubeflow/backups/x/control-plane/mlmd/recovered.db.gz');
    expect(again.exitCode, again.terminationMessage).to.equal(0);
  });

  for (const [how, owner, folderUid] of [['the storage folder\'s owner (mlmd-operator chowns it)', undefined, MLMD_UID], ['the uid:gid of mlmd\'s Pod securityContext (the folder root\'s, group-writable by fsGroup)', `${MLMD_UID}:${MLMD_UID}`, 0]] as const) {
    it(`restores onto storage without mlmd.db as ${how}, so mlmd (uid ${MLMD_UID}) can write it`, async function () {
      const source = storage(`source-${folderUid}`, MLMD_UID);
      await makeDb(join(source, 'mlmd.db'), 20);
      const key = `kubeflow/backups/x/control-plane/mlmd/owner-${folderUid}.db.gz`;
      const backup = await copy('sqlite-backup', source, key);
      expect(backup.exitCode, backup.terminationMessage).to.equal(0);
      const fresh = storage(`fresh-${folderUid}`, folderUid);
      const restore = await copy('sqlite-restore', fresh, key, owner);
      expect(restore.exitCode, `${restore.terminationMessage}\n${restore.stderr}`).to.equal(0);
      const restored = statSync(join(fresh, 'mlmd.db'));
      expect([restored.uid, restored.gid, (restored.mode & 0o777).toString(8)]).to.deep.equal([MLMD_UID, MLMD_UID, '644']);
      const written = await python('import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.execute("INSERT INTO Artifact (uri) VALUES (\'after\')")\nc.commit()\nprint(c.execute("SELECT COUNT(*) FROM Artifact").fetchone()[0])', [join(fresh, 'mlmd.db')], { uid: MLMD_UID, gid: MLMD_UID });
      expect(written.stdout.trim(), written.stderr).to.equal('21');
    });
  }

  it('reads the uid:gid from the mlmd container\'s securityContext, never from Juju\'s charm container', async function () {
    const kube = new LocalJobKube();
    kube.objects.set('statefulsets/kubeflow/mlmd', mlmdSet({ 'storage.juju.is/name': 'mlmd-data' }));
    kube.objects.set(`persistentvolumeclaims/kubeflow/${TEMPLATE}-mlmd-0`, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${TEMPLATE}-mlmd-0`, namespace: 'kubeflow' }, status: { phase: 'Bound' } });
    kube.objects.set('pods/kubeflow/mlmd-0', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mlmd-0', namespace: 'kubeflow' },
      spec: {
        nodeName: 'node-2',
        containers: [
          { name: 'charm', securityContext: { runAsUser: 170, runAsGroup: 170 }, volumeMounts: [{ name: TEMPLATE }] },
          { name: 'mlmd-grpc-server', securityContext: { runAsUser: MLMD_UID, runAsGroup: MLMD_UID }, volumeMounts: [{ name: TEMPLATE }] },
        ],
      },
    });
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: true, target: { claim: `${TEMPLATE}-mlmd-0`, file: 'mlmd.db', nodeName: 'node-2', owner: `${MLMD_UID}:${MLMD_UID}` } });
  });
});
