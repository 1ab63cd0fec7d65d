// Probes of the embedded API server's ResourceQuota admission and quota controller (quota.ts, quota-controller.ts)
// and of LimitRanger on claims (limit-ranges.ts): each sends what a real kube-apiserver 1.30 refuses and expects the
// sentence upstream writes (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/
// controller.go: "exceeded quota: %s, requested: %s, used: %s, limited: %s", "status unknown for quota: %s,
// resources: %s"; plugin/pkg/admission/limitranger/admission.go: "maximum %s usage per %s is %s, but request is %s");
// admission.NewForbidden prefixes `<resource> "<name>" is forbidden: `. Tests wait on the quota's status, never on time.
import { expect } from 'chai';
import { Cluster } from './cluster.ts';
import { startQuotaController } from './quota-controller.ts';
import type { KubeObject } from '../../../src/kube/types.ts';

const QUOTAS = { group: '', resource: 'resourcequotas' };
const CLAIMS = { group: '', resource: 'persistentvolumeclaims' };
const SERVICES = { group: '', resource: 'services' };
const CONFIGMAPS = { group: '', resource: 'configmaps' };
const DEPLOYMENTS = { group: 'apps', resource: 'deployments' };
const LIMIT_RANGES = { group: '', resource: 'limitranges' };

function refusal(f: () => unknown): { code: number; message: string } {
  try {
    f();
  } catch (e) {
    return { code: (e as { status: number }).status, message: (e as Error).message };
  }
  throw new Error('expected the server to refuse');
}

const claim = (name: string, storage: string, storageClassName?: string): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'a' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...(storageClassName ? { storageClassName } : {}) },
});
const service = (name: string, type: string): KubeObject => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'a' },
  spec: { type, selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] },
});
const configMap = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'a' }, data: { k: 'v' } });

describe('embedded API server: ResourceQuota on every resource, and LimitRange on claims', () => {
  let cluster: Cluster;
  let stop: () => void;

  beforeEach(() => {
    cluster = new Cluster();
    stop = startQuotaController(cluster);
    cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  });
  afterEach(() => stop());

  /** resolves once the quota's status satisfies `ready` (the quota controller's write), checked on every change */
  function statusOf(name: string, ready: (status: { hard?: Record<string, string>; used?: Record<string, string> }) => boolean): Promise<{ hard?: Record<string, string>; used?: Record<string, string> }> {
    return new Promise((resolve) => {
      const check = () => {
        const status = (cluster.get(QUOTAS, name, 'a')?.status ?? {}) as { hard?: Record<string, string>; used?: Record<string, string> };
        if (status.used && ready(status)) {
          unsubscribe();
          resolve(status);
          return true;
        }
        return false;
      };
      const unsubscribe = cluster.subscribe(() => { check(); });
      check();
    });
  }

  async function quota(hard: Record<string, string>, name = 'q'): Promise<void> {
    cluster.create(QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace: 'a' }, spec: { hard } });
    await statusOf(name, () => true);
  }

  it('counts claims: a second claim past persistentvolumeclaims: "1" is refused with 403 and the upstream sentence', async () => {
    await quota({ persistentvolumeclaims: '1' });
    cluster.create(CLAIMS, claim('one', '1Gi'));
    expect(refusal(() => cluster.create(CLAIMS, claim('two', '1Gi')))).to.deep.equal({
      code: 403,
      message: 'persistentvolumeclaims "two" is forbidden: exceeded quota: q, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=1, limited: persistentvolumeclaims=1',
    });
  });

  it('sums requests.storage and keeps status.used as the controller and the admission plugin write it', async () => {
    await quota({ 'requests.storage': '3Gi' });
    cluster.create(CLAIMS, claim('one', '1536Mi'));
    expect((cluster.get(QUOTAS, 'q', 'a')!.status as { used: Record<string, string> }).used).to.deep.equal({ 'requests.storage': '1536Mi' });
    expect(refusal(() => cluster.create(CLAIMS, claim('two', '2Gi'))).message).to.equal(
      'persistentvolumeclaims "two" is forbidden: exceeded quota: q, requested: requests.storage=2Gi, used: requests.storage=1536Mi, limited: requests.storage=3Gi',
    );
  });

  it('charges a storage class its own requests.storage and persistentvolumeclaims', async () => {
    await quota({ 'gold.storageclass.storage.k8s.io/requests.storage': '1Gi', 'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '5' });
    cluster.create(CLAIMS, claim('other', '5Gi', 'standard'));
    expect(refusal(() => cluster.create(CLAIMS, claim('gold', '2Gi', 'gold'))).message).to.equal(
      'persistentvolumeclaims "gold" is forbidden: exceeded quota: q, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: gold.storageclass.storage.k8s.io/requests.storage=0, limited: gold.storageclass.storage.k8s.io/requests.storage=1Gi',
    );
  });

  it('counts node ports and load balancers of Services, not ClusterIP ones', async () => {
    await quota({ 'services.nodeports': '0', 'services.loadbalancers': '0' });
    cluster.create(SERVICES, service('plain', 'ClusterIP'));
    expect(refusal(() => cluster.create(SERVICES, service('np', 'NodePort'))).message).to.equal(
      'services "np" is forbidden: exceeded quota: q, requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0',
    );
    expect(refusal(() => cluster.create(SERVICES, service('lb', 'LoadBalancer'))).message).to.equal(
      'services "lb" is forbidden: exceeded quota: q, requested: services.loadbalancers=1,services.nodeports=1, used: services.loadbalancers=0,services.nodeports=0, limited: services.loadbalancers=0,services.nodeports=0',
    );
  });

  it('counts objects under count/<resource>.<group> and the legacy names', async () => {
    await quota({ 'count/deployments.apps': '0', configmaps: '1', 'count/configmaps': '1' });
    cluster.create(CONFIGMAPS, configMap('first'));
    expect(refusal(() => cluster.create(CONFIGMAPS, configMap('second'))).message).to.equal(
      'configmaps "second" is forbidden: exceeded quota: q, requested: configmaps=1,count/configmaps=1, used: configmaps=1,count/configmaps=1, limited: configmaps=1,count/configmaps=1',
    );
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'a' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
    expect(refusal(() => cluster.create(DEPLOYMENTS, deployment as KubeObject)).message).to.equal(
      'deployments.apps "web" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=0, limited: count/deployments.apps=0',
    );
  });

  it('counts a Pod\'s extended resources under requests.<name>, as a profile\'s GPU quota names them', async () => {
    await quota({ 'requests.nvidia.com/gpu': '1' });
    const pod = (name: string): KubeObject => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'a' },
      spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } } }] },
    });
    cluster.create({ group: '', resource: 'pods' }, pod('first'));
    expect(refusal(() => cluster.create({ group: '', resource: 'pods' }, pod('second'))).message).to.equal(
      'pods "second" is forbidden: exceeded quota: q, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1',
    );
  });

  it('never evicts: a quota below what the namespace holds shows it in status.used and refuses only what adds to it', async () => {
    cluster.create(CONFIGMAPS, configMap('one'));
    cluster.create(CONFIGMAPS, configMap('two'));
    await quota({ configmaps: '1' });
    expect(cluster.list(CONFIGMAPS, { namespace: 'a' })).to.have.length(2);
    expect((cluster.get(QUOTAS, 'q', 'a')!.status as { used: Record<string, string> }).used).to.deep.equal({ configmaps: '2' });
    expect(refusal(() => cluster.create(CONFIGMAPS, configMap('three'))).message).to.equal(
      'configmaps "three" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=1',
    );
  });

  it('gives back what a deleted object used, once the controller has replenished the quota', async () => {
    await quota({ persistentvolumeclaims: '1' });
    cluster.create(CLAIMS, claim('one', '1Gi'));
    cluster.delete(CLAIMS, 'one', 'a');
    await statusOf('q', (s) => s.used?.persistentvolumeclaims === '0');
    expect(cluster.create(CLAIMS, claim('two', '1Gi')).metadata.name).to.equal('two');
  });

  it('enforces nothing before the controller syncs a new quota, and answers "status unknown" while used lags hard', () => {
    cluster.create(QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'new', namespace: 'a' }, spec: { hard: { persistentvolumeclaims: '0' } } });
    // the same tick, before the controller's sync: upstream matches a quota by status.hard, which is still empty
    expect(cluster.create(CLAIMS, claim('early', '1Gi')).metadata.name).to.equal('early');
    const made = cluster.get(QUOTAS, 'new', 'a')!;
    cluster.updateStatus(QUOTAS, { ...made, status: { hard: { persistentvolumeclaims: '0', 'requests.storage': '10Gi' } } });
    expect(refusal(() => cluster.create(CLAIMS, claim('late', '1Gi')))).to.deep.equal({
      code: 403,
      message: 'persistentvolumeclaims "late" is forbidden: status unknown for quota: new, resources: persistentvolumeclaims,requests.storage',
    });
  });

  it('checks a dry run against the quota without charging it', async () => {
    await quota({ persistentvolumeclaims: '1' });
    cluster.create(CLAIMS, claim('one', '1Gi'), { dryRun: true });
    cluster.create(CLAIMS, claim('two', '1Gi'), { dryRun: true });
    expect((cluster.get(QUOTAS, 'q', 'a')!.status as { used: Record<string, string> }).used).to.deep.equal({ persistentvolumeclaims: '0' });
    cluster.create(CLAIMS, claim('real', '1Gi'));
    expect(refusal(() => cluster.create(CLAIMS, claim('late', '1Gi'), { dryRun: true })).message).to.match(/^persistentvolumeclaims "late" is forbidden: exceeded quota: q, /);
  });

  it('charges a claim resized on update for what it adds only', async () => {
    await quota({ 'requests.storage': '3Gi' });
    const created = cluster.create(CLAIMS, claim('grow', '1Gi'));
    // only a bound claim may grow (immutable.ts, ValidatePersistentVolumeClaimUpdate)
    const made = cluster.updateStatus(CLAIMS, { ...created, status: { phase: 'Bound' } });
    const grown = { ...made, spec: { ...(made.spec as object), resources: { requests: { storage: '5Gi' } } } };
    expect(refusal(() => cluster.update(CLAIMS, grown)).message).to.equal(
      'persistentvolumeclaims "grow" is forbidden: exceeded quota: q, requested: requests.storage=4Gi, used: requests.storage=1Gi, limited: requests.storage=3Gi',
    );
  });

  it('refuses a claim above a LimitRange max or below its min on requests.storage, with the upstream sentences', () => {
    cluster.create(LIMIT_RANGES, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'storage', namespace: 'a' }, spec: { limits: [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '2Gi' } }] } });
    expect(refusal(() => cluster.create(CLAIMS, claim('big', '5Gi')))).to.deep.equal({
      code: 403,
      message: 'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi',
    });
    expect(refusal(() => cluster.create(CLAIMS, claim('small', '500Mi'))).message).to.equal(
      'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
    );
    expect(cluster.create(CLAIMS, claim('fits', '1536Mi')).metadata.name).to.equal('fits');
  });
});
