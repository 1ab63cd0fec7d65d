// Scheduled backups end to end with real parts: the real Pebble runs the real service (lib/service.mjs) that the packed
// charm's ./dispatch pushed into it, against the embedded Kubernetes API server and a real S3 (s3rver). A schedule of
// every minute for three slots: three backups by the backup engine, retention applied after each by the prune engine,
// and the metrics moving. Every wait is for a sign the service gives (a line Pebble logs for it), never a sleep.
import { expect } from 'chai';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, unitStatus, type DispatchEvent } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { freePort, startPebble, type RunningPebble } from '../support/pebble/pebble.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { runEvent } from '../support/juju/run-event.ts';

const BUCKET = 'kubeflow-backups';
const KEY_SECRET = 'secret:cta0schedbackupkey01';
const KEY = 'the scheduled backups key';

describe('scheduled backups under the real Pebble: every minute for three slots', function () {
  this.timeout(400_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let cluster: RunningCluster;
  let pebble: RunningPebble;
  let port: number;

  before(async () => {
    port = await freePort();
    [charmDir, s3, cluster] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 2, seed: 44 })]);
    pebble = await startPebble({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, KUBEFLOW_UPGRADER_METRICS_PORT: String(port) });
  });
  after(async () => {
    await pebble?.stop();
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

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
  });
});
