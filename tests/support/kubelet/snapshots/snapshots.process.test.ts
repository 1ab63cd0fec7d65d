// The simulated CSI snapshots against what upstream does (common-controller.ts, hostpath-driver.ts name the files): a
// dynamic snapshot is a copy of the volume at its moment, bound both ways and readyToUse, with upstream's finalizers; a
// pre-provisioned content with a snapshotHandle binds to the VolumeSnapshot naming it; a claim from a snapshot starts
// as that copy; deletionPolicy Delete removes the driver's snapshot with the content, Retain keeps it. Without the
// option, nothing changes: a claim from a VolumeSnapshot stays Pending.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeObject } from '../../../../src/kube/types.ts';
import { startCluster, type RunningCluster } from '../../cluster/index.ts';
import { simulatedKubelet, storageClass, SIMULATED_PROVISIONER, volumeSnapshotClass, type SimulatedKubelet } from '../index.ts';
import { PVCS, PVS } from '../refs.ts';
import {
  ANN_BEING_DELETED, AS_SOURCE_FINALIZER, BOUND_FINALIZER, CONTENT_FINALIZER, VOLUME_SNAPSHOT_CLASSES, VOLUME_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS,
} from './refs.ts';
import { until } from './until.ts';

interface Sim { cluster: RunningCluster; kubelet: SimulatedKubelet; dataDir: string; stop(): Promise<void> }

async function startSim(snapshots: boolean): Promise<Sim> {
  const cluster = await startCluster({ kubeflowCrds: false, controllers: false, volumeSnapshots: snapshots });
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelet-snap-'));
  const kubelet = simulatedKubelet({ dataDir, snapshots });
  const stopKubelet = kubelet.start(cluster.api);
  cluster.api.create({ group: 'storage.k8s.io', resource: 'storageclasses' }, storageClass('standard', { isDefault: true }));
  for (const name of ['alice', 'bob']) cluster.api.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return {
    cluster, kubelet, dataDir,
    async stop() {
      stopKubelet();
      await kubelet.idle();
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const claim = (namespace: string, name: string, dataSource?: { apiGroup: string; kind: string; name: string }): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(dataSource ? { dataSource } : {}) },
});
const snapshotOf = (namespace: string, name: string, source: Record<string, string>, className?: string): KubeObject => ({
  apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name, namespace },
  spec: { source, ...(className ? { volumeSnapshotClassName: className } : {}) },
} as KubeObject);
const phase = (o: KubeObject | undefined) => (o?.status as { phase?: string } | undefined)?.phase;
const ready = (o: KubeObject | undefined) => (o?.status as { readyToUse?: boolean } | undefined)?.readyToUse === true;

describe('simulated CSI snapshots (external-snapshotter, csi-driver-host-path)', function () {
  this.timeout(30_000);
  let sim: Sim;
  before(async function () {
    sim = await startSim(true);
    sim.cluster.api.create(VOLUME_SNAPSHOT_CLASSES, volumeSnapshotClass('hostpath-snaps', SIMULATED_PROVISIONER, { isDefault: true }));
    sim.cluster.api.create(VOLUME_SNAPSHOT_CLASSES, volumeSnapshotClass('hostpath-retain', SIMULATED_PROVISIONER, { deletionPolicy: 'Retain' }));
  });
  after(async function () { await sim?.stop(); });

  it('takes a dynamic snapshot: the volume as it was, bound both ways, readyToUse, finalizers as upstream sets them', async function () {
    const { api } = sim.cluster;
    api.create(PVCS, claim('alice', 'data'));
    const bound = await until(api, PVCS, 'data', 'alice', (o) => phase(o) === 'Bound');
    const pv = api.get({ group: '', resource: 'persistentvolumes' }, (bound!.spec as { volumeName: string }).volumeName)!;
    expect((pv.spec as { csi?: unknown }).csi, 'a CSI volume, which the snapshot controller needs').to.deep.equal({ driver: SIMULATED_PROVISIONER, volumeHandle: 'alice/data' });
    const file = join(sim.kubelet.volumePath('alice', 'data'), 'log.txt');
    writeFileSync(file, 'before\n');
    api.create(VOLUME_SNAPSHOTS, snapshotOf('alice', 'snap-1', { persistentVolumeClaimName: 'data' }));
    const vs = await until(api, VOLUME_SNAPSHOTS, 'snap-1', 'alice', ready);
    writeFileSync(file, 'before\nafter\n');
    const status = vs!.status as { boundVolumeSnapshotContentName: string; creationTime: string; restoreSize: string };
    expect(status.boundVolumeSnapshotContentName).to.equal(`snapcontent-${vs!.metadata.uid}`);
    expect(Date.parse(status.creationTime)).to.be.a('number').and.not.NaN;
    expect((vs!.spec as { volumeSnapshotClassName?: string }).volumeSnapshotClassName, 'the default class was chosen').to.equal('hostpath-snaps');
    const content = await until(api, VOLUME_SNAPSHOT_CONTENTS, status.boundVolumeSnapshotContentName, undefined, (o) => (o?.metadata.finalizers ?? []).includes(CONTENT_FINALIZER));
    const spec = content!.spec as { deletionPolicy: string; driver: string; source: { volumeHandle: string }; volumeSnapshotRef: { uid: string } };
    expect([spec.deletionPolicy, spec.driver, spec.source.volumeHandle, spec.volumeSnapshotRef.uid]).to.deep.equal(['Delete', SIMULATED_PROVISIONER, 'alice/data', vs!.metadata.uid]);
    const handle = (content!.status as { snapshotHandle: string }).snapshotHandle;
    expect(readFileSync(join(sim.kubelet.snapshotFolder(handle)!, 'log.txt'), 'utf8'), 'the copy at the snapshot\'s moment').to.equal('before\n');
    const withFinalizers = await until(api, VOLUME_SNAPSHOTS, 'snap-1', 'alice', (o) => (o?.metadata.finalizers ?? []).includes(BOUND_FINALIZER));
    expect(withFinalizers!.metadata.finalizers).to.include(AS_SOURCE_FINALIZER);

    // a claim from the snapshot, in the snapshot's namespace, starts as that copy
    api.create(PVCS, claim('alice', 'restored', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap-1' }));
    await until(api, PVCS, 'restored', 'alice', (o) => phase(o) === 'Bound');
    expect(readFileSync(join(sim.kubelet.volumePath('alice', 'restored'), 'log.txt'), 'utf8')).to.equal('before\n');

    // Delete: deleting the snapshot deletes its content and the driver's snapshot, then the snapshot goes
    api.delete(VOLUME_SNAPSHOTS, 'snap-1', 'alice');
    await until(api, VOLUME_SNAPSHOTS, 'snap-1', 'alice', (o) => o === undefined);
    await until(api, VOLUME_SNAPSHOT_CONTENTS, status.boundVolumeSnapshotContentName, undefined, (o) => o === undefined);
    expect(sim.kubelet.snapshotHandles()).not.to.include(handle);
  });

  it('composes with the PV controller: a snapshot copies the folder of the claim\'s PV, wherever that volume was handed; a claim from it gets a PV whose folder holds the copy', async function () {
    const { api } = sim.cluster;
    const volumeOf = (namespace: string, name: string) => (api.get(PVCS, name, namespace)!.spec as { volumeName: string }).volumeName;
    // a volume provisioned for one claim, then handed to another (Retain, the claim gone, the claimRef reset: Velero's
    // ResetPVBinding, as src/volumes/rebind.ts does): its data follows it
    api.create(PVCS, claim('alice', 'first'));
    await until(api, PVCS, 'first', 'alice', (o) => phase(o) === 'Bound');
    const volume = volumeOf('alice', 'first');
    const folder = sim.kubelet.volumePath('alice', 'first');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'data.txt'), 'handed');
    api.mergePatch(PVS, volume, undefined, { spec: { persistentVolumeReclaimPolicy: 'Retain' } });
    api.delete(PVCS, 'first', 'alice');
    await until(api, PVS, volume, undefined, (o) => phase(o) === 'Released');
    api.mergePatch(PVS, volume, undefined, { spec: { claimRef: { namespace: 'alice', name: 'second', uid: null, resourceVersion: null } } });
    api.create(PVCS, { ...claim('alice', 'second'), spec: { ...(claim('alice', 'second').spec as object), volumeName: volume } });
    await until(api, PVCS, 'second', 'alice', (o) => phase(o) === 'Bound');
    expect(sim.kubelet.volumePath('alice', 'second'), 'the claim\'s data is its volume\'s folder').to.equal(folder);

    // the snapshot of the new claim copies that folder
    api.create(VOLUME_SNAPSHOTS, snapshotOf('alice', 'of-second', { persistentVolumeClaimName: 'second' }));
    const vs = await until(api, VOLUME_SNAPSHOTS, 'of-second', 'alice', ready);
    const content = api.get(VOLUME_SNAPSHOT_CONTENTS, (vs!.status as { boundVolumeSnapshotContentName: string }).boundVolumeSnapshotContentName)!;
    const handle = (content.status as { snapshotHandle: string }).snapshotHandle;
    expect(readFileSync(join(sim.kubelet.snapshotFolder(handle)!, 'data.txt'), 'utf8')).to.equal('handed');

    // a claim from the snapshot gets its own volume, whose folder (the one its PV names) holds the copy
    api.create(PVCS, claim('alice', 'from-second', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'of-second' }));
    await until(api, PVCS, 'from-second', 'alice', (o) => phase(o) === 'Bound');
    const pv = api.get(PVS, volumeOf('alice', 'from-second'))!;
    const handleOfPv = (pv.spec as { csi: { volumeHandle: string } }).csi.volumeHandle;
    expect(sim.kubelet.volumePath('alice', 'from-second')).to.equal(join(sim.dataDir, handleOfPv)).and.not.equal(folder);
    expect(readFileSync(join(sim.kubelet.volumePath('alice', 'from-second'), 'data.txt'), 'utf8')).to.equal('handed');
    writeFileSync(join(folder, 'data.txt'), 'changed');
    expect(readFileSync(join(sim.kubelet.volumePath('alice', 'from-second'), 'data.txt'), 'utf8'), 'a copy, not the same folder').to.equal('handed');

    for (const name of ['from-second', 'second']) api.delete(PVCS, name, 'alice');
    api.delete(VOLUME_SNAPSHOTS, 'of-second', 'alice');
    await until(api, VOLUME_SNAPSHOTS, 'of-second', 'alice', (o) => o === undefined);
  });

  it('binds a pre-provisioned content to the VolumeSnapshot naming it; Retain keeps the driver\'s snapshot after both are deleted', async function () {
    const { api } = sim.cluster;
    api.create(PVCS, claim('alice', 'src'));
    await until(api, PVCS, 'src', 'alice', (o) => phase(o) === 'Bound');
    mkdirSync(sim.kubelet.volumePath('alice', 'src'), { recursive: true });
    writeFileSync(join(sim.kubelet.volumePath('alice', 'src'), 'model.bin'), 'weights-v1');
    api.create(VOLUME_SNAPSHOTS, snapshotOf('alice', 'orig', { persistentVolumeClaimName: 'src' }, 'hostpath-retain'));
    const orig = await until(api, VOLUME_SNAPSHOTS, 'orig', 'alice', ready);
    const origContent = api.get(VOLUME_SNAPSHOT_CONTENTS, (orig!.status as { boundVolumeSnapshotContentName: string }).boundVolumeSnapshotContentName)!;
    const handle = (origContent.status as { snapshotHandle: string }).snapshotHandle;
    expect(orig!.metadata.finalizers, 'no bound finalizer for a Retain content').not.to.include(BOUND_FINALIZER);

    // a static content in another namespace's name, with the same handle, and the snapshot that names it
    api.create(VOLUME_SNAPSHOT_CONTENTS, {
      apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', metadata: { name: 'static-1' },
      spec: { deletionPolicy: 'Retain', driver: SIMULATED_PROVISIONER, source: { snapshotHandle: handle }, volumeSnapshotRef: { name: 'copy', namespace: 'bob' } },
    } as KubeObject);
    api.create(VOLUME_SNAPSHOTS, snapshotOf('bob', 'copy', { volumeSnapshotContentName: 'static-1' }));
    const copy = await until(api, VOLUME_SNAPSHOTS, 'copy', 'bob', ready);
    expect((copy!.status as { boundVolumeSnapshotContentName: string }).boundVolumeSnapshotContentName).to.equal('static-1');
    expect((api.get(VOLUME_SNAPSHOT_CONTENTS, 'static-1')!.spec as { volumeSnapshotRef: { uid: string } }).volumeSnapshotRef.uid).to.equal(copy!.metadata.uid);
    api.create(PVCS, claim('bob', 'from-copy', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'copy' }));
    await until(api, PVCS, 'from-copy', 'bob', (o) => phase(o) === 'Bound');
    expect(readFileSync(join(sim.kubelet.volumePath('bob', 'from-copy'), 'model.bin'), 'utf8')).to.equal('weights-v1');

    // Retain: the snapshots go, their contents stay (annotated being-deleted); the contents deleted, the handle stays
    api.delete(PVCS, 'from-copy', 'bob');
    api.delete(VOLUME_SNAPSHOTS, 'copy', 'bob');
    api.delete(VOLUME_SNAPSHOTS, 'orig', 'alice');
    await until(api, VOLUME_SNAPSHOTS, 'copy', 'bob', (o) => o === undefined);
    await until(api, VOLUME_SNAPSHOTS, 'orig', 'alice', (o) => o === undefined);
    const kept = await until(api, VOLUME_SNAPSHOT_CONTENTS, 'static-1', undefined, (o) => o?.metadata.annotations?.[ANN_BEING_DELETED] !== undefined);
    expect(kept, 'a Retain content outlives its snapshot').not.to.equal(undefined);
    api.delete(VOLUME_SNAPSHOT_CONTENTS, 'static-1');
    api.delete(VOLUME_SNAPSHOT_CONTENTS, origContent.metadata.name ?? '');
    await until(api, VOLUME_SNAPSHOT_CONTENTS, 'static-1', undefined, (o) => o === undefined);
    await until(api, VOLUME_SNAPSHOT_CONTENTS, origContent.metadata.name ?? '', undefined, (o) => o === undefined);
    expect(sim.kubelet.snapshotHandles(), 'Retain: the provider snapshot stays').to.include(handle);
  });

  it('reports a pre-provisioned content whose handle the driver does not hold, and provisions no claim from its snapshot', async function () {
    const { api } = sim.cluster;
    api.create(VOLUME_SNAPSHOT_CONTENTS, {
      apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', metadata: { name: 'unknown-handle' },
      spec: { deletionPolicy: 'Retain', driver: SIMULATED_PROVISIONER, source: { snapshotHandle: '00000000-0000-0000-0000-000000000000' }, volumeSnapshotRef: { name: 'ghost', namespace: 'bob' } },
    } as KubeObject);
    api.create(VOLUME_SNAPSHOTS, snapshotOf('bob', 'ghost', { volumeSnapshotContentName: 'unknown-handle' }));
    const failed = await until(api, VOLUME_SNAPSHOTS, 'ghost', 'bob', (o) => (o?.status as { error?: { message?: string } } | undefined)?.error?.message !== undefined);
    expect((failed!.status as { readyToUse: boolean; error: { message: string } })).to.deep.include({ readyToUse: false });
    expect((failed!.status as { error: { message: string } }).error.message).to.include('not found');
    api.create(PVCS, claim('bob', 'from-ghost', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'ghost' }));
    await until(api, { group: '', resource: 'events' }, '', 'bob', () => api.list({ group: '', resource: 'events' }, { namespace: 'bob' })
      .some((e) => (e as { reason?: string; message?: string }).reason === 'ProvisioningFailed' && (e as { message?: string }).message!.includes('snapshot ghost is not Ready')));
    expect(phase(api.get(PVCS, 'from-ghost', 'bob')) ?? 'Pending').to.equal('Pending');
  });

  it('keeps a snapshot that a Pending claim is being provisioned from until that claim is gone', async function () {
    const { api } = sim.cluster;
    api.create(PVCS, claim('alice', 'busy'));
    await until(api, PVCS, 'busy', 'alice', (o) => phase(o) === 'Bound');
    api.create(VOLUME_SNAPSHOTS, snapshotOf('alice', 'busy-snap', { persistentVolumeClaimName: 'busy' }));
    await until(api, VOLUME_SNAPSHOTS, 'busy-snap', 'alice', ready);
    // WaitForFirstConsumer: the claim stays Pending, as it would until a Pod mounts it
    api.create({ group: 'storage.k8s.io', resource: 'storageclasses' }, storageClass('wffc', { volumeBindingMode: 'WaitForFirstConsumer' }));
    api.create(PVCS, { ...claim('alice', 'waiting', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'busy-snap' }), spec: { ...(claim('alice', 'waiting', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'busy-snap' }).spec as object), storageClassName: 'wffc' } });
    api.delete(VOLUME_SNAPSHOTS, 'busy-snap', 'alice');
    const events = await until(api, { group: '', resource: 'events' }, '', 'alice', () => api.list({ group: '', resource: 'events' }, { namespace: 'alice' })
      .some((e) => (e as { reason?: string }).reason === 'SnapshotDeletePending'));
    expect(events).to.equal(undefined);
    expect(api.get(VOLUME_SNAPSHOTS, 'busy-snap', 'alice'), 'held while the claim is Pending').not.to.equal(undefined);
    api.delete(PVCS, 'waiting', 'alice');
    await until(api, VOLUME_SNAPSHOTS, 'busy-snap', 'alice', (o) => o === undefined);
  });
});

describe('simulated cluster without snapshots', function () {
  let sim: Sim;
  before(async function () { sim = await startSim(false); });
  after(async function () { await sim?.stop(); });

  it('serves no snapshot kinds, makes hostPath volumes, and leaves a claim from a VolumeSnapshot Pending', async function () {
    const { api } = sim.cluster;
    expect(() => api.list(VOLUME_SNAPSHOTS)).to.throw();
    api.create(PVCS, claim('alice', 'plain'));
    const bound = await until(api, PVCS, 'plain', 'alice', (o) => phase(o) === 'Bound');
    const pv = api.get({ group: '', resource: 'persistentvolumes' }, (bound!.spec as { volumeName: string }).volumeName)!;
    expect((pv.spec as { hostPath?: unknown }).hostPath).to.not.equal(undefined);
    api.create(PVCS, claim('alice', 'from-snap', { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'none' }));
    await until(api, { group: '', resource: 'events' }, '', 'alice', () => api.list({ group: '', resource: 'events' }, { namespace: 'alice' })
      .some((e) => (e as { reason?: string }).reason === 'ProvisioningFailed'));
    expect(phase(api.get(PVCS, 'from-snap', 'alice')) ?? 'Pending').to.equal('Pending');
  });
});
