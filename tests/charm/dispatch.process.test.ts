// The charm as Juju runs it: the real ./dispatch of the built charm, fake hook tools, a real s3rver.
import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, unitStatus, type DispatchEvent, type DispatchOutcome } from '../support/juju/harness.ts';
import { S3_RELATION_ID, TRACK2_SECRET, s3Relation, track1Data, track2 } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';

const BUCKET = 'kubeflow-backups';
const SECRET_VALUES = ['S3RVER', 'rotated-secret-key-value'];

function expectCleanOutcome(outcome: DispatchOutcome): void {
  // No stack trace anywhere a user looks, and no secret value on any command line.
  expect(outcome.stderr).not.to.match(/\n\s+at /);
  for (const s of outcome.state.statusHistory) expect(s.message).not.to.match(/\n|\bat .*\.m?js:\d+/);
  const commandLines = outcome.state.calls.map((call) => call.args.join(' ')).join('\n');
  for (const secret of SECRET_VALUES) expect(commandLines).not.to.include(secret);
}

async function inBatches(jobs: (() => Promise<unknown>)[], size = 3): Promise<void> {
  for (let i = 0; i < jobs.length; i += size) await Promise.allSettled(jobs.slice(i, i + size).map((job) => job()));
}

describe('charm dispatch (real ./dispatch, fake hook tools)', function () {
  let charmDir: string;
  let s3: S3ServerHandle;

  before(async function () {
    // The charm's build is shared by every mocha worker (one builds, the others wait for it): under a loaded machine
    // that wait alone can outlast mocha's default 60 s.
    this.timeout(300_000);
    [charmDir, s3] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] })]);
  });
  after(async () => s3?.stop());

  async function run(state: FakeJujuState, event: DispatchEvent): Promise<DispatchOutcome> {
    const outcome = await runDispatch(charmDir, state, event);
    expectCleanOutcome(outcome);
    return outcome;
  }
  const changed = { event: 's3-credentials-relation-changed', relation: S3_RELATION_ID };

  it('install without s3-integrator sets the version and blocks asking for the relation', async () => {
    const { exitCode, state } = await run(emptyState(), { event: 'install' });
    expect(exitCode).to.equal(0);
    expect(state.applicationVersion).to.equal('0.1.0');
    expect(unitStatus(state)).to.deep.equal({ status: 'blocked', message: 'relate to s3-integrator: juju integrate kubeflow-upgrader s3-integrator' });
  });

  it('relation-joined on the leader writes the requirer keys of both tracks into our application databag', async () => {
    const { exitCode, state } = await run(emptyState({ relations: [s3Relation()] }), { event: 's3-credentials-relation-joined', relation: S3_RELATION_ID });
    expect(exitCode).to.equal(0);
    expect(state.relations[0]!.localAppData).to.deep.equal({
      bucket: 'kubeflow-backups',
      path: 'kubeflow-upgrader',
      'lib-version': '1.0',
      'requested-secrets': '["access-key","secret-key"]',
    });
    expect(unitStatus(state)).to.deep.equal({
      status: 'waiting',
      message: 'waiting for s3-integrator: it needs credentials and a bucket it can find or create ("kubeflow-backups" asked); set s3-bucket here or bucket on s3-integrator',
    });
  });

  it('relation-joined on a follower writes nothing', async () => {
    const { exitCode, state } = await run(emptyState({ leader: false, relations: [s3Relation()] }), { event: 's3-credentials-relation-joined', relation: S3_RELATION_ID });
    expect(exitCode).to.equal(0);
    expect(state.relationSets).to.deep.equal([]);
    expect(state.relations[0]!.localAppData).to.deep.equal({});
  });

  it('the configured bucket and path are what the leader asks for', async () => {
    const start = emptyState({ config: { 's3-bucket': 'team-backups', 's3-path': 'prod/kf' }, relations: [s3Relation()] });
    const { state } = await run(start, { event: 'config-changed' });
    expect(state.relations[0]!.localAppData).to.include({ bucket: 'team-backups', path: 'prod/kf' });
  });

  it('relation-changed with track-1 data turns the unit active', async () => {
    const { exitCode, state } = await run(emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))] }), changed);
    expect(exitCode).to.equal(0);
    // Other facts (the guard, the last backup, the control plane) join the message after the S3 location.
    expect(unitStatus(state)?.status).to.equal('active');
    expect(unitStatus(state)?.message).to.match(new RegExp(`^backups to s3://${BUCKET}/backups(;|$)`));
    expect(unitStatus(state)?.message).to.include('Secrets are stored in clear (set encryption-key)');
  });

  it('relation-changed with track-2 secret-extra reads the secret and turns active', async () => {
    const { exitCode, state } = await run(track2(emptyState(), s3, BUCKET), changed);
    expect(exitCode).to.equal(0);
    expect(state.calls.filter((c) => c.tool === 'secret-get').map((c) => c.args)).to.deep.equal([['--format=json', '--refresh', TRACK2_SECRET]]);
    expect(unitStatus(state)?.status).to.equal('active');
  });

  it('rotated track-2 keys are used at once, in any hook: secret-get always asks for --refresh', async () => {
    const start = track2(emptyState(), s3, BUCKET);
    const secret = start.secrets[TRACK2_SECRET]!;
    // The unit tracks revision 1; revision 2 holds keys s3rver refuses, so "denied" proves they were used. Juju hands
    // out the tracked revision unless --refresh is given, so without it update-status would still see revision 1.
    secret.tracked = 1;
    secret.revisions.push({ 'access-key': 'ROTATEDKEY', 'secret-key': 'rotated-secret-key-value' });
    const { exitCode, state } = await run(start, { event: 'update-status' });
    expect(exitCode).to.equal(0);
    expect(state.secrets[TRACK2_SECRET]!.tracked).to.equal(2);
    expect(unitStatus(state)?.message).to.match(/denied access to bucket "kubeflow-backups"; check the keys in s3-integrator's credentials secret/);
    // Rotated back (a third revision with the good keys): the secret-changed hook picks it up too.
    state.secrets[TRACK2_SECRET]!.revisions.push({ 'access-key': s3.accessKeyId, 'secret-key': s3.secretAccessKey });
    const after = await run(state, { event: 'secret-changed', secret: { id: TRACK2_SECRET, revision: 3 } });
    expect(after.state.secrets[TRACK2_SECRET]!.tracked).to.equal(3);
    expect(unitStatus(after.state)?.status).to.equal('active');
  });

  it('relation-broken blocks asking for the relation again', async () => {
    const start = emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))] });
    const { exitCode, state } = await run(start, { event: 's3-credentials-relation-broken', relation: S3_RELATION_ID });
    expect(exitCode).to.equal(0);
    expect(unitStatus(state)?.message).to.equal('relate to s3-integrator: juju integrate kubeflow-upgrader s3-integrator');
  });

  describe('unusable credentials each block with their own message', () => {
    let closedPort: number;
    let holder: Server;
    before(async () => {
      // A port that refuses connections: bound, then closed.
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      closedPort = (holder.address() as { port: number }).port;
      await new Promise((resolve) => holder.close(resolve));
    });

    const cases: [string, () => Record<string, string>, RegExp][] = [
      ['missing secret-key', () => { const d = track1Data(s3, BUCKET); delete d['secret-key']; return d; }, /^s3-integrator has no secret-key; set the keys with the sync-s3-credentials action/],
      ['endpoint not a URL', () => track1Data(s3, BUCKET, { endpoint: 'minio.kubeflow:9000' }), /^the S3 endpoint "minio.kubeflow:9000" is not an http\(s\) URL/],
      ['bucket missing', () => track1Data(s3, 'no-such-bucket'), /^bucket "no-such-bucket" does not exist at http:\/\/127\.0\.0\.1:\d+/],
      ['access denied', () => track1Data({ ...s3, accessKeyId: 'WRONGKEY' }, BUCKET), /^S3 at http:\/\/127\.0\.0\.1:\d+ denied access to bucket "kubeflow-backups"/],
      ['TLS failure', () => track1Data({ ...s3, endpoint: s3.endpoint.replace('http:', 'https:') }, BUCKET), /^TLS with https:\/\/127\.0\.0\.1:\d+ failed \(/],
      ['unreachable', () => track1Data({ ...s3, endpoint: `http://127.0.0.1:${closedPort}` }, BUCKET), /^cannot reach S3 at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/],
    ];
    // Independent scenarios: dispatched a few at a time up front, asserted one by one.
    const outcomes = new Map<string, Promise<DispatchOutcome>>();
    before(async () => {
      await inBatches(cases.map(([name, data]) => () => {
        const outcome = run(emptyState({ relations: [s3Relation(data())] }), changed);
        outcomes.set(name, outcome);
        return outcome;
      }));
    });
    for (const [name, , message] of cases) {
      it(name, async () => {
        const { exitCode, state } = await outcomes.get(name)!;
        expect(exitCode).to.equal(0);
        expect(unitStatus(state)?.status).to.equal('blocked');
        expect(unitStatus(state)?.message).to.match(message);
      });
    }
  });

  // Databags no provider model writes (garbage laid over track 1's answer): the charm must still say one sentence.
  describe('malformed databags block, exit 0 and print no stack', () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      ['tls-ca-chain not JSON', { 'tls-ca-chain': '-----BEGIN CERTIFICATE----- oops' }, /^tls-ca-chain from s3-integrator is not JSON/],
      ['tls-ca-chain a list of non-certificates', { 'tls-ca-chain': '["hello"]' }, /holds an entry that is not a PEM certificate/],
      ['empty access-key', { 'access-key': '' }, /^s3-integrator has no access-key/],
      ['empty keys', { 'access-key': '', 'secret-key': '' }, /has no access-key and secret-key/],
      ['garbage uri style', { 's3-uri-style': '{"a": [1, 2]}' }, /^s3-uri-style "\{"a": \[1, 2\]\}" is not one of "path", "host", "virtual" or "auto"; fix it on s3-integrator$/],
      ['garbage bucket', { bucket: '../../etc' }, /is not a valid S3 bucket name/],
      ['garbage region', { region: 'us east 1; rm -rf' }, /is not a region name/],
    ];
    const outcomes = new Map<string, Promise<DispatchOutcome>>();
    before(async () => {
      await inBatches(cases.map(([name, patch]) => () => {
        const outcome = run(emptyState({ relations: [s3Relation(track1Data(s3, BUCKET, {}, patch))] }), changed);
        outcomes.set(name, outcome);
        return outcome;
      }));
    });
    for (const [name, , message] of cases) {
      it(name, async () => {
        const { exitCode, state, stderr } = await outcomes.get(name)!;
        expect(exitCode).to.equal(0);
        expect(stderr).to.equal('');
        expect(unitStatus(state)?.status).to.equal('blocked');
        expect(unitStatus(state)?.message).to.match(message);
      });
    }
  });

  it('an unreadable track-2 secret blocks with one sentence', async () => {
    const start = track2(emptyState(), s3, BUCKET);
    start.secrets[TRACK2_SECRET]!.denied = true;
    const { exitCode, state } = await run(start, changed);
    expect(exitCode).to.equal(0);
    expect(unitStatus(state)?.message).to.equal("cannot read s3-integrator's credentials secret; check that s3-integrator granted it to this application, or put the keys in a Juju secret, juju grant-secret it to s3-integrator and juju config s3-integrator credentials=<secret-uri>");
  });

  it('a bad config value blocks naming the option', async () => {
    const start = emptyState({ config: { 'max-backup-age': 'forever' }, relations: [s3Relation(track1Data(s3, BUCKET))] });
    const { exitCode, state } = await run(start, { event: 'config-changed' });
    expect(exitCode).to.equal(0);
    expect(unitStatus(state)).to.deep.equal({ status: 'blocked', message: 'config option max-backup-age must be a duration like 30m, 24h or 7d' });
  });

  it('hooks the charm does not handle are acknowledged without side effects', async () => {
    const { exitCode, state } = await run(emptyState(), { event: 'pre-series-upgrade' });
    expect(exitCode).to.equal(0);
    expect(state.calls).to.deep.equal([]);
  });

  describe('actions', () => {
    it('an action that needs the cluster, run where there is none, fails with one sentence and a non-zero exit', async () => {
      const start = emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: { 'include-volumes': true } });
      const { exitCode, state } = await run(start, { event: 'actions/backup-state' });
      expect(exitCode).to.not.equal(0);
      expect(state.actionFailure).to.equal('No Kubernetes API is reachable: the charm has no pod service account and KUBECONFIG is not set; deploy it on a Kubernetes model with --trust.');
      expect(state.actionResults).to.deep.equal({});
    });

    it('bad params fail naming the parameter, before anything runs', async () => {
      const { exitCode, state } = await run(emptyState({ actionParams: { limit: 0 } }), { event: 'actions/list-backups' });
      expect(exitCode).to.not.equal(0);
      expect(state.actionFailure).to.match(/^Parameter "limit" of list-backups .+\.$/);
      expect(state.calls.map((c) => c.tool)).to.deep.equal(['action-get', 'action-fail']);
    });

    it('an unknown parameter is refused', async () => {
      const { exitCode, state } = await run(emptyState({ actionParams: { 'backup-id': 'latest', force: true } }), { event: 'actions/verify-backup' });
      expect(exitCode).to.not.equal(0);
      expect(state.actionFailure).to.equal('verify-backup has no parameter "force".');
    });

    it('an action Juju does not know of fails with one sentence', async () => {
      const { exitCode, state } = await run(emptyState(), { event: 'actions/make-coffee' });
      expect(exitCode).to.not.equal(0);
      expect(state.actionFailure).to.equal('This charm has no action "make-coffee".');
    });
  });
});
