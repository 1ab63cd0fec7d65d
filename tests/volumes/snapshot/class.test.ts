// Which VolumeSnapshotClass takes a PVC's snapshot (src/volumes/snapshot/class.ts), against the rules upstream states:
// the class's driver is the PVC's StorageClass's provisioner, and a driver's default is its one class annotated
// snapshot.storage.kubernetes.io/is-default-class (kubernetes-csi/external-snapshotter pkg/common-controller
// SetDefaultSnapshotClass: none, or more than one, is no default). Which objects exist is all the oracle knows.
import { expect } from 'chai';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { MoverResource, VolumeKube } from '../../../src/volumes/kube-port.ts';
import { snapshotClassFor } from '../../../src/volumes/snapshot/class.ts';

function kubeWith(objects: Record<string, KubeObject[]> | undefined): VolumeKube {
  const list = async (r: MoverResource) => {
    if (!objects) {
      if (r.resource === 'volumesnapshotclasses') throw Object.assign(new Error('the server could not find the requested resource'), { status: 404 });
      return [];
    }
    return objects[r.resource] ?? [];
  };
  const unused = () => { throw new Error('not used'); };
  return { list, get: unused, create: unused, mergePatch: unused, podLog: unused, delete: unused, waitFor: unused };
}

const storageClass = (name: string, provisioner: string, isDefault = false): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner,
  metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
} as KubeObject);
const snapshotClass = (name: string, driver: string, isDefault = false): KubeObject => ({
  apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', driver, deletionPolicy: 'Delete',
  metadata: { name, ...(isDefault ? { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } } : {}) },
} as KubeObject);
const claim = (storageClassName?: string): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'ws', namespace: 'alice' },
  spec: { accessModes: ['ReadWriteOnce'], ...(storageClassName ? { storageClassName } : {}) },
});

describe('volumes: the VolumeSnapshotClass of a PVC', () => {
  const storageclasses = [storageClass('ceph', 'rbd.csi.ceph.com', true), storageClass('nfs', 'nfs.csi.k8s.io')];

  it('takes the default class of the PVC\'s driver, through the default StorageClass when the PVC names none', async () => {
    const kube = kubeWith({ storageclasses, volumesnapshotclasses: [snapshotClass('other', 'rbd.csi.ceph.com'), snapshotClass('ceph-snap', 'rbd.csi.ceph.com', true), snapshotClass('nfs-default', 'nfs.csi.k8s.io', true)] });
    expect(await snapshotClassFor(kube, claim(), undefined)).to.deep.equal({ className: 'ceph-snap', driver: 'rbd.csi.ceph.com', storageClass: 'ceph' });
    expect(await snapshotClassFor(kube, claim('nfs'), undefined)).to.deep.equal({ className: 'nfs-default', driver: 'nfs.csi.k8s.io', storageClass: 'nfs' });
  });

  it('takes the configured class when it is the driver\'s, and the driver\'s default when it is another driver\'s', async () => {
    const kube = kubeWith({ storageclasses, volumesnapshotclasses: [snapshotClass('other', 'rbd.csi.ceph.com'), snapshotClass('ceph-snap', 'rbd.csi.ceph.com', true), snapshotClass('nfs-default', 'nfs.csi.k8s.io', true)] });
    expect(await snapshotClassFor(kube, claim('ceph'), 'other')).to.include({ className: 'other' });
    expect(await snapshotClassFor(kube, claim('nfs'), 'other')).to.include({ className: 'nfs-default' });
    expect(await snapshotClassFor(kube, claim('ceph'), 'missing')).to.deep.equal({ live: 'the VolumeSnapshotClass missing (volume-snapshot-class) does not exist' });
  });

  it('copies live, saying why, without a class of the driver, without one default, or without snapshots at all', async () => {
    expect(await snapshotClassFor(kubeWith({ storageclasses, volumesnapshotclasses: [snapshotClass('nfs-default', 'nfs.csi.k8s.io', true)] }), claim(), undefined))
      .to.deep.equal({ live: 'no VolumeSnapshotClass has driver rbd.csi.ceph.com' });
    expect(await snapshotClassFor(kubeWith({ storageclasses, volumesnapshotclasses: [snapshotClass('a', 'rbd.csi.ceph.com')] }), claim(), undefined))
      .to.deep.equal({ live: 'no VolumeSnapshotClass of driver rbd.csi.ceph.com is marked default; name one with volume-snapshot-class' });
    expect(await snapshotClassFor(kubeWith({ storageclasses, volumesnapshotclasses: [snapshotClass('a', 'rbd.csi.ceph.com', true), snapshotClass('b', 'rbd.csi.ceph.com', true)] }), claim(), undefined))
      .to.deep.equal({ live: '2 VolumeSnapshotClasses of driver rbd.csi.ceph.com are marked default; name one with volume-snapshot-class' });
    expect(await snapshotClassFor(kubeWith(undefined), claim(), undefined)).to.deep.equal({ live: 'the cluster serves no VolumeSnapshotClasses' });
    expect(await snapshotClassFor(kubeWith({ storageclasses, volumesnapshotclasses: [] }), claim('gone'), undefined)).to.deep.equal({ live: 'its StorageClass gone does not exist' });
  });
});
