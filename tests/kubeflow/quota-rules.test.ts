// What a quota counts of a restored object (src/kubeflow/quota-rules.ts), one row per case, against the names
// kube-apiserver's evaluators use (kubernetes/kubernetes pkg/quota/v1/evaluator/core/persistent_volume_claims.go,
// services.go, registry.go; staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go), written out here.
import { expect } from 'chai';
import { mayExceedQuota, namespaceQuotaLimits, quotaCounts, quotaUsage } from '../../src/kubeflow/quota-rules.ts';
import { formatQuantity } from '../../src/kube/quantity.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const object = (kind: string, spec: object = {}): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name: 'x', namespace: 'a' }, spec });

const counted: Array<{ case: string; group: string; resource: string; name: string; counts: boolean }> = [
  { case: 'claims by the legacy name', group: '', resource: 'persistentvolumeclaims', name: 'persistentvolumeclaims', counts: true },
  { case: 'claims by their storage', group: '', resource: 'persistentvolumeclaims', name: 'requests.storage', counts: true },
  { case: 'claims of a storage class', group: '', resource: 'persistentvolumeclaims', name: 'gold.storageclass.storage.k8s.io/requests.storage', counts: true },
  { case: 'Services by node ports', group: '', resource: 'services', name: 'services.nodeports', counts: true },
  { case: 'ConfigMaps by count/', group: '', resource: 'configmaps', name: 'count/configmaps', counts: true },
  { case: 'ConfigMaps by the legacy name', group: '', resource: 'configmaps', name: 'configmaps', counts: true },
  { case: 'Deployments by count/<resource>.<group>', group: 'apps', resource: 'deployments', name: 'count/deployments.apps', counts: true },
  { case: 'Notebooks by count/<resource>.<group>', group: 'kubeflow.org', resource: 'notebooks', name: 'count/notebooks.kubeflow.org', counts: true },
  { case: 'Notebooks are not Pods', group: 'kubeflow.org', resource: 'notebooks', name: 'pods', counts: false },
  { case: 'cpu counts no restored kind', group: '', resource: 'persistentvolumeclaims', name: 'requests.cpu', counts: false },
  { case: 'Secrets have no requests.storage', group: '', resource: 'secrets', name: 'requests.storage', counts: false },
  { case: 'Deployments have no legacy name', group: 'apps', resource: 'deployments', name: 'deployments', counts: false },
];

describe('kubeflow: what a quota counts of a restored object', () => {
  for (const row of counted) {
    it(`${row.case}: ${row.name} ${row.counts ? 'counts' : 'does not count'} ${row.resource}`, () => {
      expect(quotaCounts(row.group, row.resource, row.name)).to.equal(row.counts);
    });
  }

  it('a claim charges its count, its storage in whole bytes and its storage class', () => {
    const usage = quotaUsage('', 'persistentvolumeclaims', object('PersistentVolumeClaim', { storageClassName: 'gold', resources: { requests: { storage: '1.5Gi' } } }));
    expect(Object.fromEntries([...usage].map(([k, q]) => [k, formatQuantity(q)]))).to.deep.equal({
      persistentvolumeclaims: '1', 'count/persistentvolumeclaims': '1', 'requests.storage': '1536Mi',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1', 'gold.storageclass.storage.k8s.io/requests.storage': '1536Mi',
    });
  });

  it('a LoadBalancer Service charges a load balancer and a node port per port', () => {
    const usage = quotaUsage('', 'services', object('Service', { type: 'LoadBalancer', ports: [{ port: 80 }, { port: 443 }] }));
    expect(Object.fromEntries([...usage].map(([k, q]) => [k, formatQuantity(q)]))).to.deep.equal({
      'count/services': '1', services: '1', 'services.nodeports': '2', 'services.loadbalancers': '1',
    });
  });

  it('takes a namespace\'s quotas from its Profile and the backup', () => {
    const profile = { ...object('Profile', { resourceQuotaSpec: { hard: { cpu: '4', 'requests.storage': '5Gi' } } }), metadata: { name: 'a' } };
    expect(namespaceQuotaLimits(profile, [object('ResourceQuota', { hard: { 'services.nodeports': '0' } })])).to.deep.equal([{ cpu: '4', 'requests.storage': '5Gi' }, { 'services.nodeports': '0' }]);
  });

  const claims = (...sizes: string[]) => sizes.map((size) => object('PersistentVolumeClaim', { resources: { requests: { storage: size } } }));
  const overflow: Array<{ case: string; limits: Array<Record<string, unknown>>; objects: KubeObject[]; order: boolean }> = [
    { case: 'claims that pass requests.storage together', limits: [{ 'requests.storage': '5Gi' }], objects: claims('2Gi', '2Gi', '2Gi'), order: true },
    { case: 'claims that fit requests.storage together', limits: [{ 'requests.storage': '6Gi' }], objects: claims('2Gi', '2Gi', '2Gi'), order: false },
    { case: 'more claims than persistentvolumeclaims allows', limits: [{ cpu: '4' }, { persistentvolumeclaims: '2' }], objects: claims('1Gi', '1Gi', '1Gi'), order: true },
    { case: 'a quota on cpu alone', limits: [{ cpu: '4', memory: '8Gi' }], objects: claims('100Gi'), order: false },
  ];
  for (const row of overflow) {
    it(`${row.case}: ${row.order ? 'written in order' : 'written in parallel'}`, () => {
      expect(mayExceedQuota(row.limits, '', 'persistentvolumeclaims', row.objects)).to.equal(row.order);
    });
  }
});
