// The dry run's forecast of quota and LimitRange admission (src/restore/admission-forecast.ts), one case per row. The
// expected sentences are kube-apiserver's, copied from upstream's format strings (kubernetes/kubernetes staging/src/
// k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go; plugin/pkg/admission/limitranger/admission.go),
// not derived from the product's rules.
import { expect } from 'chai';
import { AdmissionForecast } from '../../src/restore/admission-forecast.ts';
import type { RestoreKube } from '../../src/restore/kube-port.ts';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';

const resource = (group: string, name: string, kind: string): ApiResource => ({
  group, version: 'v1', resource: name, kind, namespaced: true, verbs: ['create', 'list'], preferredVersion: 'v1', versions: ['v1'],
});
const CLAIMS = resource('', 'persistentvolumeclaims', 'PersistentVolumeClaim');
const CONFIGMAPS = resource('', 'configmaps', 'ConfigMap');
const SERVICES = resource('', 'services', 'Service');
const QUOTAS = resource('', 'resourcequotas', 'ResourceQuota');
const LIMIT_RANGES = resource('', 'limitranges', 'LimitRange');

const claim = (name: string, storage: string, namespace = 'alice'): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
});
const profile = (name: string, hard?: Record<string, string>): KubeObject => ({
  apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: `${name}@example.com` }, ...(hard ? { resourceQuotaSpec: { hard } } : {}) },
});

/** a target that holds `live` quotas and LimitRanges; only what the forecast reads */
function target(live: KubeObject[] = []): RestoreKube {
  const byResource: Record<string, ApiResource> = { resourcequotas: QUOTAS, limitranges: LIMIT_RANGES };
  return {
    findByResource: async (_group: string, name: string) => byResource[name],
    listAll: async (r: ApiResource) => ({ items: live.filter((o) => o.kind === r.kind), resourceVersion: '1' }),
  } as unknown as RestoreKube;
}

/** admits each [resource, object] in order; the refusal or 'admitted' for each */
function run(forecast: AdmissionForecast, writes: Array<[ApiResource, KubeObject]>): string[] {
  return writes.map(([r, o]) => {
    const decision = forecast.admit(r, o);
    if (decision?.refusal !== undefined) return decision.refusal;
    if (r === QUOTAS || r === LIMIT_RANGES) forecast.adopt(r, o);
    return 'admitted';
  });
}

describe('restore: the dry run\'s forecast of quota and LimitRange admission', () => {
  it('a namespace the target lacks: the Profile\'s quota, summed over its claims in restore order', async () => {
    const forecast = await AdmissionForecast.open(target(), [profile('alice', { 'requests.storage': '5Gi' })], new Set(['alice']), new Set(['default']));
    expect(run(forecast, [[CLAIMS, claim('a', '2Gi')], [CLAIMS, claim('b', '2Gi')], [CLAIMS, claim('c', '2Gi')], [CLAIMS, claim('d', '1Gi')]])).to.deep.equal([
      'admitted', 'admitted',
      'persistentvolumeclaims "c" is forbidden: exceeded quota: kf-resource-quota, requested: requests.storage=2Gi, used: requests.storage=4Gi, limited: requests.storage=5Gi',
      'admitted',
    ]);
    expect(forecast.notes()).to.deep.equal([
      'alice: quota and LimitRange checks were predicted, not asked (the target does not have this namespace yet), against ResourceQuota kf-resource-quota (the Profile\'s resourceQuotaSpec, made by the profile controller); usage counts what this restore creates there, in restore order, not what controllers make',
    ]);
  });

  it('an archived LimitRange caps claims from the moment it would be created', async () => {
    const forecast = await AdmissionForecast.open(target(), [profile('alice')], new Set(['alice']), new Set(['default']));
    const limits: KubeObject = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'claims', namespace: 'alice' }, spec: { limits: [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '5Gi' } }] } };
    expect(run(forecast, [[CLAIMS, claim('before', '10Gi')], [LIMIT_RANGES, limits], [CLAIMS, claim('big', '10Gi')], [CLAIMS, claim('tiny', '500Mi')], [CLAIMS, claim('fits', '5Gi')]])).to.deep.equal([
      'admitted', 'admitted',
      'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 10Gi',
      'persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
      'admitted',
    ]);
  });

  it('an archived quota counts what the restore made there before it, and never evicts', async () => {
    const forecast = await AdmissionForecast.open(target(), [profile('alice')], new Set(['alice']), new Set(['default']));
    const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'alice' } });
    const quota: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'team', namespace: 'alice' }, spec: { hard: { configmaps: '1', 'services.nodeports': '0' } } };
    const nodePort: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'np', namespace: 'alice' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } };
    expect(run(forecast, [[CONFIGMAPS, cm('one')], [CONFIGMAPS, cm('two')], [QUOTAS, quota], [CONFIGMAPS, cm('three')], [SERVICES, nodePort]]).slice(3)).to.deep.equal([
      'configmaps "three" is forbidden: exceeded quota: team, requested: configmaps=1, used: configmaps=2, limited: configmaps=1',
      'services "np" is forbidden: exceeded quota: team, requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0',
    ]);
  });

  it('a namespace the target has: its quota\'s status.used, added up over the dry run\'s creates', async () => {
    const live: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'claims', namespace: 'bob' }, spec: { hard: { persistentvolumeclaims: '2' } }, status: { hard: { persistentvolumeclaims: '2' }, used: { persistentvolumeclaims: '1' } } };
    const forecast = await AdmissionForecast.open(target([live]), [profile('bob')], new Set(['bob']), new Set(['default', 'bob']));
    expect(run(forecast, [[CLAIMS, claim('x', '1Gi', 'bob')], [CLAIMS, claim('y', '1Gi', 'bob')]])).to.deep.equal([
      'admitted',
      'persistentvolumeclaims "y" is forbidden: exceeded quota: claims, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=2, limited: persistentvolumeclaims=2',
    ]);
    expect(forecast.notes()[0]).to.match(/^bob: quota and LimitRange checks were predicted, not asked, over this restore's creates in restore order, against ResourceQuota claims \(the target's, with its status\.used\)/);
  });

  it('a quota with scopes counts Pods only, and a namespace without quota or limits is not predicted', async () => {
    const scoped: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'best-effort', namespace: 'bob' }, spec: { hard: { persistentvolumeclaims: '0' }, scopes: ['BestEffort'] }, status: { hard: { persistentvolumeclaims: '0' }, used: { persistentvolumeclaims: '0' } } };
    const forecast = await AdmissionForecast.open(target([scoped]), [profile('alice'), profile('bob')], new Set(['alice', 'bob']), new Set(['default', 'bob']));
    expect(run(forecast, [[CLAIMS, claim('x', '1Gi', 'bob')], [CLAIMS, claim('y', '1Gi', 'alice')]])).to.deep.equal(['admitted', 'admitted']);
    expect(forecast.notes()).to.deep.equal([]);
  });

  it('gives back the charge of a create the target refused for another reason', async () => {
    const forecast = await AdmissionForecast.open(target(), [profile('alice', { persistentvolumeclaims: '1' })], new Set(['alice']), new Set(['default']));
    const first = forecast.admit(CLAIMS, claim('refused-by-schema', '1Gi'));
    if (first?.refusal === undefined) first?.undo();
    expect(forecast.admit(CLAIMS, claim('next', '1Gi'))?.refusal).to.equal(undefined);
  });
});
