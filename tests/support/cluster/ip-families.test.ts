// A Service's IP families on the embedded API server, single-stack (the default) and dual-stack, with the real
// server's sentences (kubernetes/kubernetes pkg/registry/core/service/storage/alloc.go initIPFamilyFields;
// pkg/apis/core/validation/validation.go ValidateServiceClusterIPsRelatedFields).
import { expect } from 'chai';
import type { KubeObject } from '../../../src/kube/types.ts';
import { Cluster } from './cluster.ts';
import { DEFAULT_NETWORK, DUAL_STACK_IPV6_RANGE } from './services.ts';

const SERVICES = { group: '', resource: 'services' };

function refused(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected the API server to refuse the Service');
}

interface Spec { clusterIP?: string; clusterIPs?: string[]; ipFamilies?: string[]; ipFamilyPolicy?: string }
const specOf = (o: KubeObject) => o.spec as Spec;

function clusterOf(dualStack: boolean): Cluster {
  const cluster = new Cluster({ serviceNetwork: dualStack ? { ...DEFAULT_NETWORK, secondaryServiceCidr: DUAL_STACK_IPV6_RANGE } : DEFAULT_NETWORK });
  cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  return cluster;
}

const service = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'a' },
  spec: { selector: { app: name }, ports: [{ port: 80, protocol: 'TCP' }], ...spec },
} as KubeObject);

describe('embedded API server: Service IP families on a single-stack IPv4 cluster', () => {
  let cluster: Cluster;
  beforeEach(() => { cluster = clusterOf(false); });

  it('refuses RequireDualStack over both families with both sentences', () => {
    expect(refused(() => cluster.create(SERVICES, service('s', { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] }))))
      .to.equal('Service "s" is invalid: [spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services, spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster]');
    expect(refused(() => cluster.create(SERVICES, service('s', { ipFamilyPolicy: 'RequireDualStack' }))))
      .to.equal('Service "s" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');
  });

  it('refuses PreferDualStack that names IPv6, and makes one without families single-stack', () => {
    expect(refused(() => cluster.create(SERVICES, service('s', { ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'] }))))
      .to.equal('Service "s" is invalid: spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster');
    const made = specOf(cluster.create(SERVICES, service('p', { ipFamilyPolicy: 'PreferDualStack' })));
    expect(made.ipFamilies).to.deep.equal(['IPv4']);
    expect(made.clusterIPs).to.have.length(1);
    expect(made.ipFamilyPolicy).to.equal('PreferDualStack');
  });

  it('defaults SingleStack and IPv4, and refuses SingleStack over two families, an unknown policy, a repeated family and an IPv6 address', () => {
    const plain = specOf(cluster.create(SERVICES, service('plain', {})));
    expect([plain.ipFamilyPolicy, plain.ipFamilies]).to.deep.equal(['SingleStack', ['IPv4']]);
    expect(refused(() => cluster.create(SERVICES, service('s', { ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4', 'IPv6'] }))))
      .to.equal('Service "s" is invalid: spec.ipFamilyPolicy: Invalid value: "SingleStack": must be \'RequireDualStack\' or \'PreferDualStack\' when multiple IP families are specified');
    expect(refused(() => cluster.create(SERVICES, service('s', { ipFamilyPolicy: 'DualStack' }))))
      .to.equal('Service "s" is invalid: spec.ipFamilyPolicy: Unsupported value: "DualStack": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"');
    expect(refused(() => cluster.create(SERVICES, service('s', { ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv4'] }))))
      .to.equal('Service "s" is invalid: spec.ipFamilies[1]: Duplicate value: "IPv4"');
    expect(refused(() => cluster.create(SERVICES, service('s', { clusterIP: 'fd00:10:152::20' }))))
      .to.equal('Service "s" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00:10:152::20"}: IPv6 is not configured on this cluster');
  });

  it('takes a headless Service without a selector over both families (alloc.go\'s special case)', () => {
    const headless = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'h', namespace: 'a' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } } as KubeObject;
    const made = specOf(cluster.create(SERVICES, headless));
    expect([made.ipFamilyPolicy, made.ipFamilies, made.clusterIPs]).to.deep.equal(['RequireDualStack', ['IPv4', 'IPv6'], ['None']]);
  });
});

describe('embedded API server: Service IP families on a dual-stack cluster (IPv4 primary)', () => {
  let cluster: Cluster;
  beforeEach(() => { cluster = clusterOf(true); });

  it('gives PreferDualStack and RequireDualStack an address of each family, the asked-for family first', () => {
    const prefer = specOf(cluster.create(SERVICES, service('p', { ipFamilyPolicy: 'PreferDualStack' })));
    expect(prefer.ipFamilies).to.deep.equal(['IPv4', 'IPv6']);
    expect(prefer.clusterIPs![0]).to.match(/^10\.152\.\d+\.\d+$/);
    expect(prefer.clusterIPs![1]).to.match(/^fd00:10:152::[0-9a-f]{1,4}$/);
    const require = specOf(cluster.create(SERVICES, service('r', { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv6'] })));
    expect(require.ipFamilies).to.deep.equal(['IPv6', 'IPv4']);
    expect(require.clusterIP).to.equal(require.clusterIPs![0]);
    expect(require.clusterIPs![0]).to.match(/^fd00:10:152::/);
  });

  it('keeps a Service without a policy single-stack, and refuses an IPv6 address another Service holds', () => {
    const plain = specOf(cluster.create(SERVICES, service('plain', {})));
    expect([plain.ipFamilyPolicy, plain.ipFamilies, plain.clusterIPs!.length]).to.deep.equal(['SingleStack', ['IPv4'], 1]);
    const first = specOf(cluster.create(SERVICES, service('six', { ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv6'] }))).clusterIP!;
    expect(refused(() => cluster.create(SERVICES, service('again', { clusterIP: first }))))
      .to.equal(`Service "again" is invalid: spec.clusterIPs: Invalid value: []string{"${first}"}: failed to allocate IP ${first}: provided IP is already allocated`);
  });
});

describe('embedded API server: ValidateService on what a restore sends', () => {
  let cluster: Cluster;
  beforeEach(() => { cluster = clusterOf(false); });
  const spec = (s: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'a' }, spec: s } as KubeObject);

  it('refuses a Service without ports unless it is headless or ExternalName', () => {
    expect(refused(() => cluster.create(SERVICES, spec({ selector: { app: 's' } })))).to.equal('Service "s" is invalid: spec.ports: Required value');
    expect(specOf(cluster.create(SERVICES, spec({ clusterIP: 'None', selector: { app: 's' } }))).clusterIPs).to.deep.equal(['None']);
  });

  it('refuses an ExternalName Service without its name, and a type of no kind', () => {
    expect(refused(() => cluster.create(SERVICES, spec({ type: 'ExternalName' })))).to.equal('Service "s" is invalid: spec.externalName: Required value');
    expect(refused(() => cluster.create(SERVICES, spec({ type: 'Internal', ports: [{ port: 80 }] }))))
      .to.equal('Service "s" is invalid: spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"');
  });

  it('wants a name on every port of several, never the same twice, and a port number of 1-65535', () => {
    expect(refused(() => cluster.create(SERVICES, spec({ selector: { app: 's' }, ports: [{ name: 'http', port: 80 }, { port: 443 }] }))))
      .to.equal('Service "s" is invalid: spec.ports[1].name: Required value');
    expect(refused(() => cluster.create(SERVICES, spec({ selector: { app: 's' }, ports: [{ name: 'http', port: 80 }, { name: 'http', port: 8080 }] }))))
      .to.equal('Service "s" is invalid: spec.ports[1].name: Duplicate value: "http"');
    expect(refused(() => cluster.create(SERVICES, spec({ selector: { app: 's' }, ports: [{ port: 70000 }] }))))
      .to.equal('Service "s" is invalid: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive');
  });
});
