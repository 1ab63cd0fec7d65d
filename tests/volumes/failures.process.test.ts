// How mover runs fail, and what they leave behind: an error naming the PVC and the reason, never a secret, never a
// credentials Secret; and the limits they keep: concurrency, node placement of ReadWriteOnce volumes.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../src/kube/types.ts';
import { newBackupId } from '../../src/store/layout.ts';
import { JOBS, SECRETS, type VolumeKube } from '../../src/volumes/kube-port.ts';
import { moverLabels, moverSelector } from '../../src/volumes/labels.ts';
import { backupVolumes, cleanupVolumeMovers, restoreVolumes, VolumeMoveError } from '../../src/volumes/mover.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, pvc, PVC_REF, s3For, startVolumeCluster, volumeFailure, type VolumeCluster } from './helpers.ts';


describe('volumes: failures, cleanup and limits', function () {
  let s3: S3ServerHandle;
  let vc: VolumeCluster;
  const jobEvents: { type: string; job: KubeObject }[] = [];
  const podNodes = new Map<string, string>();

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    vc = await startVolumeCluster({ bindingMode: 'Immediate' });
    vc.cluster.api.subscribe((e) => {
      if (e.ref.resource === 'jobs') jobEvents.push({ type: e.type, job: e.object });
      const jobName = e.object.metadata.labels?.['job-name'];
      const node = (e.object.spec as { nodeName?: string } | undefined)?.nodeName;
      if (e.ref.resource === 'pods' && jobName && node) podNodes.set(jobName, node);
    });
    for (const name of ['ws', 'a', 'b', 'c', 'd', 'e']) {
      const folder = await createBoundPvc(vc, 'alice', name);
      for (let i = 0; i < 5; i++) writeFileSync(join(folder, `f${i}.txt`), `${name} ${i}\n`);
    }
  });
  after(async function () {
    await vc?.stop();
    await s3?.stop();
  });

  const secretsLeft = async (backupId: string) => (await vc.kube.list(SECRETS, 'alice', moverSelector(backupId))).length;

  it('fails a backup with rejected credentials naming the PVC and the reason, and deletes the Secret', async function () {
    const backupId = newBackupId();
    const settings = { ...s3For(s3, 'kf-backups'), accessKey: 'NOT-A-KEY', secretKey: 'super-secret-value-123' };
    const error = await volumeFailure(backupVolumes(vc.kube, { backupId, s3: settings, pvcs: [{ namespace: 'alice', name: 'ws' }] }));
    expect(error.message).to.match(/^The volume backup failed for PVC alice\/ws \(mover Job kfu-backup-\S+ failed: InvalidAccessKeyId/);
    expect(error.message).not.to.include('super-secret-value-123');
    expect(error.failures).to.deep.equal([{ namespace: 'alice', pvc: 'ws', reason: error.failures[0]!.reason }]);
    expect(await secretsLeft(backupId)).to.equal(0);
    const failedJob = (await vc.kube.list(JOBS, 'alice', moverSelector(backupId)))[0];
    expect(JSON.stringify(failedJob?.status)).to.include('BackoffLimitExceeded');
  });

  it('fails a mover error (missing bucket) naming the PVC, and deletes the Secret', async function () {
    const backupId = newBackupId();
    const error = await volumeFailure(backupVolumes(vc.kube, { backupId, s3: s3For(s3, 'no-such-bucket'), pvcs: [{ namespace: 'alice', name: 'a' }] }));
    expect(error.message).to.include('alice/a').and.to.include('NoSuchBucket');
    expect(await secretsLeft(backupId)).to.equal(0);
  });

  it('deletes the Secret when the run itself throws while waiting', async function () {
    const backupId = newBackupId();
    const broken: VolumeKube = { ...vc.kube, waitFor: async () => { throw new Error('the API watch broke'); } };
    const error = await volumeFailure(backupVolumes(broken, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'b' }] }));
    expect(error.message).to.equal('The volume backup failed for PVC alice/b (the API watch broke).');
    expect(await secretsLeft(backupId)).to.equal(0);
    expect(await vc.kube.list(JOBS, 'alice', moverSelector(backupId)), 'the unobserved Job is stopped').to.have.length(0);
    await vc.kubelet.idle();
  });

  it('refuses a missing PVC by name and creates nothing for it', async function () {
    const backupId = newBackupId();
    const error = await volumeFailure(restoreVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'ghost' }] }));
    expect(error.message).to.equal('The volume restore failed for PVC alice/ghost (the PersistentVolumeClaim does not exist).');
    expect(await vc.kube.list(JOBS, 'alice', moverSelector(backupId))).to.have.length(0);
  });

  it('refuses bad input in one sentence before creating anything', async function () {
    const backupId = newBackupId();
    const twice = [{ namespace: 'alice', name: 'a' }, { namespace: 'alice', name: 'a' }];
    await backupVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: twice }).then(
      () => expect.fail('accepted a PVC listed twice'),
      (e: Error) => expect(e.message).to.equal('PVC alice/a is listed twice for the volume backup.'),
    );
    await backupVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [], concurrency: 0 }).then(
      () => expect.fail('accepted concurrency 0'),
      (e: Error) => expect(e.message).to.equal('volume-mover-concurrency must be a whole number of at least 1, not 0.'),
    );
    expect(await secretsLeft(backupId)).to.equal(0);
  });

  it('keeps at most volume-mover-concurrency Jobs running at once', async function () {
    const backupId = newBackupId();
    const from = jobEvents.length;
    const pvcs = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ namespace: 'alice', name }));
    const results = await backupVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs, concurrency: 2 });
    expect(results.map((r) => [r.pvc, r.files, r.checksumVerified])).to.have.deep.members(pvcs.map((p) => [p.name, 5, true]));
    // Replay this run's Job events: a Job is in flight from its creation until it finishes or is deleted.
    const active = new Set<string>();
    let most = 0;
    for (const { type, job } of jobEvents.slice(from)) {
      const done = type === 'DELETED' || JSON.stringify(job.status ?? {}).includes('"type":"Complete"');
      if (done) active.delete(job.metadata.name!);
      else if (type === 'ADDED') active.add(job.metadata.name!);
      most = Math.max(most, active.size);
    }
    expect(most).to.equal(2);
    expect(await secretsLeft(backupId)).to.equal(0);
  });

  it('copies a ReadWriteOnce volume on the node of the running Pod that mounts it', async function () {
    const api = vc.cluster.api;
    const POD = { group: '', resource: 'pods' };
    const notebook = api.create(POD, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'notebook-0', namespace: 'alice' },
      spec: { nodeName: 'node-b', containers: [{ name: 'notebook', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }], volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'ws' } }] },
    });
    api.updateStatus(POD, { ...notebook, status: { phase: 'Running' } });
    const [result] = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'ws' }] });
    expect(result?.node).to.equal('node-b');
    const job = jobEvents.filter((e) => e.type === 'ADDED').at(-1)!.job;
    expect(podNodes.get(job.metadata.name!)).to.equal('node-b');
    api.delete(POD, 'notebook-0', 'alice');
  });

  it('skips a claim that was never bound instead of provisioning an empty volume', async function () {
    vc.cluster.api.create({ group: 'storage.k8s.io', resource: 'storageclasses' }, {
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'late' }, provisioner: 'kubelet.simulated/hostpath', volumeBindingMode: 'WaitForFirstConsumer',
    });
    vc.cluster.api.create(PVC_REF, { ...pvc('alice', 'unused'), spec: { ...(pvc('alice', 'unused').spec as object), storageClassName: 'late' } });
    const [result] = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'unused' }] });
    expect(result?.skipped).to.equal('the PVC is Pending; it holds no data');
    expect(result?.files).to.equal(0);
    const still = vc.cluster.api.get(PVC_REF, 'unused', 'alice')!;
    expect((still.status as { phase?: string } | undefined)?.phase ?? 'Pending').to.equal('Pending');
  });

  it('backs up an empty PVC and restores it as empty', async function () {
    await createBoundPvc(vc, 'alice', 'empty');
    const backupId = newBackupId();
    const [saved] = await backupVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'empty' }] });
    expect(saved).to.deep.include({ files: 0, bytes: 0, checksumVerified: true });
    // Nothing was uploaded for it, so the restore reads an absent folder: that is an empty volume, not an error.
    const [restored] = await restoreVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'empty' }] });
    expect(restored).to.deep.include({ files: 0, bytes: 0, checksumVerified: true });
  });

  it('cleans up the Jobs and Secrets a crashed run of a backup id left behind', async function () {
    const backupId = newBackupId();
    vc.cluster.api.create({ group: '', resource: 'secrets' }, {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kfu-leftover', namespace: 'alice', labels: moverLabels(backupId, 'backup') }, data: {},
    });
    expect(await cleanupVolumeMovers(vc.kube, ['alice'], backupId)).to.equal(1);
    expect(await secretsLeft(backupId)).to.equal(0);
  });
});
