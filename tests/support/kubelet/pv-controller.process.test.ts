// The simulated PV controller (pv-controller.ts) against the rules of kubernetes/kubernetes
// pkg/controller/volume/persistentvolume/pv_controller.go, one test per rule: syncUnboundClaim (a claim naming a
// volume binds it only when the volume's claimRef is empty or names that claim, by namespace, name and uid when set),
// syncBoundClaim, syncVolume (Available, Bound, Released; reclaim policy Retain keeps, Delete deletes the volume and
// its data), bind (claimRef uid, pv.kubernetes.io/bound-by-controller and bind-completed, the claim's status), and the
// provisioner's refusal of a claim with a selector (kubernetes-sigs/sig-storage-lib-external-provisioner
// controller/controller.go, "claim Selector is not supported"). The oracle is the upstream behaviour written out here:
// the annotation names, phases and messages are the upstream strings, not imported from the simulation.
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { startCluster, type RunningCluster } from '../cluster/index.ts';
import { simulatedKubelet, storageClass, type SimulatedKubelet } from './index.ts';
import { EVENTS, PVCS, PVS, STORAGE_CLASSES } from './refs.ts';

const BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
const BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';

/** Resolves once `check` holds, re-read on every change the API reports (a watch, never a sleep). */
function until<T>(api: InProcessApi, check: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => undefined as void;
    const timer = setTimeout(() => { unsubscribe(); reject(new Error(`timed out waiting for ${what}`)); }, timeoutMs);
    const test = () => {
      const value = check();
      if (value === undefined || value === false) return false;
      clearTimeout(timer);
      unsubscribe();
      resolve(value);
      return true;
    };
    unsubscribe = api.subscribe(() => { test(); });
    test();
  });
}

const phase = (o: KubeObject | undefined) => (o?.status as { phase?: string } | undefined)?.phase;
const spec = (o: KubeObject | undefined) => (o?.spec ?? {}) as { volumeName?: string; claimRef?: { namespace?: string; name?: string; uid?: string } | null; persistentVolumeReclaimPolicy?: string; hostPath?: { path: string } };

function claim(name: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'team' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'fast', ...extra },
  };
}

/**
 * Waits until the controller has synced everything written so far: a sentinel claim created now is provisioned and
 * Bound only after the earlier changes' syncs ran (the watch delivers in resourceVersion order, the controller takes
 * them in turn). The sign that a claim it left alone was looked at.
 */
let sentinels = 0;
async function synced(api: InProcessApi): Promise<void> {
  const name = `sentinel-${++sentinels}`;
  api.create(PVCS, claim(name));
  await until(api, () => phase(api.get(PVCS, name, 'team')) === 'Bound', `sentinel ${name} Bound`);
}

describe('simulated PV controller (pv_controller.go)', function () {
  let cluster: RunningCluster;
  let kubelet: SimulatedKubelet;
  let stop: () => void;
  let dataDir: string;
  let api: InProcessApi;

  /** A static volume whose data is a folder of this test's own, as an administrator would make one. */
  function staticVolume(name: string, extra: { claimRef?: Record<string, unknown>; reclaim?: string; labels?: Record<string, string>; provisioned?: boolean } = {}): string {
    const folder = join(dataDir, 'static', name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'data.txt'), name);
    api.create(PVS, {
      apiVersion: 'v1', kind: 'PersistentVolume',
      metadata: { name, ...(extra.labels ? { labels: extra.labels } : {}), ...(extra.provisioned ? { annotations: { 'pv.kubernetes.io/provisioned-by': 'kubelet.simulated/hostpath' } } : {}) },
      spec: {
        capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'fast',
        persistentVolumeReclaimPolicy: extra.reclaim ?? 'Retain', hostPath: { path: folder },
        ...(extra.claimRef ? { claimRef: { kind: 'PersistentVolumeClaim', ...extra.claimRef } } : {}),
      },
    });
    return folder;
  }

  before(async function () {
    cluster = await startCluster({ kubeflowCrds: false, controllers: false });
    api = cluster.api;
    dataDir = mkdtempSync(join(tmpdir(), 'pv-controller-'));
    kubelet = simulatedKubelet({ dataDir, nodes: ['n1'] });
    stop = kubelet.start(api);
    api.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    api.create(STORAGE_CLASSES, storageClass('fast'));
  });
  after(async function () {
    stop?.();
    await kubelet?.idle();
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('bind: a provisioned claim is Bound with the volume\'s capacity and access modes, bind-completed, and the volume Bound to its uid', async function () {
    const made = api.create(PVCS, claim('provisioned'));
    const bound = await until(api, () => { const c = api.get(PVCS, 'provisioned', 'team'); return phase(c) === 'Bound' && c; }, 'the claim Bound');
    const pv = await until(api, () => { const v = api.get(PVS, spec(bound).volumeName!); return phase(v) === 'Bound' && v; }, 'the volume Bound');
    expect(bound.status).to.deep.include({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } });
    expect(bound.metadata.annotations).to.include({ [BIND_COMPLETED]: 'yes', [BOUND_BY_CONTROLLER]: 'yes' });
    expect(spec(pv).claimRef).to.include({ namespace: 'team', name: 'provisioned', uid: made.metadata.uid });
    // the provisioner pre-bound it to the claim, so the controller did not choose it (bindVolumeToClaim)
    expect(pv.metadata.annotations ?? {}).to.not.have.property(BOUND_BY_CONTROLLER);
  });

  it('syncUnboundClaim: a claim naming a volume without claimRef binds it; the volume gets the claim\'s uid and bound-by-controller', async function () {
    staticVolume('free');
    await until(api, () => phase(api.get(PVS, 'free')) === 'Available', 'the free volume Available');
    const made = api.create(PVCS, claim('wants-free', { volumeName: 'free' }));
    const bound = await until(api, () => { const c = api.get(PVCS, 'wants-free', 'team'); return phase(c) === 'Bound' && c; }, 'the claim Bound');
    expect(bound.metadata.annotations).to.include({ [BIND_COMPLETED]: 'yes' });
    expect(bound.metadata.annotations ?? {}).to.not.have.property(BOUND_BY_CONTROLLER); // the user named the volume
    expect(bound.status).to.deep.include({ capacity: { storage: '2Gi' } });
    const pv = api.get(PVS, 'free')!;
    expect(spec(pv).claimRef).to.include({ namespace: 'team', name: 'wants-free', uid: made.metadata.uid });
    expect(pv.metadata.annotations).to.include({ [BOUND_BY_CONTROLLER]: 'yes' });
    expect(phase(pv)).to.equal('Bound');
    expect(readFileSync(join(kubelet.volumePath('team', 'wants-free'), 'data.txt'), 'utf8')).to.equal('free');
  });

  it('syncUnboundClaim: a claim naming a volume claimed by another claim stays Pending and the volume keeps its claim', async function () {
    api.create(PVCS, claim('owner'));
    const owner = await until(api, () => { const c = api.get(PVCS, 'owner', 'team'); return phase(c) === 'Bound' && c; }, 'the owner Bound');
    api.create(PVCS, claim('thief', { volumeName: spec(owner).volumeName }));
    await synced(api);
    const thief = api.get(PVCS, 'thief', 'team')!;
    expect(phase(thief)).to.equal('Pending');
    expect(thief.metadata.annotations ?? {}).to.not.have.property(BIND_COMPLETED);
    expect(spec(api.get(PVS, spec(owner).volumeName!)).claimRef).to.include({ name: 'owner', uid: owner.metadata.uid });
  });

  it('syncVolume: a volume pre-bound by namespace and name only is Available, and binds that claim, taking its uid', async function () {
    staticVolume('reserved', { claimRef: { namespace: 'team', name: 'reserved-for' } });
    await until(api, () => phase(api.get(PVS, 'reserved')) === 'Available', 'the pre-bound volume Available');
    const made = api.create(PVCS, claim('reserved-for', { volumeName: 'reserved' }));
    await until(api, () => phase(api.get(PVCS, 'reserved-for', 'team')) === 'Bound', 'the claim Bound');
    const pv = api.get(PVS, 'reserved')!;
    expect(spec(pv).claimRef).to.include({ name: 'reserved-for', uid: made.metadata.uid });
    expect(pv.metadata.annotations ?? {}).to.not.have.property(BOUND_BY_CONTROLLER); // it was already this claim's
  });

  it('syncVolume: a claimRef naming a claim of another uid is a deleted claim: Retain keeps the volume Released with its data', async function () {
    api.create(PVCS, claim('recreated', { volumeName: 'stale' }));
    const folder = staticVolume('stale', { claimRef: { namespace: 'team', name: 'recreated', uid: '00000000-0000-0000-0000-000000000000' } });
    await until(api, () => phase(api.get(PVS, 'stale')) === 'Released', 'the volume Released');
    expect(readFileSync(join(folder, 'data.txt'), 'utf8')).to.equal('stale');
    expect(phase(api.get(PVCS, 'recreated', 'team'))).to.equal('Pending');
  });

  it('reclaimVolume: a volume of a deleted claim with Delete is deleted with its data; with Retain it stays Released, data kept', async function () {
    api.create(PVCS, claim('goes'));
    const goes = await until(api, () => { const c = api.get(PVCS, 'goes', 'team'); return phase(c) === 'Bound' && c; }, 'the claim Bound');
    const folder = kubelet.volumePath('team', 'goes');
    writeFileSync(join(folder, 'x'), 'x');
    api.delete(PVCS, 'goes', 'team');
    await until(api, () => api.get(PVS, spec(goes).volumeName!) === undefined, 'the volume deleted');
    expect(existsSync(folder)).to.equal(false);

    api.create(PVCS, claim('stays'));
    const stays = await until(api, () => { const c = api.get(PVCS, 'stays', 'team'); return phase(c) === 'Bound' && c; }, 'the claim Bound');
    const kept = kubelet.volumePath('team', 'stays');
    writeFileSync(join(kept, 'x'), 'kept');
    api.mergePatch(PVS, spec(stays).volumeName!, undefined, { spec: { persistentVolumeReclaimPolicy: 'Retain' } });
    api.delete(PVCS, 'stays', 'team');
    await until(api, () => phase(api.get(PVS, spec(stays).volumeName!)) === 'Released', 'the volume Released');
    expect(readFileSync(join(kept, 'x'), 'utf8')).to.equal('kept');
  });

  it('a Released volume binds a new claim only once its claimRef is reset to that claim without uid (Velero ResetPVBinding)', async function () {
    staticVolume('handed', { claimRef: { namespace: 'team', name: 'gone', uid: '11111111-1111-1111-1111-111111111111' } });
    await until(api, () => phase(api.get(PVS, 'handed')) === 'Released', 'the volume Released');
    const made = api.create(PVCS, claim('heir', { volumeName: 'handed' }));
    await synced(api);
    expect(phase(api.get(PVCS, 'heir', 'team'))).to.equal('Pending');
    expect(phase(api.get(PVS, 'handed'))).to.equal('Released');
    api.mergePatch(PVS, 'handed', undefined, { spec: { claimRef: { namespace: 'team', name: 'heir', uid: null } } });
    await until(api, () => phase(api.get(PVCS, 'heir', 'team')) === 'Bound', 'the heir Bound');
    expect(spec(api.get(PVS, 'handed')).claimRef).to.include({ uid: made.metadata.uid });
    expect(phase(api.get(PVS, 'handed'))).to.equal('Bound');
  });

  it('a claim with a selector is not provisioned (claim Selector is not supported) and binds an Available volume whose labels match', async function () {
    const made = api.create(PVCS, claim('selective', { selector: { matchLabels: { pick: 'me' } } }));
    await until(api, () => api.list(EVENTS, { namespace: 'team' }).some((e) => (e as { involvedObject?: { uid?: string }; reason?: string; message?: string }).involvedObject?.uid === made.metadata.uid
      && (e as { reason?: string }).reason === 'ProvisioningFailed' && (e as { message?: string }).message === 'claim Selector is not supported'), 'the provisioning refusal');
    expect(phase(api.get(PVCS, 'selective', 'team'))).to.equal('Pending');
    staticVolume('picked', { labels: { pick: 'me' } });
    await until(api, () => phase(api.get(PVCS, 'selective', 'team')) === 'Bound', 'the claim Bound');
    expect(spec(api.get(PVCS, 'selective', 'team')).volumeName).to.equal('picked');
  });

  it('syncBoundClaim: a bound claim whose volume is gone is Lost (ClaimLost)', async function () {
    staticVolume('vanishing');
    api.create(PVCS, claim('orphan', { volumeName: 'vanishing' }));
    await until(api, () => phase(api.get(PVCS, 'orphan', 'team')) === 'Bound', 'the claim Bound');
    api.delete(PVS, 'vanishing');
    await until(api, () => phase(api.get(PVCS, 'orphan', 'team')) === 'Lost', 'the claim Lost');
  });
});
