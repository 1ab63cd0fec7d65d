// Restore by hand-over (src/volumes/rebind.ts, tested here), on the embedded server with the simulated kubelet, whose PV controller
// follows kubernetes pkg/controller/volume/persistentvolume/pv_controller.go (tests/support/kubelet/pv-controller.ts):
// the PVC's data is filled in a claim of the model's namespace and its volume handed to the user's claim the way
// Velero's generic restore exposer does (vmware-tanzu/velero pkg/exposer/generic_restore.go, RebindVolume). What the
// tests hold the product to, written out here rather than imported:
// - the profile namespace is watched for the whole restore: no Job, Pod or Secret appears in it;
// - the data is in the user's claim, Bound to the volume filled in the model's namespace, whose reclaim policy ends as
//   it started, and which is Retain whenever it is Released (in flight) and is never deleted;
// - a run killed after the fill, after the temporary claim's deletion, after the claimRef's reset and after the
//   record's removal converges on a rerun, with nothing left in the model's namespace.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import type { KubeObject } from '../../src/kube/types.ts';
import { newBackupId } from '../../src/store/layout.ts';
import type { VolumeKube } from '../../src/volumes/kube-port.ts';
import { backupVolumes, restoreVolumes } from '../../src/volumes/mover.ts';
import { withFillMark } from '../../src/volumes/fill-mark.ts';
import type { ClusterEvent } from '../support/cluster/contract.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, hashTree, pvc, PVC_REF, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';

const MODEL = 'upgrader-model';
const PV_REF = { group: '', resource: 'persistentvolumes' };
const CM_REF = { group: '', resource: 'configmaps' };

const phase = (o: KubeObject | undefined) => (o?.status as { phase?: string } | undefined)?.phase;
const policy = (o: KubeObject | undefined) => (o?.spec as { persistentVolumeReclaimPolicy?: string } | undefined)?.persistentVolumeReclaimPolicy;
const volumeName = (o: KubeObject | undefined) => (o?.spec as { volumeName?: string } | undefined)?.volumeName;

/** What the cluster saw during a restore: objects added in the profile namespace, and every PersistentVolume event. */
function observe(vc: VolumeCluster, profile: string): { inProfile: string[]; volumes: ClusterEvent[]; stop: () => void } {
  const inProfile: string[] = [];
  const volumes: ClusterEvent[] = [];
  const stop = vc.cluster.api.subscribe((event) => {
    if (event.ref.resource === 'persistentvolumes') volumes.push(event);
    if (event.type === 'ADDED' && event.object.metadata.namespace === profile && ['jobs', 'pods', 'secrets'].includes(event.ref.resource)) {
      inProfile.push(`${event.ref.resource}/${event.object.metadata.name}`);
    }
  });
  return { inProfile, volumes, stop };
}

/** The end state every hand-over converges on: data in the claim, Bound, the policy as it started, nothing left. */
function expectHandedOver(vc: VolumeCluster, seen: ClusterEvent[], expected: Map<string, string>, name: string): void {
  const claim = vc.cluster.api.get(PVC_REF, name, 'alice')!;
  expect(phase(claim)).to.equal('Bound');
  expect(claim.metadata.labels ?? {}, 'the fill mark is off').to.not.have.property('kubeflow-upgrader/volume-fill');
  const volume = vc.cluster.api.get(PV_REF, volumeName(claim)!)!;
  expect((volume.spec as { claimRef?: { uid?: string } }).claimRef?.uid).to.equal(claim.metadata.uid);
  expect(phase(volume)).to.equal('Bound');
  const added = seen.find((e) => e.type === 'ADDED' && e.object.metadata.name === volume.metadata.name);
  expect(added, 'the volume was provisioned during the restore').to.not.equal(undefined);
  expect(policy(volume), 'the reclaim policy ends as it started').to.equal(policy(added!.object));
  for (const event of seen.filter((e) => e.object.metadata.name === volume.metadata.name)) {
    if (phase(event.object) === 'Released') expect(policy(event.object), 'Retain while Released').to.equal('Retain');
  }
  expect(seen.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name), 'no volume deleted').to.deep.equal([]);
  expect(hashTree(vc.kubelet.volumePath('alice', name))).to.deep.equal(expected);
  // nothing of the run is left in the model's namespace: no claim, record, Job or Secret
  expect(vc.cluster.api.list(PVC_REF, { namespace: MODEL }).map((o) => o.metadata.name)).to.deep.equal([]);
  expect(vc.cluster.api.list(CM_REF, { namespace: MODEL, labelSelector: 'app.kubernetes.io/component=volume-handover' })).to.deep.equal([]);
  expect(vc.cluster.api.list({ group: 'batch', resource: 'jobs' }, { namespace: MODEL }).map((o) => o.metadata.name)).to.deep.equal([]);
  expect(vc.cluster.api.list({ group: '', resource: 'secrets' }, { namespace: MODEL }).map((o) => o.metadata.name)).to.deep.equal([]);
  // the only volumes are the claims' own: none orphaned
  for (const pv of vc.cluster.api.list(PV_REF)) expect(phase(pv), `volume ${pv.metadata.name}`).to.equal('Bound');
}

/** A port whose `when` call fails once, as a run killed at that point stops: nothing after it is sent. */
function killedAt(kube: VolumeKube, when: (call: string, args: unknown[]) => boolean): VolumeKube {
  let killed = false;
  const wrap = <K extends keyof VolumeKube>(name: K) => ((...args: unknown[]) => {
    if (killed) return Promise.reject(new Error('killed'));
    if (when(name, args)) {
      killed = true;
      return Promise.reject(new Error('killed'));
    }
    return (kube[name] as (...a: unknown[]) => unknown)(...args);
  }) as VolumeKube[K];
  return { get: wrap('get'), list: wrap('list'), create: wrap('create'), mergePatch: wrap('mergePatch'), podLog: wrap('podLog'), delete: wrap('delete'), waitFor: wrap('waitFor') };
}

const resourceOf = (args: unknown[]) => (args[0] as { resource: string }).resource;

describe('volumes: restore by hand-over', function () {
  let s3: S3ServerHandle;
  let source: VolumeCluster;
  let target: VolumeCluster;
  let wffc: VolumeCluster;
  let backupId: string;
  const trees = new Map<string, Map<string, string>>();
  const names = ['ws', 'after-fill', 'after-temp-deleted', 'after-claimref', 'after-record', 'deleted-midway', 'unreserved'];

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    [source, target, wffc] = await Promise.all([
      startVolumeCluster(), startVolumeCluster({ namespaces: ['alice', MODEL] }), startVolumeCluster({ namespaces: ['alice', MODEL], bindingMode: 'WaitForFirstConsumer' }),
    ]);
    backupId = newBackupId();
    for (const [i, name] of names.entries()) {
      const folder = await createBoundPvc(source, 'alice', name);
      writeWorkspace(folder, { files: 10 + i, bigFileBytes: 0 });
      trees.set(name, hashTree(folder));
    }
    await backupVolumes(source.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: names.map((name) => ({ namespace: 'alice', name })) });
  });
  after(async function () {
    await source?.stop();
    await target?.stop();
    await wffc?.stop();
    await s3?.stop();
  });

  for (const mode of ['Immediate', 'WaitForFirstConsumer'] as const) {
    it(`fills the claim in the model's namespace and hands its volume over, nothing in the profile's (${mode})`, async function () {
      const vc = mode === 'Immediate' ? target : wffc;
      vc.cluster.api.create(PVC_REF, withFillMark(pvc('alice', 'ws'), backupId, { handover: true }));
      const seen = observe(vc, 'alice');
      const [result] = await restoreVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'ws' }], handover: { namespace: MODEL } });
      seen.stop();
      expect(seen.inProfile, 'nothing of the restore in the profile namespace').to.deep.equal([]);
      expect(result).to.deep.include({ namespace: 'alice', pvc: 'ws', restoredBy: 'handover', checksumVerified: true });
      expect(result!.volume).to.equal(volumeName(vc.cluster.api.get(PVC_REF, 'ws', 'alice')));
      expectHandedOver(vc, seen.volumes, trees.get('ws')!, 'ws');
    });
  }

  const kills: Array<{ name: string; point: string; when: (call: string, args: unknown[]) => boolean; inFlight?: boolean }> = [
    // the Retain patch that follows the recorded fill
    { name: 'after-fill', point: 'after the fill', when: (call, args) => call === 'mergePatch' && resourceOf(args) === 'persistentvolumes' },
    // the user's claim naming the volume, right after the temporary claim went
    { name: 'after-temp-deleted', point: 'after the temporary claim\'s deletion', inFlight: true, when: (call, args) => call === 'mergePatch' && resourceOf(args) === 'persistentvolumeclaims' && args[1] === 'alice' },
    // the wait for Bound, right after the claimRef's reset
    { name: 'after-claimref', point: 'after the claimRef\'s reset', inFlight: true, when: (call, args) => call === 'waitFor' && resourceOf(args) === 'persistentvolumeclaims' && args[1] === 'alice' },
    // the mark's removal, right after the record went
    { name: 'after-record', point: 'after the record\'s removal', when: (call, args) => call === 'mergePatch' && resourceOf(args) === 'persistentvolumeclaims' && args[1] === 'alice' && JSON.stringify(args[3]).includes('volume-fill') },
  ];
  for (const kill of kills) {
    it(`converges on a rerun when killed ${kill.point}`, async function () {
      target.cluster.api.create(PVC_REF, withFillMark(pvc('alice', kill.name), backupId, { handover: true }));
      const seen = observe(target, 'alice');
      const options = { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: kill.name }], handover: { namespace: MODEL } };
      await restoreVolumes(killedAt(target.kube, kill.when), options).then(() => expect.fail('the killed run finished'), (error: Error) => expect(error.message).to.match(/killed/));
      if (kill.inFlight) {
        // the volume in flight is Released, not deleted: Retain
        const inFlight = target.cluster.api.list(PV_REF).filter((pv) => policy(pv) === 'Retain');
        expect(inFlight, 'one volume in flight, Retain').to.have.length(1);
      }
      const [result] = await restoreVolumes(target.kube, options);
      seen.stop();
      expect(seen.inProfile).to.deep.equal([]);
      expect(result).to.deep.include({ restoredBy: 'handover' });
      expectHandedOver(target, seen.volumes, trees.get(kill.name)!, kill.name);
    });
  }

  it('abandons a hand-over whose claim was deleted midway: its volume goes with its data, nothing is left', async function () {
    target.cluster.api.create(PVC_REF, withFillMark(pvc('alice', 'deleted-midway'), backupId, { handover: true }));
    const options = { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'deleted-midway' }], handover: { namespace: MODEL } };
    const killAt = (call: string, args: unknown[]) => call === 'mergePatch' && resourceOf(args) === 'persistentvolumeclaims' && args[1] === 'alice';
    await restoreVolumes(killedAt(target.kube, killAt), options).then(() => expect.fail('the killed run finished'), () => undefined);
    const [inFlight] = target.cluster.api.list(PV_REF).filter((pv) => policy(pv) === 'Retain');
    expect(inFlight, 'the volume in flight').to.not.equal(undefined);
    target.cluster.api.delete(PVC_REF, 'deleted-midway', 'alice');
    // the next restore (of nothing here) settles the record it finds: the volume is made Delete and reclaimed
    await restoreVolumes(target.kube, { ...options, pvcs: [] });
    await target.kube.waitFor({ group: '', version: 'v1', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false }, '', inFlight!.metadata.name!, (o) => o === undefined, { timeoutMs: 10_000 });
    expect(existsSync((inFlight!.spec as { hostPath: { path: string } }).hostPath.path), 'its data went with it').to.equal(false);
    expect(target.cluster.api.list(PVC_REF, { namespace: MODEL })).to.deep.equal([]);
    expect(target.cluster.api.list(CM_REF, { namespace: MODEL, labelSelector: 'app.kubernetes.io/component=volume-handover' })).to.deep.equal([]);
  });

  it('fills a marked claim the restore did not reserve by a mover in its namespace, and says so', async function () {
    target.cluster.api.create(PVC_REF, withFillMark(pvc('alice', 'unreserved'), backupId));
    const [result] = await restoreVolumes(target.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'unreserved' }], handover: { namespace: MODEL } });
    expect(result).to.deep.include({ restoredBy: 'in-namespace', checksumVerified: true });
    expect(hashTree(target.kubelet.volumePath('alice', 'unreserved'))).to.deep.equal(trees.get('unreserved'));
  });

  it('refuses to fill a reserved claim without the model\'s namespace, naming why', async function () {
    wffc.cluster.api.create(PVC_REF, withFillMark(pvc('alice', 'unreserved'), backupId, { handover: true }));
    const error = await restoreVolumes(wffc.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'unreserved' }] }).then(() => undefined, (e: Error) => e);
    expect(error?.message).to.match(/reserved it for a hand-over from the model's namespace/);
  });
});
