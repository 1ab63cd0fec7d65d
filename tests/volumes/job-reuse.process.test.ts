// A backup mover that reuses an earlier copy of its PVC (src/volumes/job.ts), against s3rver behind a proxy that slows
// every server-side copy as a real S3's round trip does: the copies of one folder run in parallel. rclone's --copy-dest
// would send them one at a time: it looks a file up in the earlier copy only from its march's SrcOnly callback, which
// handles one directory's files one after another (rclone/rclone fs/march/march.go processJob, fs/sync/sync.go
// SrcOnly), so a flat folder of many files took longer than uploading it. Parallelism is counted, never timed.
// (A real S3 answers each copy after its own round trip, which the proxy's latency stands for.)
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newBackupId } from '../../src/store/layout.ts';
import { REUSE_COPY_TRANSFERS } from '../../src/volumes/job.ts';
import { backupVolumes } from '../../src/volumes/mover.ts';
import { rcloneBehaviourEnv } from '../../src/volumes/rclone-env.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, s3For, startVolumeCluster, type VolumeCluster } from './helpers.ts';

const FILES = 40;

describe('volumes: a backup that reuses an earlier copy', function () {
  let s3: S3ServerHandle;
  let vc: VolumeCluster;
  let proxy: FaultProxy | undefined;

  before(async function () {
    [s3, vc] = await Promise.all([startS3Server({ buckets: ['kf-backups'] }), startVolumeCluster()]);
  });
  after(async function () {
    await proxy?.stop();
    await vc?.stop();
    await s3?.stop();
  });

  it('copies the files of one flat folder inside the bucket in parallel, and counts them as reused', async function () {
    const folder = await createBoundPvc(vc, 'alice', 'flat');
    let bytes = 0;
    for (let i = 0; i < FILES; i++) {
      const body = randomBytes(1000 + i);
      writeFileSync(join(folder, `sample-${String(i).padStart(2, '0')}.npy`), body);
      bytes += body.length;
    }
    const pvcs = [{ namespace: 'alice', name: 'flat' }];
    const first = newBackupId();
    await backupVolumes(vc.kube, { backupId: first, s3: s3For(s3, 'kf-backups'), pvcs });

    const second = newBackupId();
    // the copies into the second backup's folder (PUTs carrying x-amz-copy-source), each slowed by a round trip
    const copyInto = (r: { method: string; url: string; copySource?: string }) =>
      r.method === 'PUT' && r.copySource !== undefined && r.url.includes(`/backups/${second}/volumes/alice/flat/`);
    proxy = await FaultProxy.start({ target: s3.endpoint, rate: 1, faults: ['latency'], latencyMs: 300, only: copyInto });
    const copies = proxy.track(copyInto);
    const [result] = await backupVolumes(vc.kube, {
      backupId: second, s3: { ...s3For(s3, 'kf-backups'), endpoint: proxy.endpoint }, pvcs,
      copyFrom: new Map([['alice/flat', first]]),
    });

    expect(copies.total, 'one server-side copy per file').to.equal(FILES);
    // side by side, not one after another, and more at once than uploads: a copy moves no bytes through the node
    const uploadsAtOnce = Number(rcloneBehaviourEnv().RCLONE_TRANSFERS);
    expect(copies.peak, 'copies of the same folder in flight at once').to.be.greaterThan(uploadsAtOnce).and.at.most(REUSE_COPY_TRANSFERS);
    expect(result).to.deep.include({ files: FILES, bytes, checksumVerified: true, reusedFrom: first, reused: { files: FILES, bytes } });
  });

  it('uploads every file when the earlier copy is gone by the time the mover runs, and counts nothing as reused', async function () {
    const folder = await createBoundPvc(vc, 'alice', 'orphan');
    writeFileSync(join(folder, 'a.txt'), 'first file');
    writeFileSync(join(folder, 'b.txt'), 'second file');
    const pruned = newBackupId(); // a backup whose copy of this PVC was deleted after it was chosen: nothing is there
    const [result] = await backupVolumes(vc.kube, {
      backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'orphan' }],
      copyFrom: new Map([['alice/orphan', pruned]]),
    });
    expect(result).to.deep.include({ files: 2, bytes: 21, checksumVerified: true, reusedFrom: pruned, reused: { files: 0, bytes: 0 } });
  });

  it('uploads what it could not copy when the S3 service refuses the copies, and counts nothing as reused', async function () {
    const folder = await createBoundPvc(vc, 'alice', 'refused');
    writeFileSync(join(folder, 'kept.bin'), randomBytes(3000));
    writeFileSync(join(folder, 'also-kept.bin'), randomBytes(2000));
    const pvcs = [{ namespace: 'alice', name: 'refused' }];
    const first = newBackupId();
    await backupVolumes(vc.kube, { backupId: first, s3: s3For(s3, 'kf-backups'), pvcs });

    const second = newBackupId();
    // every copy into the second backup's folder is refused (403), as S3 does for a copy from an object it has
    // archived; the sync then finds the files missing and uploads them
    const copyInto = (r: { method: string; url: string; copySource?: string }) =>
      r.method === 'PUT' && r.copySource !== undefined && r.url.includes(`/backups/${second}/volumes/alice/refused/`);
    await proxy?.stop();
    proxy = await FaultProxy.start({ target: s3.endpoint, rate: 1, faults: ['refused-403'], only: copyInto });
    const [result] = await backupVolumes(vc.kube, {
      backupId: second, s3: { ...s3For(s3, 'kf-backups'), endpoint: proxy.endpoint }, pvcs, copyFrom: new Map([['alice/refused', first]]),
    });
    expect(proxy.counts['refused-403'], 'the copies were tried and refused').to.be.greaterThan(0);
    expect(result).to.deep.include({ files: 2, bytes: 5000, checksumVerified: true, reusedFrom: first, reused: { files: 0, bytes: 0 } });
  });
});
