// The volume movers' scheduling, driven only through backupVolumes and restoreVolumes over the product's own
// volumeKubeFromClient, on the embedded cluster's in-process API with Jobs held running until the test ends them
// (tests/support/cluster/held-jobs.ts): how many run at once, where each is placed, what a held volume and a failure
// do. No container, HTTP or S3 server: the movers' copies, progress and faults stay with the process tier
// (round-trip.process.test.ts, failures.process.test.ts, pinned-job.process.test.ts).
//
// Expectations from upstream:
// - a ReadWriteOnce volume "can be mounted in read/write mode to exactly 1 host", a ReadWriteOncePod one "to exactly 1
//   pod" (kubernetes/kubernetes staging/src/k8s.io/api/core/v1/types.go, PersistentVolumeAccessMode): a second Pod
//   that mounts the first must run on the node where it is in use, and the second is refused outright
//   (pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go, ErrReasonReadWriteOncePodConflict);
// - the mover's result is what its container leaves as termination message (pkg/kubelet/kuberuntime/
//   kuberuntime_container.go): rclone's final stats, with the fields of rclone fs/accounting/stats.go (bytes,
//   transfers, checks, errors), under the mover script's `volumeMover: 2` envelope (src/volumes/job.ts MOVER_SCRIPT);
// - `volume-mover-concurrency` is the number of movers in flight at once (config.yaml).
import { expect } from 'chai';
import { backupVolumes, restoreVolumes, VolumeMoveError, volumeKubeFromClient, type VolumeKube } from '../../src/volumes/index.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { inProcessKubeflow, type InProcessKubeflow } from '../support/cluster/in-process-kubeflow.ts';
import { heldJobs, type HeldJobs } from '../support/cluster/held-jobs.ts';

const NS = 'alice';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const PODS = { group: '', resource: 'pods' };
const SECRETS = { group: '', resource: 'secrets' };
const s3 = { endpoint: 'https://s3.example.com', bucket: 'backups', path: 'kubeflow', region: 'us-east-1', accessKey: 'AKIDEXAMPLE', secretKey: 'in-process-secret-key' };
/** what a mover that copied `files` files of `bytes` bytes leaves as its termination message */
const copied = (files: number, bytes: number) => JSON.stringify({ volumeMover: 2, copy: { stats: { bytes, transfers: files, checks: 0, errors: 0 } } });

describe('volume movers in process: how many at once, where, and what stops them', function () {
  let cluster: InProcessKubeflow;
  let runner: HeldJobs;
  let kube: VolumeKube;

  /** a claim bound to a volume, as the PV controller leaves it (pkg/controller/volume/persistentvolume/pv_controller.go) */
  const boundClaim = (name: string, accessModes: string[] = ['ReadWriteOnce']) => {
    cluster.cluster.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS }, spec: { accessModes, resources: { requests: { storage: '1Gi' } } } });
    const claim = cluster.cluster.get(PVCS, name, NS)!;
    cluster.cluster.update(PVCS, { ...claim, spec: { ...(claim.spec as object), volumeName: `pv-${name}` } });
    const updated = cluster.cluster.get(PVCS, name, NS)!;
    cluster.cluster.updateStatus(PVCS, { ...updated, status: { phase: 'Bound', accessModes, capacity: { storage: '1Gi' } } });
  };
  /** a Pod the scheduler put on `node`, running and mounting `claim` */
  const userPod = (name: string, claim: string, node: string) => {
    cluster.cluster.create(PODS, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS },
      spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] },
    });
    const pod = cluster.cluster.get(PODS, name, NS)!;
    cluster.cluster.updateStatus(PODS, { ...pod, status: { phase: 'Running' } });
  };
  const moverSecrets = () => cluster.cluster.list(SECRETS, { namespace: NS, labelSelector: 'app.kubernetes.io/managed-by' }).filter((s) => s.metadata.name !== undefined && !s.metadata.name.startsWith('default'));

  beforeEach(async () => {
    cluster = await inProcessKubeflow({ controllers: false, seed: 44 });
    cluster.cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    runner = heldJobs(cluster.cluster, { nodes: ['node-a', 'node-b'] });
    // the product's own adapter from its kube seam to the movers' port, over the in-process client
    kube = volumeKubeFromClient(cluster.kube as unknown as KubeClient);
  });
  afterEach(() => {
    runner.stop();
    cluster.stop();
  });

  it('runs at most volume-mover-concurrency movers at once, starting the next only as one ends', async () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const name of names) boundClaim(name);
    const moving = backupVolumes(kube, { backupId: 'kf-20261208-000000-aaaaaa', pvcs: names.map((name) => ({ namespace: NS, name })), s3, concurrency: 2 });
    for (let ended = 0; ended < names.length; ended++) {
      // the sign: as many movers running as the limit allows (fewer once the PVCs run out)
      const running = await runner.until(() => { const now = runner.running(); return now.length === Math.min(2, names.length - ended) && now; });
      expect(runner.jobs.length, `movers started after ${ended} ended`).to.equal(Math.min(names.length, ended + 2));
      expect(moverSecrets(), 'one credentials Secret for the namespace while movers run').to.have.length(1);
      runner.finish(NS, running[0]!.name, { message: copied(3, 300), succeeded: true });
    }
    const results = await moving;
    expect(results.map((r) => r.pvc).sort()).to.deep.equal(names);
    expect(results.every((r) => r.files === 3 && r.bytes === 300)).to.equal(true);
    expect(runner.mostAtOnce).to.equal(2);
    expect(runner.jobs.map((j) => j.claims)).to.have.deep.members(names.map((name) => [name]));
    expect(moverSecrets(), 'the credentials Secret is deleted at the end').to.deep.equal([]);
  });

  it('puts the mover of a ReadWriteOnce volume in use on the node that uses it, and leaves the others free', async () => {
    boundClaim('home');
    boundClaim('shared', ['ReadWriteMany']);
    userPod('notebook-0', 'home', 'node-b');
    userPod('reader-0', 'shared', 'node-b');
    const moving = backupVolumes(kube, { backupId: 'kf-20261208-000000-bbbbbb', pvcs: [{ namespace: NS, name: 'home' }, { namespace: NS, name: 'shared' }], s3 });
    const [home, shared] = await runner.until(() => {
      const byClaim = (claim: string) => runner.jobs.find((j) => j.claims.includes(claim));
      return byClaim('home') && byClaim('shared') && [byClaim('home')!, byClaim('shared')!];
    });
    expect(home.node).to.equal('node-b');
    // a volume many nodes may mount is not pinned: the scheduler's first choice
    expect(shared.node).to.equal('node-a');
    for (const job of [home, shared]) runner.finish(NS, job.name, { message: copied(1, 10), succeeded: true });
    await moving;
  });

  it('does not start a mover for a ReadWriteOncePod volume a Pod holds, and names that Pod', async () => {
    boundClaim('exclusive', ['ReadWriteOncePod']);
    userPod('trainer-0', 'exclusive', 'node-a');
    // either sign ends the wait: the backup's answer, or a mover started (held by the runner, it would never end)
    const error = await Promise.race([
      backupVolumes(kube, { backupId: 'kf-20261208-000000-cccccc', pvcs: [{ namespace: NS, name: 'exclusive' }], s3 }).then(() => undefined, (caught: unknown) => caught),
      runner.until(() => runner.jobs.length > 0 && new Error(`a mover started on ${runner.jobs[0]!.node}`)),
    ]);
    expect(error).to.be.instanceOf(VolumeMoveError);
    expect((error as Error).message).to.include('exclusive').and.include('trainer-0');
    expect(runner.jobs).to.deep.equal([]);
    expect(moverSecrets()).to.deep.equal([]);
  });

  it('stops at the first failed mover: the PVCs not started get no mover, and the failure names the PVC and why', async () => {
    const names = ['first', 'second', 'third'];
    for (const name of names) cluster.cluster.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    const moving = restoreVolumes(kube, { backupId: 'kf-20261208-000000-dddddd', pvcs: names.map((name) => ({ namespace: NS, name })), s3, concurrency: 1 });
    const [first] = await runner.until(() => { const now = runner.running(); return now.length === 1 && now; });
    runner.finish(NS, first!.name, { message: 'ERROR : the bucket refused the read: AccessDenied', succeeded: false });
    let error: unknown;
    try {
      await moving;
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(VolumeMoveError);
    const failure = error as VolumeMoveError;
    expect(failure.failures.map((f) => `${f.namespace}/${f.pvc}`)).to.deep.equal([`${NS}/${first!.claims[0]}`]);
    expect(failure.message).to.include(first!.claims[0]).and.include('AccessDenied');
    expect(runner.jobs, 'no mover after the failure').to.have.length(1);
    expect(moverSecrets()).to.deep.equal([]);
  });
});

