// Restores of archives as Velero writes them (tests/support/velero/archive.ts), of backups whose marker says they
// are unfinished or failed, and a round trip of RBAC names with ':' through our own backup.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { putVeleroBackup } from '../support/velero/archive.ts';
import { veleroProfileNamespace } from '../archive/fixtures.ts';
import { veleroKubeflowNamespace } from '../support/velero/namespace-backup.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore } from '../../src/restore/engine.ts';
import { RestoreInputError } from '../../src/restore/errors.ts';
import { collectUserState, compareStates, describeDifferences } from '../../src/restore/compare.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { backupStore } from '../support/backup-store.ts';
import type { BackupStore } from '../../src/store/backup-store.ts';

const SEED = 17;
const BUCKET = 'velero';

describe('restore of Velero archives and of unfinished backups', function () {
  this.timeout(120_000);
  let a: RunningCluster;
  let b: RunningCluster;
  let s3: S3ServerHandle;
  let kubeA: KubeClient;
  let kubeB: KubeClient;
  let client: S3Client;
  const storeAt = (prefix: string) => new ObjectStore({ client, bucket: BUCKET, prefix });

  before(async () => {
    [a, b, s3] = await Promise.all([startCluster({ profiles: 2, seed: SEED }), startCluster({ seed: SEED }), startS3Server({ buckets: [BUCKET] })]);
    kubeA = await KubeClient.load({ kubeconfig: a.kubeconfigPath, concurrency: 8 });
    kubeB = await KubeClient.load({ kubeconfig: b.kubeconfigPath, concurrency: 8 });
    client = new S3Client({
      endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  });
  after(async () => {
    kubeA?.close();
    kubeB?.close();
    await Promise.all([a?.stop(), b?.stop(), s3?.stop()]);
  });

  async function get(kube: KubeClient, group: string, plural: string, name: string, namespace?: string): Promise<KubeObject> {
    const resource = await kube.findByResource(group, plural);
    if (!resource) throw new Error(`${plural}.${group} not served`);
    return kube.get(resource, name, namespace);
  }

  it('a profile namespace holding a system:image-pullers RoleBinding is backed up and round-trips', async () => {
    const profiles = await kubeA.findByResource('kubeflow.org', 'profiles');
    const namespace = (await kubeA.listAll(profiles!)).items[0]!.metadata.name!;
    const bindings = (await kubeA.findByResource('rbac.authorization.k8s.io', 'rolebindings'))!;
    // OpenShift's image-puller binding, by name; bound to Kubeflow's view role so the allow-list of today takes it
    await kubeA.create(bindings, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'system:image-pullers', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeflow-view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `system:serviceaccounts:${namespace}` }],
    });
    const store = storeAt('round-trip');
    const backup = await runBackup(kubeA, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    expect(backup.counts['rolebindings.rbac.authorization.k8s.io']).to.be.greaterThan(0);
    const outcome = await runRestore(kubeB, backupStore(store), { backupId: 'latest', waitTimeoutMs: 20_000 });
    expect(outcome.backupId).to.equal(backup.backupId);
    expect(outcome.totals).to.deep.include({ failed: 0 });
    const restored = await get(kubeB, 'rbac.authorization.k8s.io', 'rolebindings', 'system:image-pullers', namespace);
    expect(restored.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeflow-view' });
    expect(describeDifferences(compareStates(await collectUserState(kubeA), await collectUserState(kubeB)))).to.deep.equal([]);
  });

  it('restores a Velero archive with other version folders and ":" names, from the plain copies', async () => {
    const store = storeAt('velero-made');
    await putVeleroBackup(store, {
      name: 'velero-nightly', items: veleroProfileNamespace('velero-alice'), enableApiGroupVersions: true, directoryEntries: true,
      itemOperations: [], podVolumeBackups: [], volumeSnapshots: [],
    });
    const outcome = await runRestore(kubeB, backupStore(store), { backupId: 'velero-nightly', waitTimeoutMs: 20_000 });
    expect(outcome.warnings.join(' ')).to.include('no kubeflow-upgrader manifest');
    // the Profile, Notebook, Role, RoleBinding and ConfigMap; Velero's Namespace item is left to the profile controller
    expect(outcome.totals).to.deep.include({ created: 5, skipped: 1, failed: 0 });
    expect((await get(kubeB, 'rbac.authorization.k8s.io', 'rolebindings', 'system:image-pullers', 'velero-alice')).roleRef)
      .to.deep.include({ kind: 'Role', name: 'system:image-puller' });
    expect((await get(kubeB, 'rbac.authorization.k8s.io', 'roles', 'system:image-puller', 'velero-alice')).metadata.name).to.equal('system:image-puller');
    expect((await get(kubeB, 'kubeflow.org', 'notebooks', 'analysis', 'velero-alice')).apiVersion).to.equal('kubeflow.org/v1');
    expect((await get(kubeB, '', 'configmaps', 'settings', 'velero-alice')).data).to.deep.equal({ a: 'b' });
  });

  it('restores a Velero backup of a profile namespace by default: its CRDs, PV, Pods and owned objects are skipped, each named with its reason', async () => {
    const store = storeAt('velero-namespace');
    const fixture = veleroKubeflowNamespace('velero-dora');
    await putVeleroBackup(store, { name: 'velero-dora-daily', items: fixture.items });
    const outcome = await runRestore(kubeB, backupStore(store), { backupId: 'velero-dora-daily', waitTimeoutMs: 20_000 });

    const skips = outcome.plan.filter((entry) => entry.skip > 0);
    expect(outcome.totals).to.deep.include({ created: fixture.userState.length, skipped: fixture.leftToTheTarget.length, failed: 0 });
    const reasons = skips.flatMap((entry) => entry.reasons);
    expect(reasons).to.include.members([
      'installed by the charms: CustomResourceDefinition/profiles.kubeflow.org comes with the charm that serves it, and a restore never writes a CRD',
      'installed by the charms: CustomResourceDefinition/notebooks.kubeflow.org comes with the charm that serves it, and a restore never writes a CRD',
      'made by the cluster: PersistentVolume/pvc-4f1c2d3e is provisioned anew for the restored PVC that claims it',
    ]);
    expect(reasons).to.include.members(['Pod/velero-dora/lab-0: generated: controller ownerReference to StatefulSet/lab', 'StatefulSet/velero-dora/lab: generated: controller ownerReference to Notebook/lab', 'Service/velero-dora/lab: generated: controller ownerReference to Notebook/lab']);
    expect(skips.map((e) => e.kind)).to.include('Namespace');
    const pvc = await get(kubeB, '', 'persistentvolumeclaims', 'lab-workspace', 'velero-dora');
    expect((pvc.spec as { volumeName?: string }).volumeName).to.equal(undefined);
    expect((await get(kubeB, 'kubeflow.org', 'notebooks', 'lab', 'velero-dora')).metadata.ownerReferences).to.equal(undefined);
    expect((await get(kubeB, '', 'configmaps', 'settings', 'velero-dora')).data).to.deep.equal({ epochs: '3' });
    // Argo Workflows stay out: restored, the finished one would run again unless it kept both its completed label and
    // its status (argo-workflows controller.go tweakWorkflowlist, operator.go operate); the running one's pods are gone
    expect(reasons.filter((r) => r.startsWith('Workflow/velero-dora/run-'))).to.have.length(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(b.api.list({ group: 'argoproj.io', resource: 'workflows' }, { namespace: 'velero-dora' })).to.deep.equal([]);
    expect(b.api.list({ group: '', resource: 'pods' }, { namespace: 'velero-dora', labelSelector: 'workflows.argoproj.io/workflow' })).to.deep.equal([]);
    // what a restore that wrote the finished Workflow as Velero restores it (status dropped, label kept or not) meets
    const archivedRun = fixture.items.find((i) => i.object.metadata.name === 'run-finished')!.object;
    const { status: _status, ...withoutStatus } = archivedRun;
    const unlabelled = { ...withoutStatus, metadata: { name: 'run-finished-copy', namespace: 'velero-dora', labels: {} } };
    b.api.create({ group: 'argoproj.io', resource: 'workflows' }, unlabelled);
    for (const deadline = Date.now() + 5000; b.api.list({ group: '', resource: 'pods' }, { namespace: 'velero-dora', labelSelector: 'workflows.argoproj.io/workflow=run-finished-copy' }).length === 0;) {
      if (Date.now() > deadline) throw new Error('the simulated workflow controller never ran the copy');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((b.api.get({ group: 'argoproj.io', resource: 'workflows' }, 'run-finished-copy', 'velero-dora')!.status as { phase: string }).phase).to.equal('Running');
  });

  it('refuses a backup whose marker says InProgress, Finalizing or Failed, naming the phase, and writes nothing', async () => {
    const store = storeAt('unfinished');
    for (const phase of ['InProgress', 'Finalizing', 'Failed']) {
      const name = `velero-${phase.toLowerCase()}`;
      await putVeleroBackup(store, { name, items: veleroProfileNamespace('velero-bob'), phase });
      const before = kubeB.requestCounts().writes;
      let error: unknown;
      try {
        await runRestore(kubeB, backupStore(store), { backupId: name, waitTimeoutMs: 20_000 });
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(RestoreInputError);
      expect((error as Error).message).to.equal(`Backup ${name} cannot be restored: its velero-backup.json says phase ${phase}, and only a Completed or PartiallyFailed backup is whole.`);
      expect(kubeB.requestCounts().writes).to.equal(before);
    }
  });

  it('a restore of latest reads only the chosen backup\'s manifest, once (the choice is made from the markers)', async () => {
    const store = storeAt('latest-once');
    const request = {
      kind: 'backup-state' as const, includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    };
    // started in two different seconds: the markers alone order them
    await runBackup(kubeA, backupStore(store), { ...request, now: () => new Date('2026-01-01T10:00:00.900Z') });
    const newest = await runBackup(kubeA, backupStore(store), { ...request, now: () => new Date('2026-01-01T10:00:01.100Z') });
    const { counting, reads } = countingManifestReads(backupStore(store));
    const outcome = await runRestore(kubeB, counting, { backupId: 'latest', dryRun: true, waitTimeoutMs: 20_000 });
    expect(outcome.backupId).to.equal(newest.backupId);
    expect(reads).to.deep.equal([newest.backupId]);
  });

  it('latest tells apart two backups started in the same second (the markers have whole seconds) by their manifests', async () => {
    const store = storeAt('latest-same-second');
    const request = {
      kind: 'backup-state' as const, includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    };
    const first = await runBackup(kubeA, backupStore(store), { ...request, now: () => new Date('2026-01-01T10:00:00.100Z') });
    const second = await runBackup(kubeA, backupStore(store), { ...request, now: () => new Date('2026-01-01T10:00:00.700Z') });
    const { counting, reads } = countingManifestReads(backupStore(store));
    const outcome = await runRestore(kubeB, counting, { backupId: 'latest', dryRun: true, waitTimeoutMs: 20_000 });
    expect(outcome.backupId).to.equal(second.backupId);
    // the two tied ones to order them, then the chosen one in the preflight, with the key
    expect([...reads].sort()).to.deep.equal([first.backupId, second.backupId, second.backupId].sort());
  });

  function countingManifestReads(real: BackupStore): { counting: BackupStore; reads: string[] } {
    const reads: string[] = [];
    const counting = new Proxy(real, {
      get(target, property, receiver) {
        if (property === 'readManifest') {
          return (id: string, ...rest: unknown[]) => {
            reads.push(id);
            return (target.readManifest as (...args: unknown[]) => unknown).call(target, id, ...rest);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    return { counting, reads };
  }

  it('latest passes over newer unfinished and failed backups, and warns when it takes a PartiallyFailed one', async () => {
    const store = storeAt('latest');
    const at = (hour: number) => new Date(Date.UTC(2026, 0, 1, hour));
    await putVeleroBackup(store, { name: 'older-completed', items: veleroProfileNamespace('velero-carol'), started: at(1) });
    await putVeleroBackup(store, { name: 'newer-failed', items: veleroProfileNamespace('velero-carol'), started: at(2), phase: 'Failed' });
    await putVeleroBackup(store, { name: 'newest-inprogress', items: veleroProfileNamespace('velero-carol'), started: at(3), phase: 'InProgress' });
    const outcome = await runRestore(kubeB, backupStore(store), { backupId: 'latest', dryRun: true, waitTimeoutMs: 20_000 });
    expect(outcome.backupId).to.equal('older-completed');
    expect(outcome.warnings.join(' ')).not.to.include('PartiallyFailed');

    await putVeleroBackup(store, { name: 'newest-partial', items: veleroProfileNamespace('velero-carol'), started: at(4), phase: 'PartiallyFailed' });
    const partial = await runRestore(kubeB, backupStore(store), { backupId: 'latest', dryRun: true, waitTimeoutMs: 20_000 });
    expect(partial.backupId).to.equal('newest-partial');
    expect(partial.warnings).to.include('Backup newest-partial is PartiallyFailed: errors were logged while it was made (see newest-partial-results.gz), so some objects may be missing from it.');
  });
});
