// Volume data through a crash: backup-state through the real ./dispatch copies every PVC of the source (files written
// into the simulated kubelet's volumes); restore-state into a fresh cluster is SIGKILLed — its whole process group —
// while its movers are filling the PVCs (the moment found from outside: a GET of a volume file held by the S3 proxy),
// and its mover Jobs are deleted, as a lost node would leave them. The rerun fills every PVC that still carries the
// fill mark, and every file of every PVC equals the source's by sha256. A PVC that exists without the mark (filled,
// then changed by its user) is never written again.
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { hashTree, startKubeletCluster, writeWorkspace, type KubeletCluster } from '../volumes/helpers.ts';
import { LABEL_FILL } from '../../src/volumes/fill-mark.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { startDispatch } from './killable-dispatch.ts';

const BUCKET = 'volume-crash';
const SEED = 21;
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const JOBS = { group: 'batch', resource: 'jobs' };
const SECRETS = { group: '', resource: 'secrets' };
const MOVERS = 'app.kubernetes.io/managed-by=kubeflow-upgrader,app.kubernetes.io/component=volume-mover';

const phase = (pvc: KubeObject) => (pvc.status as { phase?: string } | undefined)?.phase;

describe('reliability: SIGKILL of restore-state during the volume fill, Jobs lost, then rerun: every file equal', function () {
  this.timeout(300_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let proxy: FaultProxy;
  let source: KubeletCluster;
  let target: KubeletCluster;
  let claims: KubeObject[];

  before(async () => {
    [charmDir, s3, source, target] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 2, seed: SEED }), startKubeletCluster({ profiles: 0, seed: SEED })]);
    proxy = await FaultProxy.start({ target: s3.endpoint });
    claims = source.cluster.api.list(PVCS).filter((p) => p.metadata.namespace !== 'kubeflow');
    expect(claims.length, 'the dataset has PVCs').to.be.greaterThan(1);
    for (const [i, claim] of claims.entries()) {
      // bound by the kubelet's provisioner when it started (no StorageClass: every claim binds at once)
      expect(phase(source.cluster.api.get(PVCS, claim.metadata.name!, claim.metadata.namespace)!)).to.equal('Bound');
      writeWorkspace(source.kubelet.volumePath(claim.metadata.namespace!, claim.metadata.name!), { files: 40 + i * 10, bigFileBytes: 2_000_000 });
    }
  });
  after(async () => {
    await proxy?.stop();
    await Promise.all([s3?.stop(), source?.stop(), target?.stop()]);
  });

  function state(params: Record<string, unknown>): FakeJujuState {
    const relation = s3Relation(track1Data({ endpoint: proxy.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, BUCKET));
    // the plain-file mover: the crash comes while it downloads the backup's volume files
    return emptyState({ relations: [relation], actionParams: params, config: { 'restore-wait-timeout': 60, 'volume-mover-engine': 'rclone' } });
  }
  const marked = () => target.cluster.api.list(PVCS).filter((p) => p.metadata.labels?.[LABEL_FILL] !== undefined).map((p) => `${p.metadata.namespace}/${p.metadata.name}`);

  it('fills every PVC on the rerun, sha256 per file equal to the source, and leaves no mark, Job or Secret', async () => {
    const backup = await runDispatch(charmDir, state({ 'include-control-plane': false }), { event: 'actions/backup-state', env: { KUBECONFIG: source.cluster.kubeconfigPath } });
    expect(backup.state.actionFailure, backup.stderr.slice(-2000)).to.equal(undefined);
    expect(backup.state.actionResults.volumes).to.equal(String(claims.length));
    const id = backup.state.actionResults['backup-id']!;

    // The first GET of a volume file by a restore mover is held: that mover is mid-copy when the kill lands.
    const fillStarted = proxy.when((r) => r.method === 'GET' && r.url.includes(`/${id}/volumes/`) && !r.url.includes('list-type'), { hold: true });
    const event = { event: 'actions/restore-state' as const, env: { KUBECONFIG: target.cluster.kubeconfigPath } };
    const running = startDispatch(charmDir, state({ 'backup-id': id }), event);
    try {
      const ended = await Promise.race([fillStarted.then(() => false), running.finished.then(() => true)]);
      expect(ended, `the restore ended before its fill began: ${running.state().actionFailure}`).to.equal(false);
      expect(marked().length, 'the PVCs the restore created carry the fill mark').to.equal(claims.length);
      await running.kill();
      expect(running.state().actionResults.created, 'a killed run reported a result').to.equal(undefined);
    } finally {
      running.cleanup();
    }
    // A lost node: the mover Jobs (and with them their copies) are gone; their PVCs are half filled at most.
    for (const job of target.cluster.api.list(JOBS, { labelSelector: MOVERS })) {
      target.cluster.api.delete(JOBS, job.metadata.name!, job.metadata.namespace, { propagationPolicy: 'Background' });
    }
    await target.kubelet.idle();
    expect(marked(), 'the marks outlive the crash').to.have.length(claims.length);

    const rerun = await runDispatch(charmDir, state({ 'backup-id': id }), event);
    expect(rerun.state.actionFailure, rerun.stderr.slice(-2000)).to.equal(undefined);
    expect(rerun.state.actionResults.volumes).to.equal(`${claims.length} PVC(s) filled`);
    for (const claim of claims) {
      const { namespace, name } = claim.metadata as { namespace: string; name: string };
      expect(hashTree(target.kubelet.volumePath(namespace, name)), `${namespace}/${name}`).to.deep.equal(hashTree(source.kubelet.volumePath(namespace, name)));
    }
    expect(marked(), 'every mark came off with its successful copy').to.deep.equal([]);
    expect(target.cluster.api.list(JOBS, { labelSelector: MOVERS }).map((j) => j.metadata.name)).to.deep.equal([]);
    expect(target.cluster.api.list(SECRETS, { labelSelector: MOVERS }).map((j) => j.metadata.name)).to.deep.equal([]);
    const lines = rerun.state.actionLogs;
    expect(new Set(lines).size, 'no action log line repeats').to.equal(lines.length);

    // The user changes a file; a later restore of the same backup finds the PVC without a mark and leaves it alone.
    const first = claims[0]!.metadata as { namespace: string; name: string };
    const changed = join(target.kubelet.volumePath(first.namespace, first.name), '.hidden');
    writeFileSync(changed, 'edited after the restore');
    const again = await runDispatch(charmDir, state({ 'backup-id': id }), event);
    expect(again.state.actionFailure, again.stderr.slice(-2000)).to.equal(undefined);
    expect(again.state.actionResults.volumes).to.equal('no PVC to fill: PVCs that already existed keep their data');
    expect(readFileSync(changed, 'utf8')).to.equal('edited after the restore');
  });
});
