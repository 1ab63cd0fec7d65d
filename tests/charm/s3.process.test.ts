// The s3-credentials relation as s3-integrator (both tracks) and AWS really behave: addressing style, region
// redirects, plain-string values, a reset tls-ca-chain, and what the unit says while track 2 has not answered.
// Addressing and regions go through the real ./dispatch, to s3rver behind region-proxy.ts (virtual-hosted requests,
// 301 with the bucket's region), with a resolver for <bucket>.s3.localhost in the charm's process; the rest are the
// charm's decisions over path-style s3rver, run in process (runEvent).
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, unitStatus, type DispatchEvent, type DispatchOutcome } from '../support/juju/harness.ts';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { S3_RELATION_ID, TRACK2_SECRET, s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type Databag, type FakeJujuState } from '../support/juju/state.ts';
import { Track1Integrator, Track2Integrator } from '../support/juju/s3-integrator.ts';
import { RegionProxy } from '../support/s3/region-proxy.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';

const BUCKET = 'kubeflow-backups';
const WEST_BUCKET = 'kf-west';
/** A key s3rver knows; JSON-decoded it would become 12345678901234567000, a key it does not know. */
const NUMERIC_KEY = '12345678901234567890';
const LOCALHOST_DNS = fileURLToPath(new URL('../support/s3/localhost-dns.cjs', import.meta.url));

describe('charm s3-credentials relation (addressing and regions through the real ./dispatch behind an AWS-like region proxy)', function () {
  let charmDir: string;
  let s3: S3ServerHandle;
  let proxy: RegionProxy;

  before(async function () {
    // The charm's build is shared by every mocha worker (one builds, the others wait for it): under a loaded machine
    // that wait alone can outlast mocha's default 60 s.
    this.timeout(300_000);
    [charmDir, s3] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET, WEST_BUCKET, 'relation-3'], accessKeys: [NUMERIC_KEY] })]);
    proxy = await RegionProxy.start({ target: s3.endpoint, bucketRegions: { [WEST_BUCKET]: 'eu-west-1' } });
  });
  after(async () => {
    await proxy?.stop();
    await s3?.stop();
  });

  /**
   * Through the packed ./dispatch, where the charm's own Node resolves `<bucket>.s3.localhost` as a cluster's DNS
   * would resolve a real endpoint (a resolver hook this test process must not take on).
   */
  async function run(state: FakeJujuState, event: DispatchEvent): Promise<DispatchOutcome> {
    return runDispatch(charmDir, state, { ...event, env: { NODE_OPTIONS: `--require ${LOCALHOST_DNS}`, ...event.env } });
  }
  /** The charm's decisions in process (runEvent): path-style requests to s3rver, no resolver needed. */
  const decide = (state: FakeJujuState, event: DispatchEvent): Promise<EventOutcome> => runEvent(state, event);
  const changed = { event: 's3-credentials-relation-changed', relation: S3_RELATION_ID };
  const viaProxy = (bucket: string, extra: Databag = {}) => {
    const data = track1Data({ ...s3, endpoint: proxy.endpoint }, bucket, extra);
    delete data['s3-uri-style'];
    return { ...data, ...extra };
  };
  const seenSince = (mark: number) => proxy.seen.slice(mark);

  describe('addressing', () => {
    it('without s3-uri-style, a custom endpoint is addressed in path style and the unit is active', async () => {
      const mark = proxy.seen.length;
      const { exitCode, state } = await run(emptyState({ relations: [s3Relation(viaProxy(BUCKET))] }), changed);
      expect(exitCode).to.equal(0);
      expect(unitStatus(state)?.status).to.equal('active');
      const styles = new Set(seenSince(mark).map((r) => r.style));
      expect([...styles]).to.deep.equal(['path']);
    });

    for (const [value, style] of [['virtual', 'host'], ['host', 'host'], ['auto', 'path']] as const) {
      it(`s3-uri-style "${value}" is accepted and sends ${style}-style requests`, async () => {
        const mark = proxy.seen.length;
        const { state } = await run(emptyState({ relations: [s3Relation(viaProxy(BUCKET, { 's3-uri-style': value }))] }), changed);
        expect(unitStatus(state)?.status).to.equal('active');
        const seen = seenSince(mark);
        expect(seen.length).to.be.greaterThan(0);
        expect(seen.every((r) => r.style === style && r.bucket === BUCKET)).to.equal(true);
        if (style === 'host') expect(seen[0]!.host).to.match(new RegExp(`^${BUCKET}\\.s3\\.localhost:\\d+$`));
      });
    }
  });

  describe('regions', () => {
    it('a bucket in another region blocks the unit with the region S3 names', async () => {
      const { exitCode, state } = await run(emptyState({ relations: [s3Relation(viaProxy(WEST_BUCKET, { region: 'us-west-2', 's3-uri-style': 'virtual' }))] }), changed);
      expect(exitCode).to.equal(0);
      expect(unitStatus(state)).to.deep.equal({ status: 'blocked', message: `bucket "${WEST_BUCKET}" is in region eu-west-1, not us-west-2; set region=eu-west-1 on s3-integrator` });
    });

    it('with the right region there is no redirect at all', async () => {
      const mark = proxy.seen.length;
      const { state } = await run(emptyState({ relations: [s3Relation(viaProxy(WEST_BUCKET, { region: 'eu-west-1', 's3-uri-style': 'virtual' }))] }), changed);
      expect(unitStatus(state)?.status).to.equal('active');
      expect(seenSince(mark).filter((r) => r.redirected)).to.deep.equal([]);
    });

    it('an action with the SDK client follows the redirect to the bucket\'s region', async () => {
      const mark = proxy.seen.length;
      const start = emptyState({ relations: [s3Relation(viaProxy(WEST_BUCKET, { region: 'us-west-2', 's3-uri-style': 'virtual' }))], actionParams: { limit: 5 } });
      const { exitCode, state } = await run(start, { event: 'actions/list-backups' });
      expect(state.actionFailure).to.equal(undefined);
      expect(exitCode).to.equal(0);
      expect(state.actionResults.count).to.equal('0');
      const seen = seenSince(mark);
      expect(seen[0]).to.include({ redirected: 301, signedRegion: 'us-west-2', style: 'host' });
      // the SDK keeps no region between requests: each listing (the backups, then those being written) is redirected
      // once, and its retry is signed for the bucket's region and answered
      seen.forEach((r, i) => {
        if (r.redirected) expect(seen[i + 1], `the retry of request ${i}`).to.include({ signedRegion: 'eu-west-1' });
        else expect(r.signedRegion, `request ${i}`).to.equal('eu-west-1');
      });
      expect(seen.at(-1)).to.not.have.property('redirected');
    });
  });

  describe('regions, before any Job', () => {
    // rclone in the Jobs would meet the 301 partway through (it switches region only without an endpoint:
    // rclone/rclone backend/s3/s3.go updateRegionForBucket), so the actions that start Jobs check the bucket first.
    for (const [action, params] of [
      ['backup-state', { 'include-volumes': true, 'include-control-plane': true }],
      ['restore-state', { 'backup-id': 'kf-20260101-000000-abcdef', 'include-volumes': true }],
    ] as const) {
      it(`${action} fails at once with the region S3 names, having sent nothing but the bucket check`, async () => {
        const mark = proxy.seen.length;
        const start = emptyState({ relations: [s3Relation(viaProxy(WEST_BUCKET, { region: 'us-west-2', 's3-uri-style': 'virtual' }))], actionParams: params });
        const { exitCode, state } = await run(start, { event: `actions/${action}` });
        expect(exitCode).to.not.equal(0);
        expect(state.actionFailure).to.equal(`S3 cannot be used: bucket "${WEST_BUCKET}" is in region eu-west-1, not us-west-2; set region=eu-west-1 on s3-integrator. Nothing was started.`);
        expect(seenSince(mark).map((r) => [r.method, r.redirected])).to.deep.equal([['HEAD', 301]]);
      });
    }
  });

  describe('values are plain strings', () => {
    it('a 20-digit access key is used exactly as written', async () => {
      const data = track1Data({ ...s3, accessKeyId: NUMERIC_KEY }, BUCKET);
      const { state } = await decide(emptyState({ relations: [s3Relation(data)] }), changed);
      expect(unitStatus(state)?.status).to.equal('active');
    });

    for (const [chain, why] of [['', 'after `juju config --reset tls-ca-chain`, written `""`'], [[], 'an empty list, written `[]`']] as const) {
      it(`tls-ca-chain ${why} (s3-integrator 1) means no chain: active`, async () => {
        const data = track1Data(s3, BUCKET, { 'tls-ca-chain': chain === '' ? '' : [] });
        expect(data['tls-ca-chain']).to.equal(chain === '' ? '""' : '[]');
        const { state } = await decide(emptyState({ relations: [s3Relation(data)] }), changed);
        expect(unitStatus(state)?.status).to.equal('active');
      });
    }
  });

  describe('track 2', () => {
    const silentProvider = (config: Record<string, unknown> = {}) => emptyState({ config, relations: [s3Relation({}, {})] });

    it('while s3-integrator 2 has not answered, the wait names the bucket asked for and what to set', async () => {
      const joined = await decide(silentProvider(), { event: 's3-credentials-relation-joined', relation: S3_RELATION_ID });
      expect(joined.state.relations[0]!.localAppData).to.include({ bucket: BUCKET, 'lib-version': '1.0' });
      expect(unitStatus(joined.state)).to.deep.equal({
        status: 'waiting',
        message: `waiting for s3-integrator: it needs credentials and a bucket it can find or create ("${BUCKET}" asked); set s3-bucket here or bucket on s3-integrator`,
      });
    });

    it('a dotted bucket name, which s3-integrator 2 cannot create, is named in the wait', async () => {
      const { state } = await decide(silentProvider({ 's3-bucket': 'team.backups' }), { event: 'config-changed' });
      expect(state.relations[0]!.localAppData).to.include({ bucket: 'team.backups' });
      expect(unitStatus(state)).to.deep.equal({
        status: 'waiting',
        message: 'waiting for s3-integrator: its track 2 cannot create "team.backups" (a-z, 0-9 and -, 3-63 long); set s3-bucket here or bucket on s3-integrator',
      });
    });

    it('missing keys name the track-2 fix, never sync-s3-credentials', async () => {
      const start = emptyState({
        // Track 2's answer, its secret then holding one key only.
        relations: [s3Relation(Track2Integrator.databag({ endpoint: s3.endpoint, accessKey: s3.accessKeyId, secretKey: '', region: 'us-east-1' }, BUCKET).databag)],
        secrets: { [TRACK2_SECRET]: { revisions: [{ 'access-key': s3.accessKeyId }] } },
      });
      const { state } = await decide(start, changed);
      expect(unitStatus(state)).to.deep.equal({
        status: 'blocked',
        message: "s3-integrator's credentials secret has no secret-key; put the keys in a Juju secret, juju grant-secret it to s3-integrator and juju config s3-integrator credentials=<secret-uri>",
      });
    });
  });
  describe('the bucket each track of s3-integrator really gives (its decisions simulated from its source)', () => {
    const joined = { event: 's3-credentials-relation-joined', relation: S3_RELATION_ID };
    const keys = () => ({ endpoint: s3.endpoint, accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, 's3-uri-style': 'path' });

    it('track 1: the first bucket any consumer asked for wins, and a later s3-bucket change is not answered', async () => {
      const provider = new Track1Integrator(keys());
      provider.consumerAsked('s3-credentials:3', 'relation-3');
      let { state } = await decide(emptyState({ relations: [s3Relation({}, {})] }), joined);
      expect(state.relations[0]!.localAppData.bucket).to.equal(BUCKET);
      expect(provider.answer(state, S3_RELATION_ID)).to.include({ bucket: 'relation-3' });
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)?.message).to.match(/^backups to s3:\/\/relation-3\/kubeflow-upgrader(;|$)/);

      state.config = { 's3-bucket': 'team-backups' };
      ({ state } = await decide(state, { event: 'config-changed' }));
      expect(state.relations[0]!.localAppData.bucket).to.equal('team-backups');
      expect(provider.answer(state, S3_RELATION_ID)).to.equal(undefined);
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)?.message).to.match(/^backups to s3:\/\/relation-3\/kubeflow-upgrader; s3-bucket "team-backups" is not used: s3-integrator sends "relation-3" \(set bucket on s3-integrator\)/);
    });

    it('track 1: its bucket option wins over the bucket we ask for', async () => {
      const provider = new Track1Integrator({ ...keys(), bucket: BUCKET });
      let { state } = await decide(emptyState({ config: { 's3-bucket': 'team-backups' }, relations: [s3Relation({}, {})] }), joined);
      provider.answer(state, S3_RELATION_ID);
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)?.message).to.match(new RegExp(`^backups to s3://${BUCKET}/`));
    });

    it('track 2: writes only its lib-version on relation-created, which the unit reads as no answer yet', async () => {
      const provider = new Track2Integrator(keys());
      let state = emptyState({ relations: [s3Relation({}, {})] });
      expect(provider.relationCreated(state, S3_RELATION_ID)).to.deep.equal({ 'lib-version': '1.0' });
      ({ state } = await decide(state, { event: 's3-credentials-relation-created', relation: S3_RELATION_ID }));
      expect(state.relations[0]!.remoteAppData).to.deep.equal({ 'lib-version': '1.0' });
      expect(state.relations[0]!.localAppData).to.include({ bucket: BUCKET, 'lib-version': '1.0' });
      expect(unitStatus(state)?.message).to.equal(`waiting for s3-integrator: it needs credentials and a bucket it can find or create ("${BUCKET}" asked); set s3-bucket here or bucket on s3-integrator`);
      expect(await provider.answer(state, S3_RELATION_ID)).to.include({ bucket: BUCKET });
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)?.status).to.equal('active');
    });

    it('track 2: creates the bucket we ask for, and the unit turns active on it', async () => {
      const provider = new Track2Integrator(keys());
      let { state } = await decide(emptyState({ config: { 's3-bucket': 'kf-created-by-track2' }, relations: [s3Relation({}, {})] }), joined);
      provider.relationCreated(state, S3_RELATION_ID);
      expect(await provider.answer(state, S3_RELATION_ID)).to.include({ bucket: 'kf-created-by-track2' });
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)?.message).to.match(/^backups to s3:\/\/kf-created-by-track2\/kubeflow-upgrader(;|$)/);
    });

    it('track 2: a bucket it may not create gets no answer, and the unit waits naming what to set', async () => {
      const provider = new Track2Integrator(keys(), { mayCreateBuckets: false });
      let { state } = await decide(emptyState({ config: { 's3-bucket': 'kf-nobody-created' }, relations: [s3Relation({}, {})] }), joined);
      expect(await provider.answer(state, S3_RELATION_ID)).to.equal(undefined);
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)).to.deep.equal({
        status: 'waiting',
        message: 'waiting for s3-integrator: it needs credentials and a bucket it can find or create ("kf-nobody-created" asked); set s3-bucket here or bucket on s3-integrator',
      });
    });

    it('a storage-class no restore can read (GLACIER) blocks the unit with one sentence naming it, on either track', async () => {
      for (const provider of [new Track1Integrator({ ...keys(), bucket: BUCKET, 'storage-class': 'GLACIER' }), new Track2Integrator({ ...keys(), bucket: BUCKET, 'storage-class': 'DEEP_ARCHIVE' })]) {
        let { state } = await decide(emptyState({ relations: [s3Relation({}, {})] }), joined);
        await provider.answer(state, S3_RELATION_ID);
        ({ state } = await decide(state, changed));
        const storageClass = provider.config['storage-class']!;
        expect(unitStatus(state)).to.deep.equal({
          status: 'blocked',
          message: `the storage class "${storageClass}" of s3-integrator keeps every object unreadable until it is thawed, so no restore could read the backups; unset storage-class on s3-integrator or set one that reads at once (STANDARD, STANDARD_IA, GLACIER_IR)`,
        });
        const backup = await decide({ ...state, actionParams: {} }, { event: 'actions/backup-state' });
        expect(backup.state.actionFailure).to.match(new RegExp(`^S3 cannot be used: the storage class "${storageClass}"`));
      }
    });

    it('a cold storage-class a restore still reads (STANDARD_IA) keeps the unit active and says what it costs', async () => {
      const provider = new Track1Integrator({ ...keys(), bucket: BUCKET, 'storage-class': 'STANDARD_IA' });
      let { state } = await decide(emptyState({ relations: [s3Relation({}, {})] }), joined);
      provider.answer(state, S3_RELATION_ID);
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)?.status).to.equal('active');
      expect(unitStatus(state)?.message).to.include('backup data is stored as STANDARD_IA: each read is billed per GB and objects pruned within 30 days are billed for 30');
    });

    it('track 2: a dotted name is refused by the provider, and the wait says so', async () => {
      const provider = new Track2Integrator(keys());
      let { state } = await decide(emptyState({ config: { 's3-bucket': 'team.backups' }, relations: [s3Relation({}, {})] }), joined);
      expect(await provider.answer(state, S3_RELATION_ID)).to.equal(undefined);
      ({ state } = await decide(state, changed));
      expect(unitStatus(state)?.message).to.match(/^waiting for s3-integrator: its track 2 cannot create "team\.backups"/);
    });
  });
});
