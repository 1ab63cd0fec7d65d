// The embedded API server serves the built-in kinds of a Kubernetes 1.30 server (resources.ts cites the discovery
// documents they follow): in discovery with their scope, short names and verbs, and in create, list, get, watch and
// delete through the real @kubernetes/client-node, so `kubectl apply` of a LimitRange or a NetworkPolicy works.
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { request as httpsRequest } from 'node:https';
import { startCluster, type RunningCluster } from './index.ts';

interface DiscoveredResource { name: string; namespaced: boolean; kind: string; verbs: string[]; shortNames?: string[] }

// group/version → resource → [namespaced, kind, short names]: what a 1.30 server's discovery says.
const EXPECTED: Record<string, Record<string, [boolean, string, string[]]>> = {
  v1: {
    configmaps: [true, 'ConfigMap', ['cm']], endpoints: [true, 'Endpoints', ['ep']], events: [true, 'Event', ['ev']],
    limitranges: [true, 'LimitRange', ['limits']], namespaces: [false, 'Namespace', ['ns']], nodes: [false, 'Node', ['no']],
    persistentvolumeclaims: [true, 'PersistentVolumeClaim', ['pvc']], persistentvolumes: [false, 'PersistentVolume', ['pv']],
    pods: [true, 'Pod', ['po']], podtemplates: [true, 'PodTemplate', []], replicationcontrollers: [true, 'ReplicationController', ['rc']],
    resourcequotas: [true, 'ResourceQuota', ['quota']], secrets: [true, 'Secret', []], serviceaccounts: [true, 'ServiceAccount', ['sa']],
    services: [true, 'Service', ['svc']], bindings: [true, 'Binding', []], componentstatuses: [false, 'ComponentStatus', ['cs']],
  },
  'apps/v1': {
    controllerrevisions: [true, 'ControllerRevision', []], daemonsets: [true, 'DaemonSet', ['ds']], deployments: [true, 'Deployment', ['deploy']],
    replicasets: [true, 'ReplicaSet', ['rs']], statefulsets: [true, 'StatefulSet', ['sts']],
  },
  'batch/v1': { cronjobs: [true, 'CronJob', ['cj']], jobs: [true, 'Job', []] },
  'networking.k8s.io/v1': { ingressclasses: [false, 'IngressClass', []], ingresses: [true, 'Ingress', ['ing']], networkpolicies: [true, 'NetworkPolicy', ['netpol']] },
  'policy/v1': { poddisruptionbudgets: [true, 'PodDisruptionBudget', ['pdb']] },
  'autoscaling/v2': { horizontalpodautoscalers: [true, 'HorizontalPodAutoscaler', ['hpa']] },
  'rbac.authorization.k8s.io/v1': { roles: [true, 'Role', []], rolebindings: [true, 'RoleBinding', []], clusterroles: [false, 'ClusterRole', []], clusterrolebindings: [false, 'ClusterRoleBinding', []] },
  'coordination.k8s.io/v1': { leases: [true, 'Lease', []] },
  'discovery.k8s.io/v1': { endpointslices: [true, 'EndpointSlice', []] },
  'storage.k8s.io/v1': {
    csidrivers: [false, 'CSIDriver', []], csinodes: [false, 'CSINode', []], csistoragecapacities: [true, 'CSIStorageCapacity', []],
    storageclasses: [false, 'StorageClass', ['sc']], volumeattachments: [false, 'VolumeAttachment', []],
  },
};

describe('embedded API server: the built-in kinds of Kubernetes 1.30', function () {
  let c: RunningCluster;
  let kc: k8s.KubeConfig;
  let objects: k8s.KubernetesObjectApi;

  before(async () => {
    c = await startCluster({ kubeflowCrds: false });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(c.kubeconfigPath);
    objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: 'team' } } });
  });
  after(async () => c?.stop());

  /** One request over the cluster's TLS with its token, as any client would send it. */
  function send(method: string, path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(`${c.server}${path}`, { method, ca: c.caCert, headers: { Authorization: `Bearer ${c.token}` } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  async function discovery(groupVersion: string): Promise<DiscoveredResource[]> {
    const path = groupVersion === 'v1' ? '/api/v1' : `/apis/${groupVersion}`;
    const response = await send('GET', path);
    expect(response.status, path).to.equal(200);
    return (JSON.parse(response.body) as { resources: DiscoveredResource[] }).resources;
  }

  for (const [groupVersion, resources] of Object.entries(EXPECTED)) {
    it(`discovery of ${groupVersion} lists its kinds with their scope and short names`, async () => {
      const served = await discovery(groupVersion);
      for (const [name, [namespaced, kind, shortNames]] of Object.entries(resources)) {
        const found = served.find((r) => r.name === name);
        expect(found, `${name} in ${groupVersion}`).to.not.equal(undefined);
        expect({ namespaced: found!.namespaced, kind: found!.kind, shortNames: found!.shortNames ?? [] }).to.deep.equal({ namespaced, kind, shortNames });
      }
    });
  }

  it('lists the verbs each resource really has: namespaces without deletecollection, bindings create only', async () => {
    const core = await discovery('v1');
    const verbs = (name: string) => core.find((r) => r.name === name)!.verbs;
    expect(verbs('namespaces')).to.not.include('deletecollection');
    expect(verbs('bindings')).to.deep.equal(['create']);
    expect(verbs('componentstatuses')).to.deep.equal(['get', 'list']);
    expect(verbs('limitranges')).to.include.members(['create', 'get', 'list', 'watch', 'delete']);
  });

  it('refuses a verb the resource does not serve with 405', async () => {
    const list = await send('GET', '/api/v1/namespaces/team/bindings');
    expect(list.status).to.equal(405);
    expect(JSON.parse(list.body)).to.include({ kind: 'Status', reason: 'MethodNotAllowed' });
    const deleteAll = await send('DELETE', '/api/v1/namespaces');
    expect(deleteAll.status).to.equal(405);
  });

  const made: { what: string; object: k8s.KubernetesObject }[] = [
    { what: 'LimitRange', object: { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'defaults', namespace: 'team' }, spec: { limits: [{ type: 'Container', default: { cpu: '500m' } }] } } as k8s.KubernetesObject },
    { what: 'NetworkPolicy', object: { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny-all', namespace: 'team' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } } as k8s.KubernetesObject },
    { what: 'CronJob', object: { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly', namespace: 'team' }, spec: { schedule: '0 2 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } } as k8s.KubernetesObject },
    { what: 'PodDisruptionBudget', object: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'keep-one', namespace: 'team' }, spec: { minAvailable: 1 } } as k8s.KubernetesObject },
    { what: 'HorizontalPodAutoscaler', object: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'team' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 } } as k8s.KubernetesObject },
  ];

  for (const { what, object } of made) {
    it(`creates, gets, lists, watches and deletes a ${what}`, async () => {
      const events: string[] = [];
      const watch = new k8s.Watch(kc);
      const path = `/${object.apiVersion!.includes('/') ? 'apis' : 'api'}/${object.apiVersion}/namespaces/team/${what.toLowerCase().replace(/y$/, 'ie')}s`;
      const request = await watch.watch(path, {}, (type, o: k8s.KubernetesObject) => { if (o.metadata?.name === object.metadata!.name) events.push(type); }, () => undefined);
      try {
        await objects.create(object);
        const got = await objects.read({ apiVersion: object.apiVersion!, kind: what, metadata: { name: object.metadata!.name!, namespace: 'team' } });
        expect(got.metadata?.uid).to.be.a('string');
        const list = await objects.list(object.apiVersion!, what, 'team');
        expect(list.items.map((i) => i.metadata?.name)).to.include(object.metadata!.name);
        await objects.delete({ apiVersion: object.apiVersion!, kind: what, metadata: { name: object.metadata!.name!, namespace: 'team' } });
        const deadline = Date.now() + 5000;
        while (!events.includes('DELETED') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(events).to.include.members(['ADDED', 'DELETED']);
      } finally {
        request.abort();
      }
    });
  }
});
