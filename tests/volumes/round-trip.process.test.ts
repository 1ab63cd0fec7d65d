// PVC trees backed up by mover Jobs in one cluster and restored by mover Jobs into a fresh cluster, byte for byte.
import { expect } from 'chai';
import { newBackupId } from '../../src/store/layout.ts';
import { backupVolumes, restoreVolumes } from '../../src/volumes/mover.ts';
import { moverSelector } from '../../src/volumes/labels.ts';
import { SECRETS } from '../../src/volumes/kube-port.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, hashTree, pvc, PVC_REF, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';

describe('volumes: round trip through mover Jobs', function () {
  let s3: S3ServerHandle;
  let source: VolumeCluster;
  let target: VolumeCluster;
  const jobsSeen: KubeObject[] = [];

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    source = await startVolumeCluster({ bindingMode: 'Immediate' });
    target = await startVolumeCluster({ bindingMode: 'WaitForFirstConsumer' });
    source.cluster.api.subscribe((e) => { if (e.ref.resource === 'jobs' && e.type === 'ADDED') jobsSeen.push(e.object); });
  });
  after(async function () {
    await source?.stop();
    await target?.stop();
    await s3?.stop();
  });

  it('restores a few hundred files (empty, binary, nested, unicode, symlink, 50 MiB) byte-identical into a WaitForFirstConsumer PVC', async function () {
    const workspace = await createBoundPvc(source, 'alice', 'workspace');
    writeWorkspace(workspace, { files: 320, bigFileBytes: 50 * 1024 * 1024 });
    const small = await createBoundPvc(source, 'alice', 'datasets', ['ReadWriteMany']);
    writeWorkspace(small, { files: 30, bigFileBytes: 0 });
    const before = hashTree(workspace);
    const backupId = newBackupId();
    const settings = s3For(s3, 'kf-backups');
    const progress: string[] = [];

    const backedUp = await backupVolumes(source.kube, {
      backupId, s3: settings, concurrency: 2,
      pvcs: [{ namespace: 'alice', name: 'workspace' }, { namespace: 'alice', name: 'datasets' }],
      onProgress: (p) => progress.push(`${p.done}/${p.total}`),
    });

    const ws = backedUp.find((r) => r.pvc === 'workspace')!;
    expect(ws.files).to.equal(before.size);
    expect(ws.bytes).to.be.greaterThan(50 * 1024 * 1024);
    expect(ws.checksumVerified).to.equal(true);
    expect(ws.location).to.equal(`s3://kf-backups/kubeflow/backups/${backupId}/volumes/alice/workspace/`);
    expect(progress).to.have.members(['1/2', '2/2']);
    expect(hashTree(workspace), 'the read-only source is untouched').to.deep.equal(before);

    // Cluster B: the claims exist but are not bound until their first consumer, the restore Job, is scheduled.
    target.cluster.api.create(PVC_REF, pvc('alice', 'workspace'));
    target.cluster.api.create(PVC_REF, pvc('alice', 'datasets', ['ReadWriteMany']));
    await new Promise((r) => setTimeout(r, 100));
    const pending = target.cluster.api.get(PVC_REF, 'workspace', 'alice')!;
    expect((pending.status as { phase?: string } | undefined)?.phase ?? 'Pending').to.equal('Pending');

    const restored = await restoreVolumes(target.kube, {
      backupId, s3: settings, concurrency: 2,
      pvcs: [{ namespace: 'alice', name: 'workspace' }, { namespace: 'alice', name: 'datasets' }],
    });

    expect(restored.map((r) => [r.pvc, r.files, r.checksumVerified])).to.have.deep.members([
      ['workspace', before.size, true], ['datasets', hashTree(small).size, true],
    ]);
    expect(hashTree(target.kubelet.volumePath('alice', 'workspace'))).to.deep.equal(before);
    expect(hashTree(target.kubelet.volumePath('alice', 'datasets'))).to.deep.equal(hashTree(small));
    const bound = target.cluster.api.get(PVC_REF, 'workspace', 'alice')!;
    expect((bound.status as { phase: string }).phase).to.equal('Bound');
    expect(bound.metadata.annotations?.['volume.kubernetes.io/selected-node']).to.be.a('string');

    for (const vc of [source, target]) {
      expect(await vc.kube.list(SECRETS, 'alice', moverSelector(backupId)), 'credentials Secrets are deleted').to.have.length(0);
    }
    expect(jobsSeen.length).to.equal(2);
    for (const job of jobsSeen) {
      const spec = JSON.stringify(job);
      expect(spec).not.to.include(s3.secretAccessKey);
      expect(spec).to.include('"readOnly":true');
      expect(job.metadata.labels?.['kubeflow-upgrader/backup-id']).to.equal(backupId);
    }
  });
});
