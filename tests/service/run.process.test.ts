// A scheduled backup holds the control plane as backup-state does, and restore-state brings it back, with real parts:
// the real Pebble runs the real service (lib/service.mjs) that the packed charm's ./dispatch pushed into it; kfp-db is a
// real MariaDB run as mysql-k8s runs MySQL (binary log on, GTIDs), related through the mysql-k8s provider model
// (tests/support/providers/mysql-k8s.ts, after canonical/mysql-k8s-operator and data_interfaces); the copy Jobs the
// service creates in the embedded cluster run on the simulated kubelet with the default official images; S3 is s3rver.
// The relation's answer reaches the service only through the settings file the charm pushes on kfp-db-relation-changed
// (mode 0600; the password never in the layer Pebble prints). Every wait is for a sign (a line Pebble logs for the
// service, a StatefulSet's status, a sample the real Prometheus scraped), never a sleep. The last restore's outcome
// and time are what that Prometheus scrapes from the service.
import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchEvent, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState, type FakeRelation } from '../support/juju/state.ts';
import { freePort, startPebble, type RunningPebble } from '../support/pebble/pebble.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { simulatedKubelet, type SimulatedKubelet } from '../support/kubelet/index.ts';
import { startMariaDb, type MariaDbHandle } from '../support/mariadb/server.ts';
import { mysqlK8sRelationChanged, rotateMysqlPassword, type MysqlK8sApp } from '../support/providers/mysql-k8s.ts';
import { getObject, listKeys, s3Client, seedKfp, snapshotKfp } from '../controlplane/fixtures.ts';
import { PebbleClient } from '../../src/pebble/client.ts';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus/prometheus.ts';
import { dashboard } from '../../src/observability/dashboard.ts';

const BUCKET = 'kubeflow-backups';
const KEY_SECRET = 'secret:cta0schedcontrolplane01';
const KEY = 'the scheduled control-plane key';
const DB_PASSWORD = 'kfp-scheduled "pässword" $(x)';
const STATEFULSETS = { group: 'apps', resource: 'statefulsets' };
const SERVICES = { group: '', resource: 'services' };
// the writers of the KFP database, which restore-state refuses to load under (canonical/kfp-operators charms)
const KFP_WRITERS = ['kfp-api', 'kfp-persistence', 'kfp-schedwf'];

interface ControlPlaneRecord {
  notCovered: string[];
  entries: Array<{ part: string; database?: string; tool: string; sha256?: string; restic?: { repository: string; snapshot: string } }>;
}

describe('a scheduled backup under the real Pebble holds the control plane as backup-state does, and restore-state brings it back', function () {
  this.timeout(400_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let storeClient: S3Client;
  let db: MariaDbHandle;
  let cluster: RunningCluster;
  let kubelet: SimulatedKubelet;
  let stopKubelet: () => void;
  let dataDir: string;
  let pebble: RunningPebble;
  let prometheus: RunningPrometheus;
  let port: number;

  before(async () => {
    port = await freePort();
    [charmDir, s3, db, cluster] = await Promise.all([
      ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startMariaDb({ mysqlK8s: true }), startCluster({ profiles: 1, seed: 46 }),
    ]);
    storeClient = s3Client(s3);
    dataDir = mkdtempSync(join(tmpdir(), 'sched-cp-kubelet-'));
    kubelet = simulatedKubelet({ dataDir, configRetryMs: 3000 });
    stopKubelet = kubelet.start(cluster.api);
    // mysql-k8s's primary Service, which the relation's endpoints name; the simulated kubelet maps it to the MariaDB
    cluster.api.create(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'kfp-db-primary', namespace: 'kubeflow' }, spec: { ports: [{ port: db.port }] } });
    pebble = await startPebble({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, KUBEFLOW_UPGRADER_METRICS_PORT: String(port) });
    prometheus = await startPrometheus({ target: `127.0.0.1:${port}`, jobName: 'kubeflow_upgrader' });
  });
  after(async () => {
    await prometheus?.stop();
    await pebble?.stop();
    stopKubelet?.();
    await kubelet?.idle();
    storeClient?.destroy();
    await Promise.all([s3?.stop(), db?.stop(), cluster?.stop()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const root = () => join(pebble.root, 'srv');
  const env = () => ({
    KUBEFLOW_UPGRADER_PEBBLE_SOCKET: pebble.socket, KUBEFLOW_UPGRADER_WORKLOAD_ROOT: root(), KUBEFLOW_UPGRADER_METRICS_PORT: String(port), KUBECONFIG: cluster.kubeconfigPath,
  });
  async function dispatch(state: FakeJujuState, event: DispatchEvent): Promise<DispatchOutcome> {
    const outcome = await runDispatch(charmDir, state, { ...event, env: { ...env(), ...event.env } });
    expect(outcome.exitCode, `${outcome.state.actionFailure ?? ''}\n${outcome.stderr.slice(-3000)}`).to.equal(0);
    return outcome;
  }
  /** the settings file as the charm pushed it into the container */
  const settings = () => JSON.parse(readFileSync(join(root(), 'settings.json'), 'utf8')) as { controlPlane?: { targets: Record<string, { password?: string } | undefined>; related: Record<string, boolean> } };
  /** a backup's manifest as stored, read with the S3 client (not the product's decoder) */
  async function controlPlaneRecord(id: string): Promise<ControlPlaneRecord> {
    const key = (await listKeys(storeClient, BUCKET)).find((k) => k.endsWith(`/${id}/kubeflow-upgrader.json`));
    expect(key, `the manifest of ${id}`).to.be.a('string');
    return (JSON.parse((await getObject(storeClient, BUCKET, key!)).toString('utf8')) as { extras: { controlPlane: ControlPlaneRecord } }).extras.controlPlane;
  }
  async function until(what: string, check: () => boolean): Promise<void> {
    for (let i = 0; i < 400; i++) {
      if (check()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  /** the last restore as the real Prometheus scraped it from the service (it scrapes every second) */
  async function scrapedRestore(ok: (succeeded: number, at: number) => boolean): Promise<{ succeeded: number; at: number }> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [succeeded, at] = await Promise.all(['kubeflow_upgrader_restore_last_succeeded', 'kubeflow_upgrader_restore_last_timestamp_seconds'].map(async (name) => {
        const sample = (await prometheus.query(name))[0];
        return sample ? Number(sample.value[1]) : NaN;
      }));
      if (ok(succeeded!, at!)) return { succeeded: succeeded!, at: at! };
      if (Date.now() > deadline) throw new Error(`Prometheus never scraped the awaited restore: succeeded ${succeeded}, at ${at}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const readyReplicas = (app: string) => (cluster.api.get(STATEFULSETS, app, 'kubeflow')?.status as { readyReplicas?: number } | undefined)?.readyReplicas;

  it('the relation change reaches the service; the scheduled backup pins kfp-db in the control-plane repository; restore-state of it brings the rows back and the metrics say so; a rotated password and a broken relation reach the settings', async () => {
    const kfpDb: FakeRelation = {
      id: 'kfp-db:7', endpoint: 'kfp-db', remoteApp: 'kfp-db', remoteUnits: ['kfp-db/0'], localAppData: {}, localUnitData: {}, remoteAppData: {}, remoteUnitsData: { 'kfp-db/0': {} },
    };
    let state = emptyState({
      config: { 'encryption-key': KEY_SECRET, 'volume-mover-engine': 'rclone' },
      secrets: { [KEY_SECRET]: { revisions: [{ key: KEY }] } },
      relations: [s3Relation(track1Data(s3, BUCKET)), kfpDb],
    });
    // the container comes up with no schedule; kfp-db is related but mysql-k8s has not answered
    state = (await dispatch(state, { event: 'upgrader-pebble-ready', env: { JUJU_WORKLOAD_NAME: 'upgrader' } })).state;
    await pebble.waitFor(/no backup-schedule: backups run only when asked/);
    expect(settings().controlPlane?.targets['kfp-db']).to.equal(undefined);
    state = (await dispatch(state, { event: 'kfp-db-relation-joined', relation: 'kfp-db:7' })).state;

    // mysql-k8s answers our request: the database, its user, the credentials in a Juju secret
    const mysql: MysqlK8sApp = {
      app: 'kfp-db', model: 'kubeflow', modelUuid: '7c4f1f1e-0000-4000-8000-00000000beef', version: '8.0.41-0ubuntu0.22.04.1', port: db.port,
      createDatabase: async (database, user, password) => {
        await db.sql(`CREATE DATABASE \`${database}\`;`);
        await db.createUser(user, password, `ALL PRIVILEGES ON \`${database}\`.*`);
      },
    };
    const answer = await mysqlK8sRelationChanged(state, state.relations.find((r) => r.id === 'kfp-db:7')!, mysql, DB_PASSWORD);
    expect(answer.requested).to.equal('mlpipeline');
    await seedKfp(db, 'mlpipeline', 12);
    const rowsBefore = await snapshotKfp(db, 'mlpipeline');
    expect(rowsBefore).to.include('r-11');

    // the relation-changed hook pushes the credentials into the 0600 settings file, never into the layer
    state = (await dispatch(state, { event: 'kfp-db-relation-changed', relation: 'kfp-db:7', remoteUnit: 'kfp-db/0' })).state;
    expect(settings().controlPlane?.targets['kfp-db']?.password).to.equal(DB_PASSWORD);
    expect(statSync(join(root(), 'settings.json')).mode & 0o777).to.equal(0o600);
    const plan = await new PebbleClient(pebble.socket).planYaml();
    expect(plan).to.contain('kubeflow-upgrader');
    expect(plan).not.to.contain(DB_PASSWORD);

    // every minute until the first scheduled backup starts, then yearly: a new schedule replans without stopping the
    // backup in flight, and no second slot comes while the test goes on
    state.config['backup-schedule'] = '* * * * *';
    state = (await dispatch(state, { event: 'config-changed' })).state;
    await pebble.waitFor(/backup kf-\S+ started/, 90_000);
    state.config['backup-schedule'] = '0 0 1 1 *';
    state = (await dispatch(state, { event: 'config-changed' })).state;
    await pebble.waitFor(/scheduled backup kf-\S+ (succeeded|failed)/, 240_000);
    const scheduled = /scheduled backup (kf-\d{8}-\d{6}-[0-9a-f]{6}) succeeded/.exec(pebble.output())?.[1];
    expect(scheduled, pebble.output().slice(-5000)).to.be.a('string');

    // the control plane as the scheduled backup recorded it: kfp-db pinned in the control-plane restic repository,
    // ML Metadata's storage without tables and the unrelated endpoints said not covered
    const fromSchedule = await controlPlaneRecord(scheduled!);
    expect(fromSchedule.entries.map((e) => e.part)).to.deep.equal(['kfp-db']);
    expect(fromSchedule.entries[0]!.database).to.equal('mlpipeline');
    expect(fromSchedule.entries[0]!.restic?.repository).to.equal('backups/restic/_control-plane');
    expect(await listKeys(storeClient, BUCKET, 'backups/restic/_control-plane/snapshots/')).to.include(`backups/restic/_control-plane/snapshots/${fromSchedule.entries[0]!.restic!.snapshot}`);
    expect(fromSchedule.notCovered.some((s) => s.startsWith('control plane not covered: relate katib-db'))).to.equal(true);
    expect(fromSchedule.notCovered.some((s) => s.startsWith('control plane not covered: relate object-storage'))).to.equal(true);
    expect(pebble.output()).to.contain(`${scheduled}: control plane not covered: relate katib-db`);

    // backup-state records the same for the control plane: the same parts, tools, repository and sentences
    const action = await dispatch({ ...state, actionParams: { 'include-volumes': false } }, { event: 'actions/backup-state' });
    const fromAction = await controlPlaneRecord(action.state.actionResults['backup-id']!);
    const shape = (r: ControlPlaneRecord) => ({ notCovered: r.notCovered, entries: r.entries.map((e) => ({ part: e.part, database: e.database, tool: e.tool, repository: e.restic?.repository })) });
    expect(shape(fromSchedule)).to.deep.equal(shape(fromAction));
    expect(pebble.output()).not.to.contain(DB_PASSWORD);
    expect(JSON.stringify(action.state.actionResults) + action.stdout + action.stderr).not.to.contain(DB_PASSWORD);

    // the rows go: a run deleted, a table dropped, a stray table made
    await db.sql("SET FOREIGN_KEY_CHECKS=0; DELETE FROM run_details WHERE UUID = 'r-3'; DROP TABLE experiments; CREATE TABLE stray (x int);", 'mlpipeline');
    expect(await snapshotKfp(db, 'mlpipeline').catch((error: Error) => error.message)).not.to.equal(rowsBefore);

    // no restore yet: the service says so
    await scrapedRestore((succeeded, at) => succeeded === 0 && at === 0);
    // a restore while KFP runs is refused before any write, and the service's metrics say it failed, and when
    await until('the KFP StatefulSets to be ready', () => KFP_WRITERS.every((app) => readyReplicas(app) === 1));
    const asked = Date.now() / 1000;
    const refused = await runDispatch(charmDir, { ...state, actionParams: { 'backup-id': scheduled, 'include-control-plane': true, 'include-volumes': false } }, { event: 'actions/restore-state', env: env() });
    expect(refused.state.actionFailure).to.match(/^Restore refused before any write: the control plane is not quiet: /);
    const failed = await scrapedRestore((succeeded, at) => succeeded === 0 && at > 0);
    expect(failed.at).to.be.within(asked, Date.now() / 1000);

    // restore-state of the scheduled backup, once KFP is stopped (juju scale-application … 0) and the dump's trigger allowed
    for (const app of KFP_WRITERS) cluster.api.mergePatch(STATEFULSETS, app, 'kubeflow', { spec: { replicas: 0 } });
    await until('the KFP StatefulSets to scale to 0', () => KFP_WRITERS.every((app) => !readyReplicas(app)));
    await db.sql('SET GLOBAL log_bin_trust_function_creators = ON;');
    const restore = await dispatch({ ...state, actionParams: { 'backup-id': scheduled, 'include-control-plane': true, 'include-volumes': false } }, { event: 'actions/restore-state' });
    expect(restore.state.actionResults['control-plane']).to.equal('1 part(s) restored');
    expect(await snapshotKfp(db, 'mlpipeline')).to.equal(rowsBefore);
    expect(await db.sql("SHOW TABLES LIKE 'stray'", 'mlpipeline')).to.equal('');
    const restored = await scrapedRestore((succeeded) => succeeded === 1);
    expect(restored.at).to.be.greaterThan(failed.at);
    // the dashboard's restore panels ask the real Prometheus something it answers from what it scraped
    const panels = dashboard().panels as Array<{ title: string; targets: Array<{ expr: string }> }>;
    const restorePanels = panels.filter((p) => /restore/i.test(p.title));
    expect(restorePanels).to.have.length(2);
    for (const panel of restorePanels) expect(await prometheus.query(panel.targets[0]!.expr), panel.title).to.have.length(1);

    // mysql-k8s rotates the password (a new revision of its secret): secret-changed brings it to the service's settings
    const ROTATED = 'rotated kfp "pässword" 2';
    const relation = state.relations.find((r) => r.id === 'kfp-db:7')!;
    await rotateMysqlPassword(state, relation, ROTATED, (user, password) => db.sql(`ALTER USER '${user}'@'%' IDENTIFIED BY '${password.replaceAll("'", "''")}';`).then(() => undefined));
    state = (await dispatch(state, { event: 'secret-changed', secret: { id: relation.remoteAppData['secret-user']! } })).state;
    expect(settings().controlPlane?.targets['kfp-db']?.password).to.equal(ROTATED);
    // the relation goes: the service is told at once, so its next backup says kfp-db is not related
    await dispatch(state, { event: 'kfp-db-relation-broken', relation: 'kfp-db:7' });
    expect(settings().controlPlane).to.deep.include({ related: { 'kfp-db': false, 'katib-db': false, 'object-storage': false } });
    expect(settings().controlPlane?.targets['kfp-db']).to.equal(undefined);
    expect(pebble.output()).not.to.contain(ROTATED);
  });
});
