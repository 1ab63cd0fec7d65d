// LimitRanger's validation of new Pods (kubernetes/kubernetes plugin/pkg/admission/limitranger/admission.go,
// PodValidateLimitFunc; its cases in admission_test.go, TestPodLimitFunc), after its defaults and before the quota.
import { expect } from 'chai';
import { Cluster } from './cluster.ts';
import type { KubeObject } from '../../../src/kube/types.ts';

const PODS = { group: '', resource: 'pods' };
const LIMIT_RANGES = { group: '', resource: 'limitranges' };

function refused(f: () => unknown): { code: number; message: string } {
  try {
    f();
  } catch (e) {
    return { code: (e as { status: number }).status, message: (e as Error).message };
  }
  throw new Error('expected the server to refuse');
}

function pod(name: string, resources: Record<string, unknown> | undefined, init?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'a' },
    spec: {
      containers: [{ name: 'c', image: 'busybox', ...(resources ? { resources } : {}) }],
      ...(init ? { initContainers: [{ name: 'i', image: 'busybox', resources: init }] } : {}),
    },
  } as KubeObject;
}

describe('embedded API server: LimitRange min, max and ratio on Pod create', () => {
  let cluster: Cluster;
  const limits = (items: unknown[]) => cluster.create(LIMIT_RANGES, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr', namespace: 'a' }, spec: { limits: items } } as KubeObject);

  beforeEach(() => {
    cluster = new Cluster();
    cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  });

  it('refuses a container below the minimum or above the maximum, with 403 and the real sentences', () => {
    limits([{ type: 'Container', min: { cpu: '100m' }, max: { memory: '1Gi' }, default: { memory: '512Mi' } }]);
    expect(refused(() => cluster.create(PODS, pod('low', { requests: { cpu: '50m' } })))).to.deep.equal({
      code: 403, message: 'pods "low" is forbidden: minimum cpu usage per Container is 100m, but request is 50m',
    });
    expect(refused(() => cluster.create(PODS, pod('high', { requests: { cpu: '200m' }, limits: { memory: '2Gi' } })))).to.deep.equal({
      code: 403, message: 'pods "high" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi',
    });
    // the defaults come first: a container without a memory limit gets 512Mi and passes the maximum
    const made = cluster.create(PODS, pod('ok', { requests: { cpu: '100m' } }));
    expect((made.spec as { containers: Array<{ resources: unknown }> }).containers[0]!.resources).to.deep.equal({ requests: { cpu: '100m', memory: '512Mi' }, limits: { memory: '512Mi' } });
  });

  it('names every broken rule at once, init containers included', () => {
    limits([{ type: 'Container', min: { cpu: '100m', memory: '64Mi' }, defaultRequest: {}, default: {} }]);
    expect(refused(() => cluster.create(PODS, pod('p', { requests: { cpu: '10m', memory: '64Mi' } }, { requests: { cpu: '100m', memory: '32Mi' } }))).message).to.equal(
      'pods "p" is forbidden: [minimum cpu usage per Container is 100m, but request is 10m, minimum memory usage per Container is 64Mi, but request is 32Mi]');
  });

  it('refuses a limit-to-request ratio above maxLimitRequestRatio, and a container with no limit under it', () => {
    limits([{ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }]);
    expect(refused(() => cluster.create(PODS, pod('r', { requests: { cpu: '100m' }, limits: { cpu: '500m' } }))).message)
      .to.equal('pods "r" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000');
    expect(refused(() => cluster.create(PODS, pod('n', { requests: { cpu: '100m' } }))).message)
      .to.equal('pods "n" is forbidden: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0');
    cluster.create(PODS, pod('fine', { requests: { cpu: '100m' }, limits: { cpu: '200m' } }));
  });

  it('holds a Pod item against the Pod\'s totals', () => {
    limits([{ type: 'Pod', max: { cpu: '1' } }]);
    const twoContainers = pod('sum', undefined);
    (twoContainers.spec as { containers: unknown[] }).containers = [
      { name: 'a', image: 'busybox', resources: { limits: { cpu: '600m' } } },
      { name: 'b', image: 'busybox', resources: { limits: { cpu: '600m' } } },
    ];
    expect(refused(() => cluster.create(PODS, twoContainers)).message).to.match(/^pods "sum" is forbidden: maximum cpu usage per Pod is 1, but limit is 1\.2/);
  });
});
