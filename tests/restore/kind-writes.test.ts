// The behaviours the kinds table names, as the writer runs them: what a real create sends, and what follows it, for
// the kinds whose row asks more than a plain create. The API server is a fake that records the requests in order.
import { expect } from 'chai';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import { writeBehavioursOf } from '../../src/kubeflow/write-behaviours.ts';
import { afterCreate, finishInterruptedCreate, toCreate, type KindWriteContext } from '../../src/restore/kind-writes.ts';
import type { SpooledItem } from '../../src/restore/spool.ts';

const JOBS = { group: 'kubeflow.org', version: 'v1', resource: 'pytorchjobs', kind: 'PyTorchJob', namespaced: true } as ApiResource;
const EXPERIMENTS = { group: 'kubeflow.org', version: 'v1beta1', resource: 'experiments', kind: 'Experiment', namespaced: true } as ApiResource;
const PVCS = { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true } as ApiResource;
const finished = { conditions: [{ type: 'Succeeded', status: 'True' }], trials: 5 };

function context(requests: string[], mode: KindWriteContext['mode'] = 'write'): KindWriteContext {
  return {
    mode, fieldManager: 'test', storageClassMap: new Map([['old', 'new']]),
    kube: {
      patchStatus: async (_r: ApiResource, name: string) => { requests.push(`status ${name}`); return {} as KubeObject; },
      patch: async (_r: ApiResource, name: string, _ns: string, body: unknown) => { requests.push(`patch ${name} ${JSON.stringify(body)}`); return {} as KubeObject; },
    } as never,
    volumeFill: { withMarkIfFilled: (_r: ApiResource, o: KubeObject) => ({ ...o, metadata: { ...o.metadata, labels: { marked: 'yes' } } }) },
    ipFamilies: { adapt: async (_r: ApiResource, object: KubeObject) => ({ object }) },
    webhookWait: { write: (_name: string, send: () => Promise<unknown>) => send() } as never,
  };
}

const job: KubeObject = { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'train', namespace: 'alice' }, spec: { runPolicy: { cleanPodPolicy: 'None' } } };
const experiment: KubeObject = { apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'hp', namespace: 'alice' }, spec: { parallelTrialCount: 2 } };

describe('restore: the per-kind write behaviours', () => {
  it('a training job with a status is created suspended, its status written, then resumed with its own runPolicy', async () => {
    const requests: string[] = [];
    const item: SpooledItem = { uid: 'u1', object: job, status: finished };
    const b = writeBehavioursOf(job);
    const sent = toCreate(context(requests), b, item, JOBS, job);
    expect((sent.spec as { runPolicy: { suspend?: boolean } }).runPolicy.suspend).to.equal(true);
    expect(await afterCreate(context(requests), b, item, JOBS, job, sent, 'PyTorchJob/alice/train')).to.equal(undefined);
    expect(requests).to.deep.equal(['status train', 'patch train {"spec":{"runPolicy":{"suspend":null}}}']);
  });

  it('a training job without a status is created as archived and nothing follows', async () => {
    const requests: string[] = [];
    const item: SpooledItem = { uid: 'u1', object: job };
    const b = writeBehavioursOf(job);
    expect(toCreate(context(requests), b, item, JOBS, job)).to.equal(job);
    expect(await afterCreate(context(requests), b, item, JOBS, job, job, 'PyTorchJob/alice/train')).to.equal(undefined);
    expect(requests).to.deep.equal([]);
  });

  it('a finished Experiment without maxTrialCount is created pinned to the trials it ran, and gets its status', async () => {
    const requests: string[] = [];
    const item: SpooledItem = { uid: 'u2', object: experiment, status: finished };
    const b = writeBehavioursOf(experiment);
    const sent = toCreate(context(requests), b, item, EXPERIMENTS, experiment);
    expect((sent.spec as { maxTrialCount?: number }).maxTrialCount).to.equal(5);
    await afterCreate(context(requests), b, item, EXPERIMENTS, experiment, sent, 'Experiment/alice/hp');
    expect(requests).to.deep.equal(['status hp']);
  });

  it('a PVC is created with the fill mark the volume fill sets', () => {
    const pvc: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'alice' }, spec: {} };
    const sent = toCreate(context([]), writeBehavioursOf(pvc), { uid: undefined, object: pvc }, PVCS, pvc);
    expect(sent.metadata.labels).to.deep.equal({ marked: 'yes' });
  });

  it('a job an earlier restore left suspended is finished on a rerun; a dry run only says it would be', async () => {
    const requests: string[] = [];
    const item: SpooledItem = { uid: 'u1', object: job, status: finished };
    const live = { ...job, spec: { runPolicy: { cleanPodPolicy: 'None', suspend: true } } };
    const b = writeBehavioursOf(job);
    const planned = await finishInterruptedCreate(context(requests, 'dry-run'), b, item, JOBS, job, live, 'PyTorchJob/alice/train');
    expect(planned?.verdict).to.equal('update');
    expect(requests).to.deep.equal([]);
    const done = await finishInterruptedCreate(context(requests), b, item, JOBS, job, live, 'PyTorchJob/alice/train');
    expect(done).to.deep.equal({ verdict: 'update', reason: 'PyTorchJob/alice/train was left suspended by an earlier restore that stopped before resuming it: its status was written and it was resumed' });
    expect(requests).to.deep.equal(['status train', 'patch train {"spec":{"runPolicy":{"suspend":null}}}']);
  });
});
