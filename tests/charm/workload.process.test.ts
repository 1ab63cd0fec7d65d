// The workload container end to end with real parts: the real Pebble (tests/support/pebble) as the container's PID 1,
// the packed charm's ./dispatch talking to its socket, and the real service (lib/service.mjs) it pushes and Pebble runs,
// against a real S3 (s3rver). What is checked is what an operator would see: the files in the container and their
// modes, `pebble plan`, the service's state, its /metrics and the unit status.
import { expect } from 'chai';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PebbleClient } from '../../src/pebble/client.ts';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, unitStatus, type DispatchEvent } from '../support/juju/harness.ts';
import { S3_RELATION_ID, s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { freePort, startPebble, type RunningPebble } from '../support/pebble/pebble.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';

const BUCKET = 'kubeflow-backups';
const KEY_SECRET = 'secret:cta0workloadkey00001';
const KEY = 'a passphrase nobody may read in a plan';

describe('the workload container under the real Pebble, set up by the real ./dispatch', function () {
  this.timeout(120_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let pebble: RunningPebble;
  let port: number;
  let root: string;

  before(async () => {
    port = await freePort();
    [charmDir, s3] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] })]);
    // the official Node.js image has node on PATH; here, the project's Node.js 24 is
    pebble = await startPebble({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, KUBEFLOW_UPGRADER_METRICS_PORT: String(port) });
    root = join(pebble.root, 'srv');
  });
  after(async () => {
    await pebble?.stop();
    await s3?.stop();
  });

  const env = () => ({ KUBEFLOW_UPGRADER_PEBBLE_SOCKET: pebble.socket, KUBEFLOW_UPGRADER_WORKLOAD_ROOT: root, KUBEFLOW_UPGRADER_METRICS_PORT: String(port) });
  const run = (state: FakeJujuState, event: DispatchEvent) => runDispatch(charmDir, state, { ...event, env: { ...env(), ...event.env } });
  const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const metric = (text: string, name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };
  function state(config: Record<string, unknown>): FakeJujuState {
    return emptyState({
      config: { 'encryption-key': KEY_SECRET, ...config },
      secrets: { [KEY_SECRET]: { revisions: [{ key: KEY }] } },
      relations: [s3Relation(track1Data(s3, BUCKET))],
    });
  }

  it('on pebble-ready pushes the bundle and a 0600 settings file, adds a layer that holds no secret, and starts the service', async () => {
    const outcome = await run(state({ 'backup-schedule': '*/5 * * * *', 'volume-mover-engine': 'rclone' }), { event: 'upgrader-pebble-ready', env: { JUJU_WORKLOAD_NAME: 'upgrader' } });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    const settingsPath = join(root, 'settings.json');
    expect(statSync(settingsPath).mode & 0o777).to.equal(0o600);
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as { schedule: string; s3: { secretKey: string }; encryptionKey: string };
    expect(settings).to.deep.include({ schedule: '*/5 * * * *', encryptionKey: KEY });
    expect(settings.s3.secretKey).to.equal(s3.secretAccessKey);
    expect(readFileSync(join(root, 'service.mjs')).equals(readFileSync(join(charmDir, 'lib', 'service.mjs')))).to.equal(true);

    const client = new PebbleClient(pebble.socket);
    const plan = await client.planYaml();
    expect(plan).to.contain(`command: node ${root}/service.mjs ${root}/settings.json`);
    for (const secret of [KEY, s3.secretAccessKey, s3.accessKeyId]) expect(plan).not.to.contain(secret);
    const [service] = await client.services(['kubeflow-upgrader']);
    expect(service).to.deep.include({ startup: 'enabled', current: 'active' });

    // the service's own sign (Pebble logs its output): it has read the schedule and serves its metrics
    await pebble.waitFor(/backup-schedule "\*\/5 \* \* \* \*": next backup at/);
    await pebble.waitFor(/serving metrics on/);
    const text = await metrics();
    expect(metric(text, 'kubeflow_upgrader_schedule_enabled')).to.equal(1);
    expect(metric(text, 'kubeflow_upgrader_schedule_interval_seconds')).to.equal(300);
    // the bucket holds no backup: 0, which the "no backup ever" alert reads
    expect(metric(text, 'kubeflow_upgrader_backup_last_success_timestamp_seconds')).to.equal(0);
    // no secret in what Pebble logged of the service, or in what the charm logged
    for (const secret of [KEY, s3.secretAccessKey]) {
      expect(pebble.output()).not.to.contain(secret);
      expect(JSON.stringify(outcome.state.logs)).not.to.contain(secret);
    }
  });

  it('a new schedule is new settings and a replan that restarts nothing; the service takes it up', async () => {
    const client = new PebbleClient(pebble.socket);
    const before = (await client.services(['kubeflow-upgrader']))[0] as unknown as Record<string, string>;
    const outcome = await run(state({ 'backup-schedule': '0 * * * *', 'volume-mover-engine': 'rclone' }), { event: 'config-changed' });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    await pebble.waitFor(/backup-schedule "0 \* \* \* \*": next backup at/);
    expect(metric(await metrics(), 'kubeflow_upgrader_schedule_interval_seconds')).to.equal(3600);
    const after = (await client.services(['kubeflow-upgrader']))[0] as unknown as Record<string, string>;
    expect(after['current-since']).to.equal(before['current-since']);
    expect(pebble.output().match(/Service "kubeflow-upgrader" starting/g) ?? []).to.have.length(1);
    // the status shows the next run as the service has it: the hourly one once it has read its new settings
    expect(unitStatus(outcome.state)?.message).to.match(/; next scheduled backup \d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z/);
    const later = await run(outcome.state, { event: 'update-status' });
    expect(unitStatus(later.state)?.message).to.match(/; next scheduled backup \d{4}-\d\d-\d\dT\d\d:00:00\.000Z/);
  });

  it('an invalid schedule blocks the unit in one sentence and leaves the service as it was', async () => {
    const outcome = await run(state({ 'backup-schedule': '0 * *', 'volume-mover-engine': 'rclone' }), { event: 'config-changed' });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    expect(unitStatus(outcome.state)).to.deep.equal({
      status: 'blocked',
      message: 'config option backup-schedule must be a cron expression of five fields (minute hour day month weekday, e.g. "0 2 * * *"), not 3 fields',
    });
    expect((JSON.parse(readFileSync(join(root, 'settings.json'), 'utf8')) as { schedule: string }).schedule).to.equal('0 * * * *');
  });

  it('a hook while the container is not up leaves it to pebble-ready, and fails nothing', async () => {
    const outcome = await runDispatch(charmDir, state({ 'volume-mover-engine': 'rclone' }), {
      event: 'config-changed', env: { ...env(), KUBEFLOW_UPGRADER_PEBBLE_SOCKET: join(pebble.root, 'absent.socket') },
    });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    expect(outcome.state.logs.some((l) => /^the upgrader container is not reachable yet \(.*ENOENT.*\); its pebble-ready will set it up$/.test(l.message)), JSON.stringify(outcome.state.logs)).to.equal(true);
  });
});
