import { expect } from 'chai';
import { restorable, restorableView } from '../../src/restore/normalize.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const notebook: KubeObject = {
  apiVersion: 'kubeflow.org/v1', kind: 'Notebook',
  metadata: {
    name: 'nb', namespace: 'alice', uid: 'u1', resourceVersion: '7', generation: 2, creationTimestamp: '2026-01-01T00:00:00Z',
    generateName: 'nb-', managedFields: [{ manager: 'x' }], labels: { app: 'nb' },
    ownerReferences: [
      { apiVersion: 'v1', kind: 'Secret', name: 'keep', uid: 'o1' },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'drop', uid: 'o2', controller: true },
    ],
  },
  spec: { template: { spec: { containers: [{ name: 'nb', image: 'jupyter' }] } } },
  status: { readyReplicas: 1 },
};

const pvc: KubeObject = {
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'alice', uid: 'u2', annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'volume.kubernetes.io/selected-node': 'n1' } },
  spec: { volumeName: 'pv-123', resources: { requests: { storage: '1Gi' } } },
  status: { phase: 'Bound' },
};

const token: KubeObject = {
  apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token',
  metadata: { name: 'ci-token', namespace: 'alice', uid: 'u3', annotations: { 'kubernetes.io/service-account.name': 'ci', 'kubernetes.io/service-account.uid': 'sa-uid-of-the-source' } },
  data: { token: 'ZXlK', 'ca.crt': 'LS0t', namespace: 'YWxpY2U=' },
};

describe('restorable objects', () => {
  for (const object of [notebook, pvc, token]) {
    it(`restorableView of a ${object.kind} holds what restorable holds, and leaves the archived object untouched`, () => {
      const before = structuredClone(object);
      const view = restorableView(object);
      expect(view).to.deep.equal(restorable(object));
      expect(object).to.deep.equal(before);
    });
  }

  it('writes a token Secret without its data and without the source ServiceAccount\'s uid, for the token controller to fill', () => {
    expect(restorable(token)).to.deep.equal({
      apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token',
      metadata: { name: 'ci-token', namespace: 'alice', annotations: { 'kubernetes.io/service-account.name': 'ci' } },
    });
  });

  it('strips server fields, status, controller owners and a PVC binding', () => {
    expect(restorable(notebook).metadata).to.deep.equal({
      name: 'nb', namespace: 'alice', labels: { app: 'nb' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 'keep', uid: 'o1' }],
    });
    expect(restorable(notebook)).to.not.have.property('status');
    const claim = restorable(pvc);
    expect(claim.spec).to.deep.equal({ resources: { requests: { storage: '1Gi' } } });
    expect(claim.metadata).to.deep.equal({ name: 'data', namespace: 'alice' });
  });
});
