// One backup at a time per location (src/backup/lease.ts), through the backup engine against the embedded API server:
// a live run record (a real writer's, renewed by the store) refuses a new backup; one whose holder is known gone does
// not; two backups started at once end with exactly one, and the other leaves no folder behind.
import { expect } from 'chai';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startWriter } from '../support/backup-store.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { runBackup, type BackupRequest } from '../../src/backup/engine.ts';
import { LeaseHeldError } from '../../src/backup/lease.ts';

const KEY = 'lease test key';

function request(overrides: Partial<BackupRequest> = {}): BackupRequest {
  return {
    kind: 'backup-state', includeVolumes: false, includeControlPlane: false, profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile',
    protectedCrdGroups: ['kubeflow.org'], toolVersion: 'test', modelNamespace: 'kubeflow', encryptionKey: KEY, lease: {}, ...overrides,
  };
}

describe('backup lease: one backup at a time per location', function () {
  this.timeout(60_000);
  let cluster: RunningCluster;
  let kube: KubeClient;
  before(async () => {
    cluster = await startCluster({ profiles: 1, seed: 7 });
    kube = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
  });
  after(() => cluster?.stop());

  it('a backup being written (its signed run record live) refuses the next one, which writes nothing', async () => {
    const store = new MemoryBackupStore();
    const holder = await startWriter(store, { toolVersion: 'test', encryptionKey: KEY, scope: { action: 'backup-state', includeVolumes: false, includeControlPlane: false } });
    try {
      const before = (await store.listBackupFolders()).map((f) => f.id);
      const error = await runBackup(kube, store, request()).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(LeaseHeldError);
      expect((error as Error).message).to.match(new RegExp(`^Backup ${holder.id} is being written \\(started \\S+; its run record holds until \\S+\\), and one backup at a time is written to a bucket location, so this one was not started; `));
      expect((await store.listBackupFolders()).map((f) => f.id)).to.deep.equal(before);
      // a holder known to be gone (the service's own killed process) holds nothing
      const outcome = await runBackup(kube, store, request({ lease: { abandoned: new Set([holder.id]) } }));
      expect(outcome.backupId).to.not.equal(holder.id);
    } finally {
      await holder.abort();
    }
  });

  it("a live record of a holder known to be over (this unit's killed action) holds nothing; another holder's does", async () => {
    const store = new MemoryBackupStore();
    const killed = await store.beginBackup('kf-20261207-120000-aaaaaa', { encryptionKey: KEY, holder: 'kubeflow-upgrader/0 action' });
    const service = new MemoryBackupStore();
    const scheduled = await service.beginBackup('kf-20261207-120000-bbbbbb', { encryptionKey: KEY, holder: 'kubeflow-upgrader/0 service' });
    try {
      const lease = { holder: 'kubeflow-upgrader/0 action', goneHolder: 'kubeflow-upgrader/0 action' };
      const rerun = await runBackup(kube, store, request({ lease }));
      expect(rerun.backupId).to.not.equal(killed.id);
      const error = await runBackup(kube, service, request({ lease })).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(LeaseHeldError);
      expect((error as Error).message).to.match(/^Backup kf-20261207-120000-bbbbbb is being written/);
    } finally {
      await Promise.all([killed.abort(), scheduled.abort()]);
    }
  });

  it('a run record written without the key proves nothing when a key is set: it holds no lease', async () => {
    const store = new MemoryBackupStore();
    const forged = await startWriter(store, { toolVersion: 'test', scope: { action: 'backup-state', includeVolumes: false, includeControlPlane: false } });
    try {
      const outcome = await runBackup(kube, store, request());
      expect(outcome.backupId).to.match(/^kf-/);
    } finally {
      await forged.abort();
    }
  });

  it('two backups started at once: one is written, the other steps back and leaves no folder', async () => {
    const store = new MemoryBackupStore();
    const results = await Promise.allSettled([runBackup(kube, store, request()), runBackup(kube, store, request())]);
    const done = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(done, JSON.stringify(refused.map((r) => String(r.reason)))).to.have.length(1);
    expect(refused).to.have.length(1);
    expect(refused[0]!.reason).to.be.instanceOf(LeaseHeldError);
    const folders = await store.listBackupFolders();
    expect(folders.map((f) => f.id)).to.deep.equal([(done[0] as PromiseFulfilledResult<{ backupId: string }>).value.backupId]);
  });
});
