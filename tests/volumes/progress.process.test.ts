// Progress of a running mover: read from rclone's stats in the Pod's log (pods/<name>/log), reported when it changed
// and at most once per interval, never the same numbers twice.
import { expect } from 'chai';
import { newBackupId } from '../../src/store/layout.ts';
import { backupVolumes, type VolumeProgress } from '../../src/volumes/mover.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { createBoundPvc, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';

describe('volumes: progress of a running mover', function () {
  let s3: S3ServerHandle;
  let vc: VolumeCluster;
  let proxy: FaultProxy;

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    vc = await startVolumeCluster();
    // every upload waits a little, so the copy runs long enough to be looked at several times
    proxy = await FaultProxy.start({ target: s3.endpoint, latencyMs: 400, only: (r) => r.method === 'PUT' });
    proxy.setRate(1, 1, ['latency']);
  });
  after(async function () {
    await proxy?.stop();
    await vc?.stop();
    await s3?.stop();
  });

  it('reports files and bytes so far from rclone\'s stats, each report different from the one before', async function () {
    const folder = await createBoundPvc(vc, 'alice', 'ws');
    writeWorkspace(folder, { files: 120, bigFileBytes: 0 });
    const seen: NonNullable<VolumeProgress['copying']>[] = [];
    const [result] = await backupVolumes(vc.kube, {
      backupId: newBackupId(), s3: { ...s3For(s3, 'kf-backups'), endpoint: proxy.endpoint }, pvcs: [{ namespace: 'alice', name: 'ws' }],
      progressIntervalMs: 1500,
      onProgress: (p) => { if (p.copying) seen.push(p.copying); },
    });
    expect(result!.files).to.be.greaterThan(120);
    expect(seen.length, 'at least one report while it copied').to.be.greaterThan(0);
    for (const c of seen) {
      expect(c).to.include({ namespace: 'alice', pvc: 'ws' });
      expect(c.files).to.be.at.most(result!.files);
      expect(c.bytes).to.be.at.most(result!.bytes);
    }
    const keys = seen.map((c) => `${c.files}/${c.bytes}`);
    expect(new Set(keys).size, keys.join(' ')).to.equal(keys.length);
  });
});
