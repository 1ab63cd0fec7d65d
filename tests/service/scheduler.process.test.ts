// Scheduled backups end to end with real parts: the real Pebble runs the real service (lib/service.mjs) that the packed
// charm's ./dispatch pushed into it, against the embedded Kubernetes API server and a real S3 (s3rver). A schedule of
// every minute for three slots: three backups by the backup engine, retention applied after each by the prune engine,
// and the metrics moving. Every wait is for a sign the service gives (a line Pebble logs for it), never a sleep.
import { expect } from 'chai';
import { dirname, join } from 'node:path';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, unitStatus, type DispatchEvent } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { freePort, startPebble, type RunningPebble } from '../support/pebble/pebble.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { runEvent } from '../support/juju/run-event.ts';
import { FaultProxy, type SeenRequest } from '../support/s3/fault-proxy.ts';
import { PebbleClient } from '../../src/pebble/client.ts';
import { openBackupStore } from '../../src/store/open.ts';
import { readdirSync, readFileSync } from 'node:fs';
import type { S3Settings } from '../../src/store/settings.ts';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus/prometheus.ts';
import { alertRules } from '../../src/observability/alert-rules.ts';

const BUCKET = 'kubeflow-backups';
const KEY_SECRET = 'secret:cta0schedbackupkey01';
const KEY = 'the scheduled backups key';
const TOPOLOGY = { model: 'kubeflow', model_uuid: '6f9a2b1c-1111-4a3b-8c3d-000000000001', application: 'kubeflow-upgrader', unit: 'kubeflow-upgrader/0', charm_name: 'kubeflow-upgrader' };

describe('scheduled backups under the real Pebble: every minute for three slots, scraped by the real Prometheus', function () {
  this.timeout(400_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let cluster: RunningCluster;
  let pebble: RunningPebble;
  let prometheus: RunningPrometheus;
  let port: number;

  before(async () => {
    port = await freePort();
    [charmDir, s3, cluster] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 2, seed: 44 })]);
    pebble = await startPebble({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, KUBEFLOW_UPGRADER_METRICS_PORT: String(port) });
    // the job and labels COS gives a unit's target (prometheus_scrape.py: the topology labels and juju_unit)
    prometheus = await startPrometheus({
      target: `127.0.0.1:${port}`, jobName: 'kubeflow_upgrader', labels: { juju_model: 'kubeflow', juju_application: 'kubeflow-upgrader', juju_unit: 'kubeflow-upgrader/0' },
      ruleFiles: { 'rules.json': alertRules(TOPOLOGY) },
    });
  });
  after(async () => {
    await prometheus?.stop();
    await pebble?.stop();
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

  /** waits for Prometheus to answer `expr` with a sample satisfying `ok` (it scrapes every second) */
  async function scraped(expr: string, ok: (value: number) => boolean): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const result = await prometheus.query(expr);
      if (result.some((r) => ok(Number(r.value[1])))) return;
      if (Date.now() > deadline) throw new Error(`Prometheus never answered ${expr} as awaited: ${JSON.stringify(result)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  const state = (config: Record<string, unknown>, extra: Partial<FakeJujuState> = {}): FakeJujuState => emptyState({
    config: { 'encryption-key': KEY_SECRET, 'volume-mover-engine': 'rclone', ...config },
    secrets: { [KEY_SECRET]: { revisions: [{ key: KEY }] } },
    relations: [s3Relation(track1Data(s3, BUCKET))],
    ...extra,
  });
  const env = () => ({
    KUBEFLOW_UPGRADER_PEBBLE_SOCKET: pebble.socket, KUBEFLOW_UPGRADER_WORKLOAD_ROOT: join(pebble.root, 'srv'),
    KUBEFLOW_UPGRADER_METRICS_PORT: String(port), KUBECONFIG: cluster.kubeconfigPath,
  });
  const run = (s: FakeJujuState, event: DispatchEvent) => runDispatch(charmDir, s, { ...event, env: { ...env(), ...event.env } });
  const metric = async (name: string, labels = '') => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };
  const succeeded = (text: string) => [...text.matchAll(/scheduled backup (kf-\d{8}-\d{6}-[0-9a-f]{6}) succeeded/g)].map((m) => m[1]!);
  const listBackups = async () => {
    const listed = await runEvent(state({}, { actionParams: {} }), { event: 'actions/list-backups', env: { KUBECONFIG: cluster.kubeconfigPath } });
    return Object.entries(listed.state.actionResults).filter(([k]) => /^backups\.\d+\.id$/.test(k)).map(([, v]) => v);
  };

  it('backs up at once (no backup yet), then at each slot; keeps backup-retention of them; the metrics follow', async () => {
    const outcome = await run(state({ 'backup-schedule': '* * * * *', 'backup-retention': 2 }), { event: 'upgrader-pebble-ready', env: { JUJU_WORKLOAD_NAME: 'upgrader' } });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    // the missed slot (the bucket holds no backup): run once on start
    await pebble.waitFor(/the slot of .* was missed \(newest backup: none\): backing up now/);
    await pebble.waitFor(/scheduled backup kf-\S+ succeeded/, 60_000);
    const first = succeeded(pebble.output());
    expect(first).to.have.length(1);
    expect(await metric('kubeflow_upgrader_backup_attempts_total', '{result="succeeded"}')).to.equal(1);
    const firstSuccess = await metric('kubeflow_upgrader_backup_last_success_timestamp_seconds');
    expect(firstSuccess).to.be.greaterThan(0);
    expect(await metric('kubeflow_upgrader_backup_objects')).to.be.greaterThan(10);
    expect(await metric('kubeflow_upgrader_backup_last_attempt_succeeded')).to.equal(1);

    // two more slots, a minute apart
    await pebble.waitFor(/(scheduled backup kf-\S+ succeeded[\s\S]*){3}/, 150_000);
    const three = succeeded(pebble.output());
    expect(three).to.have.length(3);
    expect(new Set(three).size).to.equal(3);
    expect(await metric('kubeflow_upgrader_backup_attempts_total', '{result="succeeded"}')).to.equal(3);
    expect(await metric('kubeflow_upgrader_backup_last_success_timestamp_seconds')).to.be.greaterThan(firstSuccess!);
    // retention 2: the third backup's retention deleted the first
    expect(await metric('kubeflow_upgrader_prune_deleted_backups_total')).to.equal(1);
    expect(await metric('kubeflow_upgrader_prune_blocked')).to.equal(0);
    expect((await listBackups()).sort()).to.deep.equal(three.slice(1).sort());

    // the unit status shows the next run and the last result
    const status = await run(outcome.state, { event: 'update-status' });
    expect(unitStatus(status.state)?.message).to.match(new RegExp(`last scheduled run succeeded at \\S+ \\(${three[2]}\\)`));
    expect(pebble.output()).not.to.contain(KEY);

    // Prometheus scraped the moving metrics
    await scraped('kubeflow_upgrader_backup_attempts_total{result="succeeded"}', (v) => v === 3);
    await scraped('kubeflow_upgrader_prune_deleted_backups_total', (v) => v === 1);
    // the service is stopped: Prometheus sees the target down, and the "backup too old" rule, evaluated by Prometheus
    // over what it scraped, holds once two intervals and ten minutes have passed since the last backup, not before
    await new PebbleClient(pebble.socket).serviceAction('stop', ['kubeflow-upgrader']);
    await scraped('up{job="kubeflow_upgrader"}', (v) => v === 0);
    const tooOld = alertRules(TOPOLOGY).groups[0]!.rules.find((r) => r.alert === 'KubeflowUpgraderBackupTooOld')!.expr;
    const lastSuccess = Number((await prometheus.query('last_over_time(kubeflow_upgrader_backup_last_success_timestamp_seconds[7d])'))[0]!.value[1]);
    expect(await prometheus.query(tooOld)).to.deep.equal([]);
    expect(await prometheus.query(tooOld, new Date((lastSuccess + 2 * 60 + 600 - 30) * 1000))).to.deep.equal([]);
    const late = await prometheus.query(tooOld, new Date((lastSuccess + 2 * 60 + 600 + 30) * 1000));
    expect(late).to.have.length(1);
    expect(late[0]!.metric).to.include({ juju_unit: 'kubeflow-upgrader/0' });
  });
});

describe('a scheduled backup in flight: new settings replan without stopping it; a killed service restarts and takes its lease over', function () {
  this.timeout(300_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let proxy: FaultProxy;
  let cluster: RunningCluster;
  let pebble: RunningPebble;
  let port: number;

  before(async () => {
    port = await freePort();
    [charmDir, s3, cluster] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 1, seed: 45 })]);
    proxy = await FaultProxy.start({ target: s3.endpoint });
    pebble = await startPebble({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, KUBEFLOW_UPGRADER_METRICS_PORT: String(port) });
  });
  after(async () => {
    await pebble?.stop();
    await proxy?.stop();
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

  const root = () => join(pebble.root, 'srv');
  const state = (config: Record<string, unknown>): FakeJujuState => emptyState({
    config: { 'encryption-key': KEY_SECRET, 'volume-mover-engine': 'rclone', ...config },
    secrets: { [KEY_SECRET]: { revisions: [{ key: KEY }] } },
    // the service reaches S3 through the proxy, which can hold the backup's tarball upload: the backup is then in flight
    relations: [s3Relation(track1Data({ ...s3, endpoint: proxy.endpoint }, BUCKET))],
  });
  const run = async (s: FakeJujuState, event: DispatchEvent) => {
    const outcome = await runDispatch(charmDir, s, {
      ...event,
      env: { KUBEFLOW_UPGRADER_PEBBLE_SOCKET: pebble.socket, KUBEFLOW_UPGRADER_WORKLOAD_ROOT: root(), KUBEFLOW_UPGRADER_METRICS_PORT: String(port), KUBECONFIG: cluster.kubeconfigPath, ...event.env },
    });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    return outcome;
  };
  /** the proxy's sign that the backup is in flight, or a failure that shows what the service logged */
  const within = <T>(promise: Promise<T>, ms: number, what: string) => Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms; Pebble's output:\n${pebble.output().slice(-5000)}`)), ms).unref()),
  ]);
  const tarballUpload = (r: SeenRequest) => r.method !== 'GET' && r.method !== 'HEAD' && /\/kf-[^/]+\/kf-[^/]+\.tar\.gz/.test(r.url);
  const started = () => [...pebble.output().matchAll(/backup (kf-\d{8}-\d{6}-[0-9a-f]{6}) started/g)].map((m) => m[1]!);
  const service = async () => (await new PebbleClient(pebble.socket).services(['kubeflow-upgrader']))[0] as unknown as Record<string, string>;
  /** the bucket as the service reaches it: the S3 settings the charm pushed into the container */
  const bucket = () => openBackupStore((JSON.parse(readFileSync(join(root(), 'settings.json'), 'utf8')) as { s3: S3Settings }).s3);

  it('a new schedule and retention while a backup runs: the replan restarts nothing and the backup completes', async () => {
    const held = proxy.when(tarballUpload, { hold: true });
    // a yearly schedule: the empty bucket makes its last slot a missed one, run at once; the next is months away
    await run(state({ 'backup-schedule': '0 0 1 1 *' }), { event: 'upgrader-pebble-ready', env: { JUJU_WORKLOAD_NAME: 'upgrader' } });
    await held;
    await pebble.waitFor(/backup kf-\S+ started/);
    const inFlight = started()[0]!;
    const before = await service();
    await run(state({ 'backup-schedule': '0 0 2 1 *', 'backup-retention': 3 }), { event: 'config-changed' });
    await pebble.waitFor(/backup-schedule "0 0 2 1 \*": next backup at/);
    expect((await service())['current-since']).to.equal(before['current-since']);
    proxy.releaseHeld();
    await pebble.waitFor(new RegExp(`scheduled backup ${inFlight} succeeded`), 60_000);
    expect(pebble.output().match(/Service "kubeflow-upgrader" starting/g)).to.have.length(1);
    // a changed schedule is not a slot: nothing else was started
    expect(started()).to.deep.equal([inFlight]);
  });

  it('SIGKILL mid-backup: Pebble restarts the service, which runs the missed slot at once, taking over its dead process\'s lease', async () => {
    const held = proxy.when(tarballUpload, { hold: true });
    // every minute: the next slot comes within a minute
    await run(state({ 'backup-schedule': '* * * * *' }), { event: 'config-changed' });
    await held;
    await pebble.waitFor(/(backup kf-\S+ started[\s\S]*){2}/, 90_000);
    const killed = started()[1]!;
    const pid = servicePid(join(root(), 'service.mjs'));
    process.kill(pid, 'SIGKILL');
    // Pebble's sign: it saw the service exit and started it again (on-failure: restart)
    await pebble.waitFor(/(Service "kubeflow-upgrader" starting[\s\S]*){2}/, 30_000);
    await pebble.waitFor(/the slot of \S+ was missed .*: backing up now/, 30_000);
    await pebble.waitFor(/(backup kf-\S+ started[\s\S]*){3}/, 30_000);
    const taken = started()[2]!;
    await pebble.waitFor(new RegExp(`scheduled backup ${taken} succeeded`), 60_000);
    expect(taken).to.not.equal(killed);
    // the lease was taken over, not waited out (15 minutes): the dead process's folder, run record and all, is gone
    expect(pebble.output()).to.contain(`removed backup ${killed}, which this service's killed process left unfinished`);
    const folders = await bucket().listBackupFolders();
    expect(folders.map((f) => f.id)).not.to.include(killed);
    expect(folders.find((f) => f.id === taken)?.complete).to.equal(true);
    proxy.releaseHeld();
  });

  it('backup-state wait=false hands the backup to the service and names it at once; list-backups shows it running; an action backup meanwhile is refused by the lease', async () => {
    // no schedule: only the handed-over backup runs
    await run(state({}), { event: 'config-changed' });
    await pebble.waitFor(/no backup-schedule: backups run only when asked/);
    const held = proxy.when(tarballUpload, { hold: true });
    const action = (params: Record<string, unknown>) => run({ ...state({}), actionParams: params }, { event: 'actions/backup-state' });
    const handed = await action({ wait: false, description: 'before the refresh' });
    const id = handed.state.actionResults['backup-id']!;
    expect(id).to.match(/^kf-\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(handed.state.actionResults).to.include({ status: 'handed to the service: list-backups shows it under running until it is committed, then among the backups' });
    expect(handed.state.actionResults['notes.0']).to.equal('it starts within seconds, or once the backup being written now (if any) has finished');
    await within(held, 60_000, 'the handed-over backup\'s upload');
    const listed = await run({ ...state({}), actionParams: {} }, { event: 'actions/list-backups' });
    expect(listed.state.actionResults['running.0.id']).to.equal(id);
    // one backup at a time: the action's own backup is refused in one sentence, naming the one being written
    const refused = await runDispatch(charmDir, { ...state({}), actionParams: { 'include-volumes': false, 'include-control-plane': false } }, {
      event: 'actions/backup-state', env: { KUBECONFIG: cluster.kubeconfigPath },
    });
    expect(refused.state.actionFailure).to.match(new RegExp(`^Backup ${id} is being written \\(started \\S+; its run record holds until \\S+\\), and one backup at a time is written to a bucket location, so this one was not started; start it again once that one has finished, or after \\S+ if it was stopped\\.$`));
    proxy.releaseHeld();
    await pebble.waitFor(new RegExp(`handed-over backup ${id} succeeded`), 60_000);
    const after = await run({ ...state({}), actionParams: {} }, { event: 'actions/list-backups' });
    expect(after.state.actionResults['running.0.id']).to.equal(undefined);
    expect(Object.entries(after.state.actionResults).find(([, v]) => v === id)?.[0]).to.match(/^backups\.\d+\.id$/);
  });
});

/** The pid of the node process running `bundle` (the service Pebble started for this test: its path is this test's own). */
function servicePid(bundle: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes(bundle)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no process runs ${bundle}`);
}
