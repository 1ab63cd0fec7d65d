// The embedded API server against the real @kubernetes/client-node: each semantic the product relies on.
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { request as httpsRequest } from 'node:https';
import type { KubeObject } from '../../../src/kube/types.ts';
import { startCluster, type RunningCluster } from './index.ts';
import { WIDGETS } from './widgets-crd.ts';


function statusOf(e: unknown): { code: number; reason: string; message: string; details?: Record<string, unknown> } {
  const body = (e as k8s.ApiException<string>).body;
  return typeof body === 'string' ? JSON.parse(body) : (body as never);
}

async function rejects(p: Promise<unknown>): Promise<ReturnType<typeof statusOf>> {
  try {
    await p;
  } catch (e) {
    return statusOf(e);
  }
  throw new Error('expected the API server to refuse the request');
}

async function eventually<T>(f: () => Promise<T | undefined> | T | undefined, what: string, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('embedded API server (client-node)', function () {
  let c: RunningCluster;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let objects: k8s.KubernetesObjectApi;

  before(async () => {
    c = await startCluster({ kubeflowCrds: false, crds: [WIDGETS] });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(c.kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    await core.createNamespace({ body: { metadata: { name: 'team' } } });
  });
  after(async () => c.stop());
  afterEach(() => c.faults.clear());

  it('refuses a wrong bearer token with a 401 Status', async () => {
    const bad = new k8s.KubeConfig();
    bad.loadFromFile(c.kubeconfigPath);
    bad.users[0] = { name: bad.users[0]!.name, token: 'not-the-token' };
    let failure: unknown;
    await bad.makeApiClient(k8s.CoreV1Api).listNamespace().catch((e: unknown) => (failure = e));
    expect((failure as k8s.ApiException<string>).code).to.equal(401);
    // client-node drops a 401's body, so read the Status the way kubectl does: over TLS verified by the CA
    const s = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = httpsRequest(`${c.server}/api/v1/namespaces`, { ca: c.caCert, headers: { Authorization: 'Bearer wrong' } }, (res) => {
        let data = '';
        res.on('data', (d: Buffer) => (data += d.toString()));
        res.on('end', () => resolve({ ...JSON.parse(data), http: res.statusCode }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(s).to.include({ http: 401, kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
  });

  it('serves discovery for built-in kinds and CRD versions, preferred version first', async () => {
    const groups = await kc.makeApiClient(k8s.ApisApi).getAPIVersions();
    const example = groups.groups.find((g) => g.name === 'example.org')!;
    expect(example.versions.map((v) => v.version)).to.deep.equal(['v1', 'v1alpha1']);
    expect(example.preferredVersion?.version).to.equal('v1');
    const core1 = await core.getAPIResources();
    expect(core1.resources.map((r) => r.name)).to.include.members(['namespaces', 'configmaps', 'secrets', 'pods/status']);
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    expect(version.major).to.equal('1');
  });

  it('creates with generateName, and answers 409, 404 and 422 like the real server', async () => {
    const made = await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { generateName: 'cfg-' }, data: { a: '1' } } });
    expect(made.metadata?.name).to.match(/^cfg-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(made.metadata?.uid).to.be.a('string');
    const dup = await rejects(core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: made.metadata!.name! } } }));
    expect(dup).to.include({ code: 409, reason: 'AlreadyExists', message: `configmaps "${made.metadata!.name}" already exists` });
    const missing = await rejects(core.createNamespacedConfigMap({ namespace: 'nowhere', body: { metadata: { name: 'x' } } }));
    expect(missing).to.include({ code: 404, reason: 'NotFound', message: 'namespaces "nowhere" not found' });
    const bad = await rejects(core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'Bad_Name' } } }));
    expect(bad.code).to.equal(422);
    expect(bad.message).to.match(/^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
  });

  it('pages a LIST over a consistent snapshot and answers 410 Expired for a stale continue token', async () => {
    await core.createNamespace({ body: { metadata: { name: 'paged' } } });
    for (let i = 0; i < 7; i++) await core.createNamespacedConfigMap({ namespace: 'paged', body: { metadata: { name: `cm-${i}`, labels: { parity: i % 2 ? 'odd' : 'even' } } } });
    const first = await core.listNamespacedConfigMap({ namespace: 'paged', limit: 3 });
    expect(first.items.map((i) => i.metadata?.name)).to.deep.equal(['cm-0', 'cm-1', 'cm-2']);
    expect(first.metadata?.remainingItemCount).to.equal(4);
    await core.createNamespacedConfigMap({ namespace: 'paged', body: { metadata: { name: 'cm-3a' } } });
    const names: string[] = [];
    let token = first.metadata?._continue;
    while (token) {
      const page = await core.listNamespacedConfigMap({ namespace: 'paged', limit: 3, _continue: token });
      expect(page.metadata?.resourceVersion).to.equal(first.metadata?.resourceVersion);
      names.push(...page.items.map((i) => i.metadata!.name!));
      token = page.metadata?._continue;
    }
    expect(names).to.deep.equal(['cm-3', 'cm-4', 'cm-5', 'cm-6']);
    const again = await core.listNamespacedConfigMap({ namespace: 'paged', limit: 2 });
    c.compact();
    const gone = await rejects(core.listNamespacedConfigMap({ namespace: 'paged', limit: 2, _continue: again.metadata!._continue! }));
    expect(gone).to.include({ code: 410, reason: 'Expired' });
    const odd = await core.listNamespacedConfigMap({ namespace: 'paged', labelSelector: 'parity=odd' });
    expect(odd.items.map((i) => i.metadata?.name)).to.deep.equal(['cm-1', 'cm-3', 'cm-5']);
    const one = await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.name=cm-4,metadata.namespace=paged' });
    expect(one.items.map((i) => i.metadata?.name)).to.deep.equal(['cm-4']);
  });

  it('refuses an update with a stale resourceVersion with the real Conflict message', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'stale' }, data: { v: '1' } } });
    await core.replaceNamespacedConfigMap({ name: 'stale', namespace: 'team', body: { ...cm, data: { v: '2' } } });
    const s = await rejects(core.replaceNamespacedConfigMap({ name: 'stale', namespace: 'team', body: { ...cm, data: { v: '3' } } }));
    expect(s).to.include({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('applies merge, JSON and strategic merge patches', async () => {
    await core.createNamespacedPod({ namespace: 'team', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } } });
    const smp = await core.patchNamespacedPod({ name: 'p', namespace: 'team', body: { spec: { containers: [{ name: 'b', image: 'b:2' }] } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch));
    expect(smp.spec?.containers.map((x) => x.image)).to.deep.equal(['a:1', 'b:2']);
    const merge = await core.patchNamespacedPod({ name: 'p', namespace: 'team', body: { metadata: { labels: { app: 'x' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    expect(merge.metadata?.labels).to.deep.equal({ app: 'x' });
    const jp = await core.patchNamespacedPod({ name: 'p', namespace: 'team', body: [{ op: 'replace', path: '/spec/containers/0/image', value: 'a:9' }] }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch));
    expect(jp.spec?.containers[0]?.image).to.equal('a:9');
    const crPatch = await rejects(objects.patch({ apiVersion: 'example.org/v1', kind: 'Widget', metadata: { name: 'none', namespace: 'team' } }, undefined, undefined, undefined, undefined, k8s.PatchStrategy.StrategicMergePatch));
    expect(crPatch.code).to.be.oneOf([404, 415]);
  });

  it('server-side apply tracks field managers, reports conflicts and honours force', async () => {
    const cfg = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'team' }, data: { shared: 'alice', mine: '1' } };
    await objects.patch(cfg, undefined, undefined, 'alice', false, k8s.PatchStrategy.ServerSideApply);
    const conflict = await rejects(objects.patch({ ...cfg, data: { shared: 'bob' } }, undefined, undefined, 'bob', false, k8s.PatchStrategy.ServerSideApply));
    expect(conflict).to.include({ code: 409, reason: 'Conflict', message: 'Apply failed with 1 conflict: conflict with "alice" using v1: .data.shared' });
    const forced = await objects.patch({ ...cfg, data: { shared: 'bob' } }, undefined, undefined, 'bob', true, k8s.PatchStrategy.ServerSideApply);
    expect(forced.data).to.deep.equal({ shared: 'bob', mine: '1' });
    const again = await objects.patch({ ...cfg, data: { shared: 'bob' } }, undefined, undefined, 'alice', false, k8s.PatchStrategy.ServerSideApply);
    // alice no longer sets "mine": a field only she owned is removed
    expect(again.data).to.deep.equal({ shared: 'bob' });
    expect(((again.metadata as k8s.V1ObjectMeta).managedFields ?? []).map((m) => m.manager ?? "").sort()).to.deep.equal(['alice', 'bob']);
  });

  it('serves objects of a multi-version CRD in every served version and stores them in the storage version', async () => {
    const w = await objects.create({ apiVersion: 'example.org/v1alpha1', kind: 'Widget', metadata: { name: 'w1', namespace: 'team' }, spec: { size: 1 } } as k8s.KubernetesObject);
    expect(w.apiVersion).to.equal('example.org/v1alpha1');
    expect(c.api.get({ group: 'example.org', resource: 'widgets' }, 'w1', 'team')?.apiVersion).to.equal('example.org/v1');
    const v1 = await objects.read({ apiVersion: 'example.org/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'team' } });
    expect(v1.apiVersion).to.equal('example.org/v1');
    // a GET answers the stored object with the apiVersion asked through, and nothing else differs
    const stored = c.api.get({ group: 'example.org', resource: 'widgets' }, 'w1', 'team');
    const rawGet = (version: string) => new Promise<KubeObject>((resolve, reject) => {
      const req = httpsRequest(`${c.server}/apis/example.org/${version}/namespaces/team/widgets/w1`, { ca: c.caCert, headers: { Authorization: `Bearer ${c.token}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as KubeObject));
      });
      req.on('error', reject);
      req.end();
    });
    expect(await rawGet('v1')).to.deep.equal(stored);
    expect(await rawGet('v1alpha1')).to.deep.equal({ ...stored, apiVersion: 'example.org/v1alpha1' });
  });

  it('changes status only through the /status subresource', async () => {
    const base = { apiVersion: 'example.org/v1', kind: 'Widget', metadata: { name: 'st', namespace: 'team' }, spec: { size: 1 }, status: { phase: 'Made' } };
    const made = await objects.create(base as k8s.KubernetesObject);
    expect((made as KubeObject).status).to.equal(undefined);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await custom.patchNamespacedCustomObjectStatus({ group: 'example.org', version: 'v1', namespace: 'team', plural: 'widgets', name: 'st', body: { status: { phase: 'Ready' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    const current = (await objects.read(base)) as KubeObject;
    const replaced = (await objects.replace({ ...current, spec: { size: 2 }, status: { phase: 'Hacked' } } as k8s.KubernetesObject)) as KubeObject;
    expect(replaced.status).to.deep.equal({ phase: 'Ready' });
    expect(replaced.metadata.generation).to.equal(2);
  });

  it('keeps storedVersions and refuses a CRD update that drops a stored version, with the real text', async () => {
    const crd = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const gadget = {
      metadata: { name: 'gadgets.example.org' },
      spec: { group: 'example.org', scope: 'Cluster' as const, names: { plural: 'gadgets', kind: 'Gadget' }, versions: [{ name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
    };
    const made = await crd.createCustomResourceDefinition({ body: gadget });
    expect(made.status?.storedVersions).to.deep.equal(['v1alpha1']);
    expect(made.status?.conditions?.map((x) => `${x.type}=${x.status}`)).to.include.members(['Established=True', 'NamesAccepted=True']);
    const both = await crd.replaceCustomResourceDefinition({
      name: gadget.metadata.name,
      body: { ...made, spec: { ...gadget.spec, versions: [{ name: 'v1alpha1', served: true, storage: false }, { name: 'v1', served: true, storage: true }] } },
    });
    expect(both.status?.storedVersions).to.deep.equal(['v1alpha1', 'v1']);
    const s = await rejects(crd.replaceCustomResourceDefinition({ name: gadget.metadata.name, body: { ...both, spec: { ...gadget.spec, versions: [{ name: 'v1', served: true, storage: true }] } } }));
    expect(s.code).to.equal(422);
    expect(s.message).to.equal('CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.org" is invalid: status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions');
  });

  it('keeps an object with finalizers until they are removed', async () => {
    await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'held', finalizers: ['example.org/hold'] } } });
    await core.deleteNamespacedConfigMap({ name: 'held', namespace: 'team' });
    const marked = await core.readNamespacedConfigMap({ name: 'held', namespace: 'team' });
    expect(marked.metadata?.deletionTimestamp).to.not.equal(undefined);
    await core.patchNamespacedConfigMap({ name: 'held', namespace: 'team', body: { metadata: { finalizers: null } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    const s = await rejects(core.readNamespacedConfigMap({ name: 'held', namespace: 'team' }));
    expect(s.code).to.equal(404);
  });

  it('garbage-collects dependents by propagation policy, and orphans on request', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'owner' } } });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid!, blockOwnerDeletion: true, controller: true };
    await core.createNamespacedSecret({ namespace: 'team', body: { metadata: { name: 'dep', ownerReferences: [ref], finalizers: ['example.org/slow'] } } });
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: 'team', propagationPolicy: 'Foreground' });
    // the blocking dependent is marked; the owner waits for it with the foregroundDeletion finalizer
    await eventually(async () => (await core.readNamespacedSecret({ name: 'dep', namespace: 'team' })).metadata?.deletionTimestamp, 'dependent marked');
    expect((await core.readNamespacedConfigMap({ name: 'owner', namespace: 'team' })).metadata?.finalizers).to.deep.equal(['foregroundDeletion']);
    await core.patchNamespacedSecret({ name: 'dep', namespace: 'team', body: { metadata: { finalizers: null } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await eventually(async () => (await core.listNamespacedConfigMap({ namespace: 'team', fieldSelector: 'metadata.name=owner' })).items.length === 0, 'owner gone');

    const o2 = await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'owner2' } } });
    const ref2 = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner2', uid: o2.metadata!.uid! };
    await core.createNamespacedSecret({ namespace: 'team', body: { metadata: { name: 'bg', ownerReferences: [ref2] } } });
    await core.deleteNamespacedConfigMap({ name: 'owner2', namespace: 'team' });
    await eventually(async () => (await core.listNamespacedSecret({ namespace: 'team', fieldSelector: 'metadata.name=bg' })).items.length === 0, 'background GC');

    const o3 = await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'owner3' } } });
    await core.createNamespacedSecret({ namespace: 'team', body: { metadata: { name: 'orphan', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner3', uid: o3.metadata!.uid! }] } } });
    await core.deleteNamespacedConfigMap({ name: 'owner3', namespace: 'team', propagationPolicy: 'Orphan' });
    await eventually(async () => (await core.listNamespacedConfigMap({ namespace: 'team', fieldSelector: 'metadata.name=owner3' })).items.length === 0, 'owner3 gone');
    const kept = await core.readNamespacedSecret({ name: 'orphan', namespace: 'team' });
    expect(kept.metadata?.ownerReferences).to.equal(undefined);
  });

  it('takes a namespace through Terminating to gone with its contents, and refuses new content meanwhile', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['example.org/hold'] } } });
    await core.deleteNamespace({ name: 'doomed' });
    const ns = await core.readNamespace({ name: 'doomed' });
    expect(ns.status?.phase).to.equal('Terminating');
    const s = await rejects(core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }));
    expect(s).to.include({ code: 403, reason: 'Forbidden', message: 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated' });
    await eventually(async () => (await core.readNamespacedConfigMap({ name: 'held', namespace: 'doomed' })).metadata?.deletionTimestamp, 'content marked');
    await core.patchNamespacedConfigMap({ name: 'held', namespace: 'doomed', body: { metadata: { finalizers: null } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await eventually(async () => (await core.listNamespace({ fieldSelector: 'metadata.name=doomed' })).items.length === 0, 'namespace gone');
  });

  it('streams watch events from a resourceVersion', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: 'team' });
    const seen: string[] = [];
    const req = await new k8s.Watch(kc).watch('/api/v1/namespaces/team/configmaps', { resourceVersion: list.metadata!.resourceVersion! }, (type, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name}`), () => undefined);
    await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'watched' } } });
    await core.deleteNamespacedConfigMap({ name: 'watched', namespace: 'team' });
    await eventually(() => seen.length >= 2 || undefined, 'watch events');
    req.abort();
    expect(seen).to.deep.equal(['ADDED watched', 'DELETED watched']);
  });

  it('deletes every object of a CRD when the CRD is deleted', async () => {
    const crd = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await crd.createCustomResourceDefinition({ body: { metadata: { name: 'gizmos.example.org' }, spec: { group: 'example.org', scope: 'Namespaced', names: { plural: 'gizmos', kind: 'Gizmo' }, versions: [{ name: 'v1', served: true, storage: true }] } } });
    await objects.create({ apiVersion: 'example.org/v1', kind: 'Gizmo', metadata: { name: 'g1', namespace: 'team' } } as k8s.KubernetesObject);
    await crd.deleteCustomResourceDefinition({ name: 'gizmos.example.org' });
    await eventually(() => (c.cluster.findResource({ group: 'example.org', resource: 'gizmos' }) ? undefined : true), 'CRD gone');
    expect(c.cluster.store.count({ group: 'example.org', resource: 'gizmos' })).to.equal(0);
    const s = await rejects(objects.create({ apiVersion: 'example.org/v1', kind: 'Gizmo', metadata: { name: 'g2', namespace: 'team' } } as k8s.KubernetesObject));
    expect(s.code).to.equal(404);
  });

  it('injects scripted faults: 429 with Retry-After, 500, 503 and a reset connection', async () => {
    c.faults.script('throttle', 'error', 'unavailable', 'reset');
    const throttled = await rejects(core.listNamespace());
    expect(throttled).to.include({ code: 429, reason: 'TooManyRequests' });
    expect((await rejects(core.listNamespace())).code).to.equal(500);
    expect((await rejects(core.listNamespace())).code).to.equal(503);
    let reset: unknown;
    await core.listNamespace().catch((e: unknown) => (reset = e));
    expect(String(reset)).to.match(/socket hang up|ECONNRESET|fetch failed/i);
    expect((await core.listNamespace()).items.length).to.be.greaterThan(0);
  });
});
