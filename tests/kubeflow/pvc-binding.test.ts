import { expect } from 'chai';
import { withoutVolumeBinding } from '../../src/kubeflow/pvc-binding.ts';
import { boundPvc } from '../archive/sample-objects.ts';

describe('a PVC without its binding to the source cluster', () => {
  it('loses spec.volumeName and the binding annotations, keeps everything else, and leaves the input untouched', () => {
    const pvc = boundPvc('alice', 'workspace');
    const before = structuredClone(pvc);
    const unbound = withoutVolumeBinding(pvc);
    expect(pvc).to.deep.equal(before);
    expect(unbound.spec).to.deep.equal({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard' });
    expect(unbound.metadata).to.deep.equal({ name: 'workspace', namespace: 'alice', annotations: { note: 'kept' } });
  });

  it('drops the annotations field when only binding annotations were there', () => {
    const pvc = boundPvc('alice', 'workspace');
    pvc.metadata.annotations = { 'volume.kubernetes.io/selected-node': 'node-1', 'volume.kubernetes.io/storage-provisioner': 'rancher.io/local-path' };
    expect(withoutVolumeBinding(pvc).metadata).to.not.have.property('annotations');
  });
});
