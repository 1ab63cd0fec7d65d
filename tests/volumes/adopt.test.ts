// What a run takes as its mover Job (src/volumes/adopt.ts): the Job it created or adopted, pinned by UID, and only the
// Pods whose controller reference is that UID. A Job put under the same name later, or a Pod that merely carries the
// `job-name` label (anyone who may create Pods in the namespace can set it), is not read.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { podsOf, startOrAdopt, stillPinned } from '../../src/volumes/adopt.ts';
import type { VolumeKube } from '../../src/volumes/kube-port.ts';

const job = (uid: string): KubeObject => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'kfu-restore-x', namespace: 'alice', uid }, status: {} });
const pod = (name: string, ownerUid: string | undefined): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'alice', labels: { 'job-name': 'kfu-restore-x' }, ...(ownerUid ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'kfu-restore-x', uid: ownerUid, controller: true }] } : {}) },
});

function fakeKube(objects: { job?: KubeObject; pods?: KubeObject[]; createdUid?: string }): VolumeKube {
  return {
    get: async () => objects.job,
    list: async () => objects.pods ?? [],
    create: async (_r, o) => ({ ...o, metadata: { ...o.metadata, uid: objects.createdUid ?? 'new-uid' } }),
    mergePatch: async () => ({} as KubeObject),
    podLog: async () => '',
    delete: async () => undefined,
    waitFor: async () => undefined,
  };
}

describe('volumes: the mover Job a run pins', () => {
  it('pins the UID of the Job it creates, or of the running one it adopts', async () => {
    expect(await startOrAdopt(fakeKube({ createdUid: 'u1' }), job(''), undefined)).to.deep.equal({ how: 'created', name: 'kfu-restore-x', uid: 'u1' });
    expect(await startOrAdopt(fakeKube({ job: job('u0') }), job(''), undefined)).to.deep.equal({ how: 'adopted', name: 'kfu-restore-x', uid: 'u0' });
  });

  it('refuses a finished Job of another UID under the same name', () => {
    expect(() => stillPinned(job('forged'), { how: 'created', name: 'kfu-restore-x', uid: 'u1' }, 'mover Job')).to.throw('its mover Job kfu-restore-x was replaced by another Job of the same name before it finished, so its result was not read');
    expect(stillPinned(job('u1'), { how: 'created', name: 'kfu-restore-x', uid: 'u1' }, 'mover Job').metadata.uid).to.equal('u1');
  });

  it('reads only the Pods the pinned Job controls', async () => {
    const pods = [pod('ours', 'u1'), pod('labelled-only', undefined), pod('owned-by-another', 'u2')];
    const read = await podsOf(fakeKube({ pods }), 'alice', { how: 'created', name: 'kfu-restore-x', uid: 'u1' });
    expect(read.map((p) => p.metadata.name)).to.deep.equal(['ours']);
  });
});
