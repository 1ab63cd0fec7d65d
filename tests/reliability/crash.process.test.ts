// Crash consistency: the real dispatch is SIGKILLed at chosen points of a backup (while listing, while the tarball
// is being uploaded, just before the marker), each point found by what the process does outside (a LIST held by the
// API server's latency fault, a PUT held by the S3 fault proxy), never by a hook inside the product. Then: no
// committed partial backup, the next run completes, and prune-backups removes what the killed run left.
import { expect } from 'chai';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { pruneBackups } from '../../src/prune/engine.ts';
import { moverPortOf } from '../../src/prune/movers.ts';
import { moverLabels } from '../../src/volumes/labels.ts';
import { verifyBackup } from '../../src/catalog/index.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { startDispatch } from './killable-dispatch.ts';
import { bucketState, kubeAt, storeAt } from './support.ts';
import { backupStore } from '../support/backup-store.ts';

const BUCKET = 'crash';

describe('reliability: SIGKILL during a backup, then rerun and prune', function () {
  this.timeout(180_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let proxy: FaultProxy;
  let cluster: RunningCluster;
  let path = 0;

  before(async () => {
    [charmDir, s3, cluster] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 3, seed: 8 })]);
    proxy = await FaultProxy.start({ target: s3.endpoint });
  });
  afterEach(() => cluster.faults.clear());
  after(async () => {
    await proxy?.stop();
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

  function state(params: Record<string, unknown>, prefix: string, config: Record<string, unknown> = {}): FakeJujuState {
    const relation = s3Relation(track1Data({ endpoint: proxy.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, BUCKET, { path: prefix }));
    return emptyState({ relations: [relation], actionParams: params, config });
  }

  /** Starts backup-state, kills it when `moment` resolves, and returns what the bucket holds afterwards. */
  async function killBackupAt(prefix: string, moment: () => Promise<unknown>) {
    const running = startDispatch(charmDir, state({ 'include-volumes': false, 'include-control-plane': false }, prefix), { event: 'actions/backup-state', env: { KUBECONFIG: cluster.kubeconfigPath } });
    try {
      const ended = await Promise.race([moment().then(() => false), running.finished.then(() => true)]);
      expect(ended, 'the backup ended before the chosen moment').to.equal(false);
      await running.kill();
      expect(running.state().actionResults['backup-id'], 'a killed run reported a backup').to.equal(undefined);
    } finally {
      running.cleanup();
    }
    return bucketState(storeAt(s3.endpoint, BUCKET, prefix));
  }

  async function rerunCompletes(prefix: string): Promise<string> {
    const rerun = await runDispatch(charmDir, state({ 'include-volumes': false, 'include-control-plane': false }, prefix), { event: 'actions/backup-state', env: { KUBECONFIG: cluster.kubeconfigPath } });
    expect(rerun.state.actionFailure, rerun.stderr).to.equal(undefined);
    const id = rerun.state.actionResults['backup-id']!;
    const listed = await runDispatch(charmDir, state({}, prefix), { event: 'actions/list-backups', env: { KUBECONFIG: cluster.kubeconfigPath } });
    expect(listed.state.actionResults).to.include({ count: '1', 'backups.0.id': id });
    expect((await verifyBackup(backupStore(storeAt(s3.endpoint, BUCKET, prefix)), id)).status).to.equal('ok');
    return id;
  }

  it('killed while listing: nothing committed, the rerun completes', async () => {
    const prefix = `p${++path}`;
    // Every notebooks LIST waits far longer than the test: the kill lands while the engine is listing.
    cluster.faults.latencyMs = 60_000;
    cluster.faults.only({ method: 'GET', pathIncludes: '/notebooks' }).setRate('latency', 1);
    const before = cluster.faults.injected.latency;
    const after = await killBackupAt(prefix, async () => {
      while (cluster.faults.injected.latency === before) await new Promise((r) => setTimeout(r, 20));
    });
    cluster.faults.clear();
    expect(after.committed).to.deep.equal([]);
    await rerunCompletes(prefix);
  });

  for (const [point, file] of [['mid-upload of the tarball', '.tar.gz'], ['just before the marker', 'velero-backup.json']] as const) {
    it(`killed ${point}: no committed partial backup; the rerun completes; prune removes the leftover after the grace period`, async () => {
      const prefix = `p${++path}`;
      const after = await killBackupAt(prefix, () => proxy.when((r) => r.method === 'PUT' && r.url.includes(`/${prefix}/`) && r.url.split('?')[0]!.endsWith(file), { hold: true }));
      expect(after.committed).to.deep.equal([]);
      const id = await rerunCompletes(prefix);
      const store = storeAt(s3.endpoint, BUCKET, prefix);
      const leftover = (await bucketState(store)).incomplete;
      if (file === 'velero-backup.json') {
        // Everything but the marker was written: verify says it never completed.
        expect(leftover).to.have.length(1);
        expect((await verifyBackup(backupStore(store), leftover[0]!)).problems.map((p) => p.kind)).to.include('missing-marker');
      }
      // Within the grace period the leftover may be a running backup and stays; after it, prune removes it.
      const dry = await runDispatch(charmDir, state({ 'dry-run': true }, prefix, { 'backup-retention': 1 }), { event: 'actions/prune-backups', env: { KUBECONFIG: cluster.kubeconfigPath } });
      expect(dry.state.actionResults).to.include({ deleted: 'none', 'dry-run': 'true' });
      const later = await pruneBackups(backupStore(store), { retention: 1, dryRun: false, now: new Date(Date.now() + 2 * 3_600_000) });
      expect(later.deleted.map((d) => d.id)).to.deep.equal(leftover);
      expect(await bucketState(store)).to.deep.equal({ committed: [id], incomplete: [] });
    });
  }

  it('prune-backups keeps the newest N, deletes older ones marker first, and removes stale mover Jobs and Secrets', async () => {
    const prefix = `p${++path}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await rerunCompletesAllowingMany(prefix));
      await clockPastSecondOf(ids.at(-1)!);
    }
    const kube = await kubeAt(cluster.kubeconfigPath);
    try {
      const ns = 'kubeflow';
      const jobs = await kube.findByResource('batch', 'jobs');
      const secrets = await kube.findByResource('', 'secrets');
      const labels = moverLabels(ids[0]!, 'backup');
      await kube.create(secrets!, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kfu-left-secret', namespace: ns, labels }, stringData: { RCLONE_CONFIG: 'x' } });
      await kube.create(jobs!, {
        apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'kfu-left-job', namespace: ns, labels },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image: 'rclone' }] } } },
      });
      const store = storeAt(s3.endpoint, BUCKET, prefix);
      const dry = await runDispatch(charmDir, state({ 'dry-run': true }, prefix, { 'backup-retention': 2 }), { event: 'actions/prune-backups', env: { KUBECONFIG: cluster.kubeconfigPath } });
      expect(dry.state.actionFailure, dry.stderr).to.equal(undefined);
      expect(dry.state.actionResults).to.include({ deleted: ids[0], kept: `${ids[2]},${ids[1]}` });
      expect((await bucketState(store)).committed).to.have.length(3);
      const real = await runDispatch(charmDir, state({}, prefix, { 'backup-retention': 2 }), { event: 'actions/prune-backups', env: { KUBECONFIG: cluster.kubeconfigPath } });
      expect(real.state.actionFailure, real.stderr).to.equal(undefined);
      expect(real.state.actionResults).to.include({ deleted: ids[0], 'deleted-count': '1' });
      expect(await store.exists(backupKeys(ids[0]!).marker)).to.equal(false);
      expect((await bucketState(store)).committed.sort()).to.deep.equal([ids[1], ids[2]].sort());
      // The mover objects are seconds old here; an hour later they are leftovers.
      const cleaned = await pruneBackups(backupStore(store), { retention: 2, dryRun: false, movers: moverPortOf(kube), now: new Date(Date.now() + 2 * 3_600_000) });
      expect(cleaned.movers).to.deep.equal({ jobs: 1, secrets: 1 });
      expect(await kube.tryGet(jobs!, 'kfu-left-job', ns)).to.equal(undefined);
      expect(await kube.tryGet(secrets!, 'kfu-left-secret', ns)).to.equal(undefined);
    } finally {
      kube.close();
    }
  });

  async function rerunCompletesAllowingMany(prefix: string): Promise<string> {
    const run = await runDispatch(charmDir, state({ 'include-volumes': false, 'include-control-plane': false }, prefix), { event: 'actions/backup-state', env: { KUBECONFIG: cluster.kubeconfigPath } });
    expect(run.state.actionFailure, run.stderr).to.equal(undefined);
    return run.state.actionResults['backup-id']!;
  }
});
