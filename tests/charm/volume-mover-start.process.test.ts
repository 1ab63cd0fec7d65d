// Movers that cannot start, through the real ./dispatch: the action fails within volume-mover-start-timeout (plus the
// time to stop and clean up) with one sentence per PVC saying why — an image the nodes cannot pull, a ResourceQuota that
// refuses a Pod without limits — and leaves no mover Job or credentials Secret behind. With volume-mover-resources
// that fit the quota, the same backup passes. A restore that fails so leaves its PVC marked, and the rerun fills it.
import { expect } from 'chai';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { quotaSynced } from '../support/cluster/quota-controller.ts';
import { hashTree, startKubeletCluster, writeWorkspace, type KubeletCluster } from '../volumes/helpers.ts';
import { LABEL_FILL } from '../../src/volumes/fill-mark.ts';
import { rmSync } from 'node:fs';

const BUCKET = 'mover-start';
const JOBS = { group: 'batch', resource: 'jobs' };
const SECRETS = { group: '', resource: 'secrets' };
const QUOTAS = { group: '', resource: 'resourcequotas' };
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const MOVERS = 'app.kubernetes.io/managed-by=kubeflow-upgrader,app.kubernetes.io/component=volume-mover';
const UNREACHABLE = 'registry.example.invalid/rclone/rclone:1.68.2';

describe('volume movers that cannot start fail fast with the reason (real ./dispatch)', function () {
  this.timeout(180_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let side: KubeletCluster;
  let namespace: string;

  before(async () => {
    [charmDir, s3, side] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 41 })]);
    namespace = side.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!.metadata.namespace!;
    for (const p of side.cluster.api.list(PVCS, { namespace })) writeWorkspace(side.kubelet.volumePath(namespace, p.metadata.name!), { files: 12, bigFileBytes: 0 });
  });
  after(async () => {
    await Promise.all([s3?.stop(), side?.stop()]);
  });

  // the plain-file mover, whose image volume-mover-image names (the restic engine runs the rclone image of a plain-file
  // backup's restore at its pinned default)
  const RCLONE = { 'volume-mover-engine': 'rclone' };
  function backup(config: Record<string, unknown>): Promise<DispatchOutcome> {
    const state = emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: { 'include-control-plane': false }, config: { ...RCLONE, ...config } });
    return runDispatch(charmDir, state, { event: 'actions/backup-state', env: { KUBECONFIG: side.cluster.kubeconfigPath } });
  }
  function leftovers(): string[] {
    return [...side.cluster.api.list(JOBS, { labelSelector: MOVERS }), ...side.cluster.api.list(SECRETS, { labelSelector: MOVERS })].map((o) => `${o.kind}/${o.metadata.name}`);
  }
  function expectNoRepeatedLine(outcome: DispatchOutcome): void {
    expect(new Set(outcome.state.actionLogs).size, outcome.state.actionLogs.join('\n')).to.equal(outcome.state.actionLogs.length);
  }

  it('an image the nodes cannot pull fails the action within the start timeout, naming the image and the pull error', async () => {
    const timeout = 4;
    const started = Date.now();
    const outcome = await backup({ 'volume-mover-image': UNREACHABLE, 'volume-mover-start-timeout': timeout });
    // The contract is a bound on when the failure comes (not a speed): the start timeout plus at most 30 s.
    expect(Date.now() - started).to.be.lessThan((timeout + 30) * 1000);
    expect(outcome.exitCode).to.not.equal(0);
    const failure = outcome.state.actionFailure!;
    expect(failure, failure).to.include(`did not start within ${timeout} seconds: its image ${UNREACHABLE} could not be pulled (ErrImagePull`);
    expect(failure, failure).to.include("lookup registry.example.invalid: no such host");
    expect(failure).not.to.include('\n');
    expect(leftovers()).to.deep.equal([]);
    expectNoRepeatedLine(outcome);
  });

  it('a quota on limits.cpu refuses movers that set no limits, naming the quota; volume-mover-resources that fit pass', async () => {
    side.cluster.api.create(QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'team-compute', namespace }, spec: { hard: { 'limits.cpu': '100', 'limits.memory': '400Gi' } } });
    await quotaSynced(side.cluster.api, namespace, 'team-compute');
    try {
      const refused = await backup({ 'volume-mover-resources': '', 'volume-mover-start-timeout': 4 });
      expect(refused.exitCode).to.not.equal(0);
      expect(refused.state.actionFailure).to.include('ResourceQuota team-compute refuses its Pod: it must specify limits.cpu for: mover; limits.memory for: mover');
      expect(leftovers()).to.deep.equal([]);
      expectNoRepeatedLine(refused);

      const fitting = await backup({ 'volume-mover-start-timeout': 30 });
      expect(fitting.state.actionFailure, fitting.stderr.slice(-2000)).to.equal(undefined);
      expect(Number(fitting.state.actionResults.volumes)).to.be.greaterThan(0);
      expect(leftovers()).to.deep.equal([]);
    } finally {
      side.cluster.api.delete(QUOTAS, 'team-compute', namespace);
    }
  });

  it('a restore whose mover cannot start fails naming the PVC, the PVC keeps its fill mark, and the rerun fills it', async () => {
    const saved = await backup({});
    expect(saved.state.actionFailure, saved.stderr.slice(-2000)).to.equal(undefined);
    const id = saved.state.actionResults['backup-id']!;
    // The user lost a volume: its PVC is gone, and the restore makes it again.
    const lost = side.cluster.api.list(PVCS, { namespace })[0]!;
    const files = hashTree(side.kubelet.volumePath(namespace, lost.metadata.name!));
    side.cluster.api.delete(PVCS, lost.metadata.name!, namespace);
    rmSync(side.kubelet.volumePath(namespace, lost.metadata.name!), { recursive: true, force: true });
    const restore = (config: Record<string, unknown>) => runDispatch(charmDir, emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: { 'backup-id': id }, config: { ...RCLONE, ...config } }), {
      event: 'actions/restore-state', env: { KUBECONFIG: side.cluster.kubeconfigPath },
    });

    const failed = await restore({ 'volume-mover-image': UNREACHABLE, 'volume-mover-start-timeout': 5 });
    expect(failed.exitCode).to.not.equal(0);
    expect(failed.state.actionFailure, failed.state.actionFailure).to.match(new RegExp(`^The volume restore failed for PVC ${namespace}/${lost.metadata.name} \\(its mover Job kfu-restore-[0-9a-f]{16} did not start within 5 seconds: its image ${UNREACHABLE.replace(/[.]/g, '\\.')} could not be pulled \\(ErrImagePull: .+\\); fix that and rerun restore-state, which fills every PVC still waiting for its data\\.$`));
    expect(side.cluster.api.get(PVCS, lost.metadata.name!, namespace)!.metadata.labels?.[LABEL_FILL], 'still waiting for its data').to.equal('pending');
    expect(leftovers()).to.deep.equal([]);
    expectNoRepeatedLine(failed);

    const rerun = await restore({});
    expect(rerun.state.actionFailure, rerun.stderr.slice(-2000)).to.equal(undefined);
    expect(rerun.state.actionResults.volumes).to.equal('1 PVC(s) filled');
    expect(side.cluster.api.get(PVCS, lost.metadata.name!, namespace)!.metadata.labels?.[LABEL_FILL]).to.equal(undefined);
    expect(hashTree(side.kubelet.volumePath(namespace, lost.metadata.name!))).to.deep.equal(files);
  });
});
