// A backup read from a CSI snapshot, the way Velero's data mover reads one, on the embedded cluster with snapshots
// (tests/support/kubelet/snapshots): a file written to all along the backup is restored exactly as it was when the
// snapshot was taken; nothing of the product (Job, Pod, Secret) appears in the profile namespace; every temporary
// object and the provider's snapshot are gone afterwards; a PVC whose driver has no VolumeSnapshotClass is copied live
// and says so; a run killed after the hand-over leaves objects that the next run removes, converging on nothing left.
// The oracles are the cluster's own objects and the file's lengths as the writer saw them, never the product's rules.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { newBackupId } from '../../src/store/layout.ts';
import type { VolumeKube } from '../../src/volumes/kube-port.ts';
import { backupVolumes, restoreVolumes } from '../../src/volumes/mover.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { namespacePassword } from './restic-passwords.ts';
import { createBoundPvc, pvc, PVC_REF, s3For, startVolumeCluster, type VolumeCluster } from './helpers.ts';

const SNAPSHOTS = { group: 'snapshot.storage.k8s.io', resource: 'volumesnapshots' };
const CONTENTS = { group: 'snapshot.storage.k8s.io', resource: 'volumesnapshotcontents' };
const MODEL = 'kubeflow';

/** Appends a numbered line every few milliseconds and records the file's length after each write. */
function writer(file: string): { lengths: number[]; stop(): void } {
  const lengths: number[] = [];
  let n = 0;
  const write = () => {
    appendFileSync(file, `line ${String(n++).padStart(6, '0')} ${'x'.repeat(50)}\n`);
    lengths.push(readFileSync(file).length);
  };
  write();
  const timer = setInterval(write, 3);
  return { lengths, stop: () => clearInterval(timer) };
}

/** Everything a backup from snapshots could leave: snapshots anywhere, contents, claims and Jobs in the model's namespace, the driver's snapshots. */
function leftovers(vc: VolumeCluster): Record<string, unknown[]> {
  const { api } = vc.cluster;
  return {
    volumeSnapshots: api.list(SNAPSHOTS).map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    contents: api.list(CONTENTS).map((o) => o.metadata.name),
    modelClaims: api.list(PVC_REF, { namespace: MODEL }).map((o) => o.metadata.name),
    modelSecrets: api.list({ group: '', resource: 'secrets' }, { namespace: MODEL, labelSelector: 'app.kubernetes.io/managed-by=kubeflow-upgrader' }).map((o) => o.metadata.name),
    driverSnapshots: vc.kubelet.snapshotHandles(),
  };
}
const NOTHING = { volumeSnapshots: [], contents: [], modelClaims: [], modelSecrets: [], driverSnapshots: [] };

function until<T>(vc: VolumeCluster, resource: string, test: (e: { type: string; object: KubeObject }) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const stop = vc.cluster.api.subscribe((e) => {
      if (e.ref.resource !== resource) return;
      const found = test(e);
      if (found !== undefined) {
        stop();
        resolve(found);
      }
    });
  });
}

describe('volumes: backup from a CSI snapshot', function () {
  this.timeout(120_000);
  let s3: S3ServerHandle;
  let source: VolumeCluster;
  let target: VolumeCluster;

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    [source, target] = await Promise.all([startVolumeCluster({ snapshots: true, namespaces: ['alice', 'bob'] }), startVolumeCluster({ namespaces: ['alice', 'bob'] })]);
    source.cluster.api.create({ group: 'storage.k8s.io', resource: 'storageclasses' }, {
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'nfs' }, provisioner: 'example.com/nfs-without-snapshots', volumeBindingMode: 'Immediate',
    } as KubeObject);
  });
  after(async function () {
    await source?.stop();
    await target?.stop();
    await s3?.stop();
  });

  it('restores a file written to all along exactly as it was at the snapshot, with nothing of the product in the profile namespace and nothing left', async function () {
    const folder = await createBoundPvc(source, 'alice', 'notebook');
    const file = join(folder, 'training.log');
    const seen: string[] = [];
    const stopWatching = source.cluster.api.subscribe((e) => {
      if (e.object.metadata.namespace === 'alice' && e.type === 'ADDED' && ['jobs', 'pods', 'secrets'].includes(e.ref.resource)) seen.push(`${e.ref.resource}/${e.object.metadata.name}`);
    });
    const writing = writer(file);
    // the writer's lengths when the snapshot was asked for and when it was seen ready: the copy lies between
    const asked = until(source, 'volumesnapshots', (e) => (e.object.metadata.namespace === 'alice' ? writing.lengths.at(-1)! : undefined));
    const ready = until(source, 'volumesnapshots', (e) => (e.object.metadata.namespace === 'alice' && (e.object.status as { readyToUse?: boolean } | undefined)?.readyToUse ? writing.lengths.at(-1)! : undefined));
    const backupId = newBackupId();
    const settings = s3For(s3, 'kf-backups');
    let results;
    try {
      results = await backupVolumes(source.kube, { backupId, s3: settings, pvcs: [{ namespace: 'alice', name: 'notebook' }], snapshots: { namespace: MODEL } });
    } finally {
      writing.stop();
      stopWatching();
    }
    const [lengthAsked, lengthReady] = [await asked, await ready];
    const [result] = results;
    expect(result!.copy).to.include({ from: 'snapshot', pointInTime: true, volumeSnapshotClass: 'csi-hostpath-snapclass' });
    expect(Date.parse(result!.copy!.takenAt!)).to.be.a('number').and.not.NaN;
    expect(seen, 'no Job, Pod or Secret of the product in the profile namespace').to.deep.equal([]);
    expect(leftovers(source)).to.deep.equal(NOTHING);

    const final = readFileSync(file);
    target.cluster.api.create(PVC_REF, pvc('alice', 'notebook'));
    await restoreVolumes(target.kube, { backupId, s3: settings, pvcs: [{ namespace: 'alice', name: 'notebook' }] });
    const restored = readFileSync(join(target.kubelet.volumePath('alice', 'notebook'), 'training.log'));
    expect(restored.length).to.be.within(lengthAsked, lengthReady);
    expect(writing.lengths, 'the restored file is one state the file passed through').to.include(restored.length);
    expect(restored.equals(final.subarray(0, restored.length)), 'a prefix of what was written').to.equal(true);
    expect(final.length, 'the writer went on after the snapshot').to.be.greaterThan(lengthReady);
  });

  it('copies a PVC whose driver has no VolumeSnapshotClass live, and says it is not point in time', async function () {
    source.cluster.api.create(PVC_REF, { ...pvc('alice', 'shared'), spec: { ...(pvc('alice', 'shared').spec as object), storageClassName: 'nfs' } });
    await source.kube.waitFor({ group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' }, 'alice', 'shared',
      (o) => (o?.status as { phase?: string } | undefined)?.phase === 'Bound', { timeoutMs: 10_000 });
    // written before, not during: rclone refuses a file that changes while it reads it ("source file is being updated")
    appendFileSync(join(source.kubelet.volumePath('alice', 'shared'), 'data.csv'), 'a,b\n1,2\n');
    const jobs: string[] = [];
    const stopWatching = source.cluster.api.subscribe((e) => { if (e.ref.resource === 'jobs' && e.type === 'ADDED') jobs.push(`${e.object.metadata.namespace}`); });
    const results = await backupVolumes(source.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'shared' }], snapshots: { namespace: MODEL } })
      .finally(stopWatching);
    expect(results[0]!.copy).to.deep.equal({ from: 'live', pointInTime: false, reason: 'no VolumeSnapshotClass has driver example.com/nfs-without-snapshots' });
    expect(results[0]!.files).to.equal(1);
    expect(jobs, 'the live copy\'s mover runs beside the PVC, as before').to.deep.equal(['alice']);
    expect(leftovers(source)).to.deep.equal(NOTHING);
  });

  it('leaves alone a user\'s VolumeSnapshot that carries its labels and annotation but not a name only a run could make', async function () {
    await createBoundPvc(source, 'alice', 'mine');
    const backupId = newBackupId();
    const lookalike = {
      apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot',
      metadata: {
        name: 'kfu-snap-0123456789abcdef0123', namespace: 'alice',
        labels: { 'app.kubernetes.io/managed-by': 'kubeflow-upgrader', 'app.kubernetes.io/component': 'volume-snapshot', 'kubeflow-upgrader/backup-id': backupId },
        annotations: { 'kubeflow-upgrader/snapshot-of': 'alice/mine' },
      },
      spec: { source: { persistentVolumeClaimName: 'mine' } },
    } as KubeObject;
    source.cluster.api.create(SNAPSHOTS, lookalike);
    await until(source, 'volumesnapshots', (e) => (e.object.metadata.name === lookalike.metadata.name && (e.object.status as { readyToUse?: boolean } | undefined)?.readyToUse ? true : undefined));
    const [result] = await backupVolumes(source.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'mine' }], snapshots: { namespace: MODEL } });
    expect(result!.copy?.from).to.equal('snapshot');
    expect(source.cluster.api.get(SNAPSHOTS, lookalike.metadata.name!, 'alice'), 'the user\'s snapshot stays').not.to.equal(undefined);
    source.cluster.api.delete(SNAPSHOTS, lookalike.metadata.name!, 'alice');
    await new Promise<void>((resolve) => {
      const check = () => { if (!source.cluster.api.get(SNAPSHOTS, lookalike.metadata.name!, 'alice') && source.kubelet.snapshotHandles().length === 0) { stop(); resolve(); } };
      const stop = source.cluster.api.subscribe(check);
      check();
    });
    expect(leftovers(source)).to.deep.equal(NOTHING);
  });

  it('removes what it exposed when another PVC\'s failure stops the run', async function () {
    await createBoundPvc(source, 'alice', 'beside-a-failure');
    // the other PVC is found missing only once this one's snapshot is ready: the run stops in the middle of the hand-over
    const snapshotReady = until(source, 'volumesnapshots', (e) => (e.object.metadata.namespace === 'alice' && (e.object.status as { readyToUse?: boolean } | undefined)?.readyToUse ? true : undefined));
    let stoppedDuringHandOver = false;
    let asked = 0;
    const kube: VolumeKube = {
      ...source.kube,
      get: async (r, namespace, name) => {
        // the first look is the run's survey of bound claims, before any mover starts; the second is its mover's
        if (name !== 'does-not-exist' || ++asked === 1) return source.kube.get(r, namespace, name);
        await snapshotReady;
        stoppedDuringHandOver = source.cluster.api.list(SNAPSHOTS, { namespace: 'alice' }).length > 0;
        return undefined;
      },
    };
    const failure = await backupVolumes(kube, {
      backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), concurrency: 2, snapshots: { namespace: MODEL },
      pvcs: [{ namespace: 'alice', name: 'beside-a-failure' }, { namespace: 'alice', name: 'does-not-exist' }],
    }).then(() => undefined, (error: Error) => error.message);
    expect(failure).to.include('does-not-exist (the PersistentVolumeClaim does not exist)');
    expect(stoppedDuringHandOver, 'the run was stopped while its snapshot existed').to.equal(true);
    expect(leftovers(source)).to.deep.equal(NOTHING);
  });

  it('on a cluster that serves no snapshot kinds, copies live and says why', async function () {
    await createBoundPvc(target, 'alice', 'no-snapshots-here');
    const [result] = await backupVolumes(target.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'no-snapshots-here' }], snapshots: { namespace: MODEL } });
    expect(result!.copy).to.deep.equal({ from: 'live', pointInTime: false, reason: 'the cluster serves no VolumeSnapshotClasses' });
  });

  it('through the run\'s gateway: each profile namespace\'s mover runs in the model\'s namespace with that namespace\'s access only, none in the profiles', async function () {
    const gateway = { namespace: MODEL, image: 'docker.io/rclone/rclone:1.68.2', imageSetting: 'control-plane-rclone-image' };
    const pvcs = [{ namespace: 'alice', name: 'via-gateway' }, { namespace: 'bob', name: 'via-gateway' }];
    for (const p of pvcs) appendFileSync(join(await createBoundPvc(source, p.namespace, p.name), 'notes.md'), `# ${p.namespace}\n`);
    const inProfiles: string[] = [];
    const modelSecrets = new Set<string>();
    const stopWatching = source.cluster.api.subscribe((e) => {
      if (e.type !== 'ADDED' || !['jobs', 'pods', 'secrets'].includes(e.ref.resource)) return;
      if (['alice', 'bob'].includes(e.object.metadata.namespace ?? '')) inProfiles.push(`${e.object.metadata.namespace}/${e.ref.resource}/${e.object.metadata.name}`);
      if (e.object.metadata.namespace === MODEL && e.ref.resource === 'secrets' && e.object.metadata.name?.includes('-creds-')) modelSecrets.add(e.object.metadata.name);
    });
    const backupId = newBackupId();
    const settings = s3For(s3, 'kf-backups');
    const results = await backupVolumes(source.kube, { backupId, s3: settings, pvcs, gateway, snapshots: { namespace: MODEL } }).finally(stopWatching);
    expect(results.map((r) => [r.namespace, r.copy?.from, r.files])).to.have.deep.members([['alice', 'snapshot', 1], ['bob', 'snapshot', 1]]);
    expect(inProfiles).to.deep.equal([]);
    expect(modelSecrets.size, 'one mover Secret per profile namespace, in the model\'s namespace').to.equal(2);
    expect(leftovers(source)).to.deep.equal(NOTHING);
    for (const p of pvcs) target.cluster.api.create(PVC_REF, pvc(p.namespace, p.name));
    await restoreVolumes(target.kube, { backupId, s3: settings, pvcs });
    for (const p of pvcs) expect(readFileSync(join(target.kubelet.volumePath(p.namespace, p.name), 'notes.md'), 'utf8')).to.equal(`# ${p.namespace}\n`);
  });

  it('restic: a PVC read from its snapshot is stored in its profile namespace\'s repository, and restores as it was', async function () {
    const password = (namespace: string) => namespacePassword('snapshot test key', namespace);
    const folder = await createBoundPvc(source, 'bob', 'experiments');
    appendFileSync(join(folder, 'run.json'), '{"epoch":1}');
    const backupId = newBackupId();
    const settings = s3For(s3, 'kf-backups');
    const [result] = await backupVolumes(source.kube, { backupId, s3: settings, engine: 'restic', restic: { password }, pvcs: [{ namespace: 'bob', name: 'experiments' }], snapshots: { namespace: MODEL } });
    expect(result!.copy?.from).to.equal('snapshot');
    expect(result!.restic!.repository).to.equal('kubeflow/restic/bob');
    expect(leftovers(source)).to.deep.equal(NOTHING);
    target.cluster.api.create(PVC_REF, pvc('bob', 'experiments'));
    await restoreVolumes(target.kube, {
      backupId, s3: settings, engine: 'restic', pvcs: [{ namespace: 'bob', name: 'experiments' }],
      restic: { password, snapshots: new Map([['bob/experiments', result!.restic!.snapshot]]) },
    });
    expect(readFileSync(join(target.kubelet.volumePath('bob', 'experiments'), 'run.json'), 'utf8')).to.equal('{"epoch":1}');
  });

  for (const crash of [
    { at: 'the snapshot of the PVC is ready', sameId: true, sign: (e: { type: string; object: KubeObject }) => e.object.metadata.namespace === 'alice' && (e.object.status as { readyToUse?: boolean } | undefined)?.readyToUse === true, resource: 'volumesnapshots' },
    { at: 'the snapshot is exposed in the model\'s namespace', sameId: false, sign: (e: { type: string; object: KubeObject }) => e.object.metadata.namespace === MODEL && e.type === 'ADDED', resource: 'persistentvolumeclaims' },
  ]) {
    it(`converges when the run is killed once ${crash.at}: the rerun (${crash.sameId ? 'same' : 'a new'} backup id) removes what it left, and leaves nothing`, async function () {
      const name = `models-${crash.resource.length}`;
      const folder = await createBoundPvc(source, 'alice', name);
      appendFileSync(join(folder, 'weights.bin'), 'v1');
      const backupId = newBackupId();
      const settings = s3For(s3, 'kf-backups');
      // the run goes on normally until the sign, then dies: from then on it deletes nothing, and its waits end
      const dying = new AbortController();
      const dead: VolumeKube = { ...source.kube, delete: (...args) => (dying.signal.aborted ? Promise.resolve() : source.kube.delete(...args)) };
      const killed = until(source, crash.resource, (e) => (crash.sign(e) ? true : undefined));
      const first = backupVolumes(dead, { backupId, s3: settings, pvcs: [{ namespace: 'alice', name }], snapshots: { namespace: MODEL }, signal: dying.signal });
      await killed;
      dying.abort();
      await first.then(() => expect.fail('the killed run finished'), () => undefined);
      const left = leftovers(source);
      expect(left.volumeSnapshots, 'the dead run left its snapshot').to.have.length.greaterThan(0);
      expect(left.driverSnapshots, 'and the provider\'s snapshot').to.have.length(1);

      const [result] = await backupVolumes(source.kube, { backupId: crash.sameId ? backupId : newBackupId(), s3: settings, pvcs: [{ namespace: 'alice', name }], snapshots: { namespace: MODEL } });
      expect(result!.copy?.from).to.equal('snapshot');
      expect(result!.files).to.equal(1);
      expect(leftovers(source)).to.deep.equal(NOTHING);
      expect(source.cluster.api.list({ group: 'batch', resource: 'jobs' }, { namespace: MODEL }).filter((j) => !j.metadata.deletionTimestamp), 'no mover Job stays').to.deep.equal([]);
    });
  }
});
