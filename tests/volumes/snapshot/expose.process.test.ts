// A crash at any point of a snapshot's hand-over converges (src/volumes/snapshot/expose.ts, index.ts): the run is
// killed after its 1st, 2nd, ... write to the cluster (from then on it writes nothing, and its waits end), and the next
// run's sweep leaves nothing behind: no VolumeSnapshot anywhere, no content, no claim in the model's namespace, and no
// snapshot at the driver (none leaked, none deleted while a content still used it: the sweep would then hang or fail).
// The oracle is the simulated cluster's objects and its driver's snapshots (tests/support/kubelet/snapshots).
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { VolumeKube } from '../../../src/volumes/kube-port.ts';
import { PVCS } from '../../../src/volumes/kube-port.ts';
import { exposeSnapshot } from '../../../src/volumes/snapshot/expose.ts';
import { exposurePlan, sweepLeftovers } from '../../../src/volumes/snapshot/index.ts';
import { createBoundPvc, PVC_REF, startVolumeCluster, type VolumeCluster } from '../helpers.ts';

const MODEL = 'kubeflow';
const KEY = Buffer.alloc(32, 7);

/** A kube that dies after `limit` writes: later writes do nothing, and the signal it gives aborts every wait. */
function dyingAfter(kube: VolumeKube, limit: number): { kube: VolumeKube; signal: AbortSignal; died: () => boolean } {
  const dying = new AbortController();
  let writes = 0;
  const write = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    if (dying.signal.aborted) return undefined as R;
    const result = await call(...args);
    if (++writes >= limit) dying.abort();
    return result;
  };
  return {
    kube: { ...kube, create: write(kube.create), mergePatch: write(kube.mergePatch), delete: write(kube.delete) },
    signal: dying.signal,
    died: () => dying.signal.aborted,
  };
}

describe('volumes: a snapshot hand-over killed at any write', function () {
  this.timeout(300_000);
  let vc: VolumeCluster;
  before(async () => { vc = await startVolumeCluster({ snapshots: true }); });
  after(async () => { await vc?.stop(); });

  const nothingLeft = () => ({
    volumeSnapshots: vc.cluster.api.list({ group: 'snapshot.storage.k8s.io', resource: 'volumesnapshots' }).map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    contents: vc.cluster.api.list({ group: 'snapshot.storage.k8s.io', resource: 'volumesnapshotcontents' }).map((o) => o.metadata.name),
    modelClaims: vc.cluster.api.list(PVC_REF, { namespace: MODEL }).map((o) => o.metadata.name),
    driverSnapshots: vc.kubelet.snapshotHandles(),
  });

  it('converges after a kill at each write, and the hand-over that was not killed leaves exactly its claim', async () => {
    let limit = 1;
    for (;; limit++) {
      const name = `ws-${limit}`;
      const folder = await createBoundPvc(vc, 'alice', name);
      appendFileSync(join(folder, 'data.txt'), `run ${limit}\n`);
      const pvc = (await vc.kube.get(PVCS, 'alice', name))!;
      const plan = exposurePlan(KEY, `kf-crash-${limit}`, 'alice', name, MODEL);
      const dead = dyingAfter(vc.kube, limit);
      const outcome = await exposeSnapshot(dead.kube, plan, { className: 'csi-hostpath-snapclass', storageClass: 'standard' }, pvc, { timeoutMs: 20_000, signal: dead.signal })
        .then(() => 'exposed', (error: Error) => error.message);
      if (!dead.died()) {
        expect(outcome).to.equal('exposed');
        expect(nothingLeft().modelClaims, 'a hand-over that finished leaves its claim').to.deep.equal([plan.claim]);
      }
      const removed = await sweepLeftovers(vc.kube, KEY, MODEL, ['alice'], { timeoutMs: 20_000 });
      expect(nothingLeft(), `killed after write ${limit} (${outcome}), swept ${removed}`).to.deep.equal({ volumeSnapshots: [], contents: [], modelClaims: [], driverSnapshots: [] });
      if (!dead.died()) break;
    }
    expect(limit, 'the hand-over has this many writes to be killed after').to.be.greaterThan(8);
  });
});
