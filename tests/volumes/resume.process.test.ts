// A restore's fill across a crash, at the engine: the mover Job a dead run left copying is adopted by the rerun (same
// deterministic name; no second Job is created, no second copy races it), its credentials Secret is replaced, and the
// fill mark comes off the PVC only once that copy succeeded. A PVC without the mark is not touched by the restore step.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { newBackupId } from '../../src/store/layout.ts';
import { JOBS, SECRETS, type VolumeKube } from '../../src/volumes/kube-port.ts';
import { moverSelector } from '../../src/volumes/labels.ts';
import { backupVolumes, restoreVolumes } from '../../src/volumes/mover.ts';
import { hasFillMark, withFillMark } from '../../src/volumes/fill-mark.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { createBoundPvc, hashTree, pvc, PVC_REF, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';

describe('volumes: a fill that resumes', function () {
  let s3: S3ServerHandle;
  let source: VolumeCluster;
  let target: VolumeCluster;

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    [source, target] = await Promise.all([startVolumeCluster(), startVolumeCluster()]);
  });
  after(async function () {
    await source?.stop();
    await target?.stop();
    await s3?.stop();
  });

  it('adopts the mover Job a killed run left copying, and unmarks the PVC only after it succeeded', async function () {
    const folder = await createBoundPvc(source, 'alice', 'ws');
    writeWorkspace(folder, { files: 40, bigFileBytes: 0 });
    const backupId = newBackupId();
    await backupVolumes(source.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'ws' }] });

    target.cluster.api.create(PVC_REF, withFillMark(pvc('alice', 'ws'), backupId));
    const jobsAdded: KubeObject[] = [];
    target.cluster.api.subscribe((e) => { if (e.ref.resource === 'jobs' && e.type === 'ADDED') jobsAdded.push(e.object); });
    // Every download of the first run's mover is slowed, so it is still copying when the run "dies": it stops waiting
    // and cleans nothing up.
    const download = (r: { method: string; url: string }) => r.method === 'GET' && r.url.includes('/volumes/alice/ws/') && !r.url.includes('list-type');
    const proxy = await FaultProxy.start({ target: s3.endpoint, latencyMs: 1500, only: download });
    proxy.setRate(1, 1, ['latency']);
    const held = proxy.when(download);
    const dying = new AbortController();
    const dead: VolumeKube = { ...target.kube, delete: async () => undefined };
    const settings = { ...s3For(s3, 'kf-backups'), endpoint: proxy.endpoint };
    const first = restoreVolumes(dead, { backupId, s3: settings, pvcs: [{ namespace: 'alice', name: 'ws' }], signal: dying.signal });
    await held;
    dying.abort();
    await first.then(() => expect.fail('the first run finished'), () => undefined);
    expect(await target.kube.list(JOBS, 'alice', moverSelector(backupId)), 'the dead run left its Job').to.have.length(1);
    expect(hasFillMark(target.cluster.api.get(PVC_REF, 'ws', 'alice')!)).to.equal(true);

    // The rerun finds that Job still running and waits for it.
    const rerun = restoreVolumes(target.kube, { backupId, s3: settings, pvcs: [{ namespace: 'alice', name: 'ws' }] });
    await new Promise((r) => setTimeout(r, 300));
    expect(hasFillMark(target.cluster.api.get(PVC_REF, 'ws', 'alice')!), 'marked while the adopted copy runs').to.equal(true);
    proxy.setRate(0);
    const [result] = await rerun;
    await proxy.stop();
    expect(result).to.deep.include({ checksumVerified: true });
    expect(jobsAdded.map((j) => j.metadata.name), 'one Job: adopted, not created twice').to.have.length(1);
    expect(hashTree(target.kubelet.volumePath('alice', 'ws'))).to.deep.equal(hashTree(folder));
    expect(hasFillMark(target.cluster.api.get(PVC_REF, 'ws', 'alice')!)).to.equal(false);
    expect(await target.kube.list(JOBS, 'alice', moverSelector(backupId))).to.deep.equal([]);
    expect(await target.kube.list(SECRETS, 'alice', moverSelector(backupId))).to.deep.equal([]);
  });
});
