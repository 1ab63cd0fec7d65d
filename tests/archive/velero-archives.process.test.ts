// Archives as Velero writes them (tests/support/velero/archive.ts) read by our reader, verify, list and `latest`.
import { expect } from 'chai';
import { BackupPhaseError } from '../../src/archive/index.ts';
import { latestWholeBackup, listBackups, readItems, verifyBackup } from '../../src/catalog/index.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { putVeleroBackup, tarEntries } from '../support/velero/archive.ts';
import { startStore, veleroProfileNamespace } from './fixtures.ts';
import { backupStore } from '../support/backup-store.ts';

describe('archive: archives written as Velero writes them', () => {
  let server: S3ServerHandle;
  let store: ObjectStore;
  let base: ObjectStore;
  before(async () => ({ server, store: base } = await startStore('velero-archives')));
  // each test its own location, so one test's backups never show up in another's listing
  beforeEach(function () {
    store = new ObjectStore({ client: base.client, bucket: base.bucket, prefix: `t-${this.currentTest!.title.slice(0, 24).replace(/[^a-z]/gi, '-')}` });
  });
  after(async () => server.stop());

  it('reads every item of an EnableAPIGroupVersions archive with ":" names, directory entries and the optional files', async () => {
    const items = veleroProfileNamespace('alice');
    await putVeleroBackup(store, {
      name: 'nightly-20260101', items, enableApiGroupVersions: true, directoryEntries: true,
      volumeSnapshots: [{ spec: { backupName: 'nightly-20260101', persistentVolumeName: 'pvc-1' }, status: { phase: 'Completed' } }],
      itemOperations: [], podVolumeBackups: [{ apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', metadata: { name: 'nightly-20260101-x' } }],
    });
    const names = tarEntries({ name: 'n', items, enableApiGroupVersions: true, directoryEntries: true }).map((e) => e.name);
    expect(names).to.include.members([
      'resources/', 'resources/notebooks.kubeflow.org/', 'resources/notebooks.kubeflow.org/v1beta1/namespaces/alice/analysis.json',
      'resources/rolebindings.rbac.authorization.k8s.io/namespaces/alice/system:image-pullers.json', 'resources/namespaces/cluster/alice.json',
    ]);

    const unversioned: string[] = [];
    for await (const item of readItems(backupStore(store), 'nightly-20260101', { expected: null })) unversioned.push(`${item.object.apiVersion} ${item.path}`);
    expect(unversioned).to.deep.equal([
      'kubeflow.org/v1 resources/profiles.kubeflow.org/cluster/alice.json',
      'v1 resources/namespaces/cluster/alice.json',
      'kubeflow.org/v1 resources/notebooks.kubeflow.org/namespaces/alice/analysis.json',
      'rbac.authorization.k8s.io/v1 resources/roles.rbac.authorization.k8s.io/namespaces/alice/system:image-puller.json',
      'rbac.authorization.k8s.io/v1 resources/rolebindings.rbac.authorization.k8s.io/namespaces/alice/system:image-pullers.json',
      'v1 resources/configmaps/namespaces/alice/settings.json',
    ]);
    const copies = { unversioned: 0, preferred: 0, other: [] as string[] };
    for await (const item of readItems(backupStore(store), 'nightly-20260101', { expected: null, copies: 'all' })) {
      if (item.preferredVersion) copies.preferred++;
      else if (item.otherVersion) copies.other.push(`${item.resource} ${item.otherVersion}`);
      else copies.unversioned++;
    }
    expect(copies).to.deep.equal({ unversioned: 6, preferred: 6, other: ['profiles v1beta1', 'notebooks v1beta1', 'notebooks v1alpha1'] });

    const report = await verifyBackup(backupStore(store), 'nightly-20260101');
    expect(report.status).to.equal('not-verifiable');
    expect(report.objectsChecked).to.equal(6);
    expect(report.problems.map((p) => p.kind)).to.deep.equal(['missing-manifest']);
  });

  it('lists each backup with its phase; latest takes the newest Completed one, or a PartiallyFailed one with a warning', async () => {
    const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes));
    const items = veleroProfileNamespace('alice');
    await putVeleroBackup(store, { name: 'a-completed', items, started: at(0) });
    await putVeleroBackup(store, { name: 'b-failed', items, started: at(10), phase: 'Failed' });
    await putVeleroBackup(store, { name: 'c-waiting', items, started: at(20), phase: 'WaitingForPluginOperations' });
    await putVeleroBackup(store, { name: 'd-finalizing', items, started: at(30), phase: 'Finalizing' });
    await putVeleroBackup(store, { name: 'e-inprogress', items, started: at(40), phase: 'InProgress' });
    const listed = await listBackups(backupStore(store));
    expect(listed.map((b) => `${b.id} ${b.phase}`)).to.deep.equal([
      'e-inprogress InProgress', 'd-finalizing Finalizing', 'c-waiting WaitingForPluginOperations', 'b-failed Failed', 'a-completed Completed',
    ]);
    const latest = await latestWholeBackup(backupStore(store));
    expect(latest?.listing.id).to.equal('a-completed');
    expect(latest?.warning).to.equal(undefined);

    await putVeleroBackup(store, { name: 'f-partial', items, started: at(50), phase: 'PartiallyFailed' });
    const partial = await latestWholeBackup(backupStore(store));
    expect(partial?.listing.id).to.equal('f-partial');
    expect(partial?.warning).to.match(/^Backup f-partial is PartiallyFailed: /);
  });

  it('verify of an unfinished or failed backup fails in one sentence naming the phase, before reading it', async () => {
    for (const phase of ['InProgress', 'Finalizing', 'Failed']) {
      await putVeleroBackup(store, { name: `x-${phase.toLowerCase()}`, items: veleroProfileNamespace('alice'), phase });
      let error: unknown;
      try {
        await verifyBackup(backupStore(store), `x-${phase.toLowerCase()}`);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(BackupPhaseError);
      expect((error as Error).message).to.equal(`its velero-backup.json says phase ${phase}, and only a Completed or PartiallyFailed backup is whole`);
    }
  });
});
