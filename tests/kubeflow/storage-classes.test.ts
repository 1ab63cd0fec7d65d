import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { parseStorageClassMap, withMappedStorageClass } from '../../src/kubeflow/storage-classes.ts';

const pvc = (storageClassName?: string): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'alice' },
  spec: { ...(storageClassName === undefined ? {} : { storageClassName }), resources: { requests: { storage: '1Gi' } } },
});

describe('storage-class-map', () => {
  it('reads old=new pairs as Velero\'s change-storage-class does, and maps only the classes it names', () => {
    const map = parseStorageClassMap(' microk8s-hostpath=ceph-rbd , standard=fast.example.com');
    expect([...map]).to.deep.equal([['microk8s-hostpath', 'ceph-rbd'], ['standard', 'fast.example.com']]);
    expect((withMappedStorageClass(pvc('standard'), map).spec as { storageClassName: string }).storageClassName).to.equal('fast.example.com');
    const other = pvc('gold');
    expect(withMappedStorageClass(other, map)).to.equal(other);
    // no class: the target's default class applies, as on the source
    const none = pvc();
    expect(withMappedStorageClass(none, map)).to.equal(none);
    expect(parseStorageClassMap('')).to.have.property('size', 0);
  });

  it('refuses what it cannot read, in one sentence naming the entry', () => {
    expect(() => parseStorageClassMap('standard')).to.throw('storage-class-map: "standard" is not old=new with two storage class names (write e.g. microk8s-hostpath=ceph-rbd,standard=fast).');
    expect(() => parseStorageClassMap('a=b=c')).to.throw(/"a=b=c" is not old=new/);
    expect(() => parseStorageClassMap('Fast=slow')).to.throw(/"Fast=slow" is not old=new/);
    expect(() => parseStorageClassMap('a=b,a=c')).to.throw('storage-class-map: storage class a is mapped twice.');
  });
});
