// Service ClusterIP and nodePort allocation of the embedded API server, through the real client, with the real
// server's answers (kubernetes pkg/registry/core/service/storage/alloc.go, ipallocator, portallocator).
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startCluster, type RunningCluster } from './index.ts';
import { MICROK8S_NETWORK } from './services.ts';

function statusOf(e: unknown): { code: number; reason: string; message: string } {
  const body = (e as k8s.ApiException<string>).body;
  return typeof body === 'string' ? JSON.parse(body) : (body as never);
}

async function refusal(p: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return statusOf(e);
  }
  throw new Error('expected the API server to refuse the request');
}

const inRange = (ip: string | undefined) => /^10\.152\.183\.(\d+)$/.test(ip ?? '') && Number(ip!.split('.')[3]) >= 1 && Number(ip!.split('.')[3]) <= 254;

describe('embedded API server: Service addresses and node ports', function () {
  let c: RunningCluster;
  let core: k8s.CoreV1Api;

  before(async () => {
    c = await startCluster({ kubeflowCrds: false, serviceNetwork: MICROK8S_NETWORK });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(c.kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'svc' } } });
  });
  after(async () => c.stop());

  const service = (name: string, spec: k8s.V1ServiceSpec): k8s.V1Service => ({ metadata: { name, namespace: 'svc' }, spec });

  it('gives the API server\'s own Service the first address of the range', async () => {
    const own = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    expect(own.spec?.clusterIP).to.equal('10.152.183.1');
  });

  it('allocates a free address of the range, the same in clusterIP and clusterIPs', async () => {
    const a = await core.createNamespacedService({ namespace: 'svc', body: service('alloc-a', { ports: [{ port: 80 }] }) });
    const b = await core.createNamespacedService({ namespace: 'svc', body: service('alloc-b', { ports: [{ port: 80 }] }) });
    for (const s of [a, b]) {
      expect(inRange(s.spec?.clusterIP), s.spec?.clusterIP).to.equal(true);
      expect(s.spec?.clusterIPs).to.deep.equal([s.spec?.clusterIP]);
      expect(s.spec?.type).to.equal('ClusterIP');
    }
    expect(a.spec?.clusterIP).to.not.equal(b.spec?.clusterIP);
  });

  it('refuses an address another Service holds, with the real message', async () => {
    const first = await core.createNamespacedService({ namespace: 'svc', body: service('dup-a', { clusterIP: '10.152.183.40', ports: [{ port: 80 }] }) });
    expect(first.spec?.clusterIPs).to.deep.equal(['10.152.183.40']);
    const s = await refusal(core.createNamespacedService({ namespace: 'svc', body: service('dup-b', { clusterIP: '10.152.183.40', ports: [{ port: 80 }] }) }));
    expect(s.code).to.equal(422);
    expect(s.reason).to.equal('Invalid');
    expect(s.message).to.equal('Service "dup-b" is invalid: spec.clusterIPs: Invalid value: []string{"10.152.183.40"}: failed to allocate IP 10.152.183.40: provided IP is already allocated');
    expect(await core.listNamespacedService({ namespace: 'svc', fieldSelector: 'metadata.name=dup-b' })).to.have.property('items').that.has.length(0);
  });

  it('refuses an address outside the range, naming the range', async () => {
    const s = await refusal(core.createNamespacedService({ namespace: 'svc', body: service('far', { clusterIP: '10.96.0.10', ports: [{ port: 80 }] }) }));
    expect(s.message).to.equal('Service "far" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: the provided IP (10.96.0.10) is not in the valid range. The range of valid IPs is 10.152.183.0/24');
  });

  it('frees an address when its Service is deleted', async () => {
    await core.createNamespacedService({ namespace: 'svc', body: service('freed', { clusterIP: '10.152.183.41', ports: [{ port: 80 }] }) });
    await core.deleteNamespacedService({ name: 'freed', namespace: 'svc' });
    const again = await core.createNamespacedService({ namespace: 'svc', body: service('freed-again', { clusterIP: '10.152.183.41', ports: [{ port: 80 }] }) });
    expect(again.spec?.clusterIP).to.equal('10.152.183.41');
  });

  it('keeps a headless Service headless and gives an ExternalName Service no address', async () => {
    const headless = await core.createNamespacedService({ namespace: 'svc', body: service('headless', { clusterIP: 'None', selector: { app: 'x' }, ports: [{ port: 80 }] }) });
    expect(headless.spec?.clusterIP).to.equal('None');
    expect(headless.spec?.clusterIPs).to.deep.equal(['None']);
    const external = await core.createNamespacedService({ namespace: 'svc', body: service('external', { type: 'ExternalName', externalName: 'example.org' }) });
    expect(external.spec?.clusterIP).to.equal(undefined);
    const s = await refusal(core.createNamespacedService({ namespace: 'svc', body: service('external-ip', { type: 'ExternalName', externalName: 'example.org', clusterIP: '10.152.183.42' }) }));
    expect(s.message).to.equal('Service "external-ip" is invalid: spec.clusterIPs: Forbidden: may not be set for ExternalName services');
  });

  it('refuses a changed clusterIP on update, and keeps the allocated one when an update leaves it out', async () => {
    const made = await core.createNamespacedService({ namespace: 'svc', body: service('fixed', { ports: [{ port: 80 }] }) });
    const changed = { ...made, spec: { ...made.spec, clusterIP: '10.152.183.43', clusterIPs: ['10.152.183.43'] } };
    const s = await refusal(core.replaceNamespacedService({ name: 'fixed', namespace: 'svc', body: changed }));
    expect(s.code).to.equal(422);
    expect(s.message).to.equal('Service "fixed" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.152.183.43"}: may not change once set');
    const omitted = { ...made, spec: { ...made.spec, clusterIP: undefined, clusterIPs: undefined, ports: [{ port: 81 }] } };
    const replaced = await core.replaceNamespacedService({ name: 'fixed', namespace: 'svc', body: omitted });
    expect(replaced.spec?.clusterIP).to.equal(made.spec?.clusterIP);
    expect(replaced.spec?.clusterIPs).to.deep.equal(made.spec?.clusterIPs);
  });

  it('allocates node ports from 30000-32767 and refuses one another Service holds or one out of range', async () => {
    const a = await core.createNamespacedService({ namespace: 'svc', body: service('np-a', { type: 'NodePort', ports: [{ name: 'http', port: 80 }, { name: 'fixed', port: 81, nodePort: 30080 }] }) });
    const [auto, fixed] = a.spec!.ports!;
    expect(auto!.nodePort).to.be.within(30000, 32767);
    expect(fixed!.nodePort).to.equal(30080);
    const dup = await refusal(core.createNamespacedService({ namespace: 'svc', body: service('np-b', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }) }));
    expect(dup.message).to.equal('Service "np-b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated');
    const far = await refusal(core.createNamespacedService({ namespace: 'svc', body: service('np-c', { type: 'NodePort', ports: [{ port: 80, nodePort: 29999 }] }) }));
    expect(far.message).to.equal('Service "np-c" is invalid: spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767');
    const clusterIpType = await refusal(core.createNamespacedService({ namespace: 'svc', body: service('np-d', { ports: [{ port: 80, nodePort: 30081 }] }) }));
    expect(clusterIpType.message).to.equal('Service "np-d" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is \'ClusterIP\'');
    // an update that leaves the node ports out keeps them (matched by port name)
    const kept = await core.replaceNamespacedService({ name: 'np-a', namespace: 'svc', body: { ...a, spec: { ...a.spec, ports: [{ name: 'http', port: 80 }, { name: 'fixed', port: 81 }] } } });
    expect(kept.spec!.ports!.map((p) => p.nodePort)).to.deep.equal([auto!.nodePort, 30080]);
  });
});
