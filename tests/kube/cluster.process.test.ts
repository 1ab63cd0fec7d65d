// KubeClient against the embedded API server: real TLS, bearer token, discovery, pagination, conflicts, watch, faults.
import { expect } from 'chai';
import { startCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import type { WatchEvent } from '../../src/kube/watch.ts';

type Cluster = Awaited<ReturnType<typeof startCluster>>;

describe('KubeClient against the embedded cluster', function () {
  let cluster: Cluster;
  let client: KubeClient;
  let configMaps: ApiResource;
  before(async () => {
    cluster = await startCluster({ profiles: 3 });
    client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath, retry: { baseDelayMs: 10, maxDelayMs: 100 } });
    configMaps = (await client.findByResource('', 'configmaps'))!;
  });
  after(async () => {
    client.close();
    await cluster.stop();
  });
  afterEach(() => cluster.faults.clear());

  it('discovers what the server serves, and a CRD created at run time after a refresh', async () => {
    const before = await client.discover();
    expect(before.some((r) => r.group === 'kubeflow.org' && r.resource === 'profiles' && !r.namespaced)).to.equal(true);
    expect(before.some((r) => r.resource.includes('/'))).to.equal(false);
    const crds = (await client.findByResource('apiextensions.k8s.io', 'customresourcedefinitions'))!;
    await client.create(crds, {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    expect(await client.findByResource('example.com', 'widgets')).to.equal(undefined); // cached
    const after = await client.discover({ refresh: true });
    expect(after.find((r) => r.group === 'example.com')).to.deep.include({ resource: 'widgets', kind: 'Widget', version: 'v1', namespaced: true });
  });

  it('lists across small pages exactly what one big page holds, with apiVersion and kind', async () => {
    const paged: KubeObject[] = [];
    for await (const page of client.listPages(configMaps, { limit: 2 })) paged.push(...page);
    const whole: KubeObject[] = [];
    for await (const page of client.listPages(configMaps, { limit: 10_000 })) whole.push(...page);
    expect(paged.length).to.be.greaterThan(2);
    expect(paged).to.deep.equal(whole);
    expect(paged.every((o) => o.apiVersion === 'v1' && o.kind === 'ConfigMap')).to.equal(true);
  });

  it('restarts a list whose continue token expired mid-way, without duplicates', async () => {
    const names: string[] = [];
    const listsBefore = client.requestCounts().list;
    let pages = 0;
    for await (const page of client.listPages(configMaps, { limit: 2 })) {
      if (++pages === 2) cluster.compact();
      names.push(...page.map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
    }
    expect(new Set(names).size).to.equal(names.length);
    expect(client.requestCounts().list - listsBefore).to.be.greaterThan(pages); // the 410 and the pages read again
    const whole: string[] = [];
    for await (const page of client.listPages(configMaps)) whole.push(...page.map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
    expect([...names].sort()).to.deep.equal([...whole].sort());
  });

  it('retries 429 with Retry-After and 503 and succeeds', async () => {
    cluster.faults.retryAfterSeconds = 1;
    cluster.faults.script('throttle', 'unavailable');
    const found = await client.get(configMaps, 'kube-root-ca.crt', 'default');
    expect(found.metadata.name).to.equal('kube-root-ca.crt');
    expect(cluster.faults.injected.throttle + cluster.faults.injected.unavailable).to.be.at.least(2);
  });

  it('does not blindly resend a create that got a 500', async () => {
    const before = client.requestCounts().create;
    cluster.faults.only({ method: 'POST' }).script('error');
    const error = (await client.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'once', namespace: 'default' } }).catch((e: unknown) => e)) as KubeApiError;
    expect(error).to.be.instanceOf(KubeApiError);
    expect(error.status).to.equal(500);
    expect(client.requestCounts().create - before).to.equal(1);
  });

  it('surfaces a stale resourceVersion as KubeApiError 409 Conflict', async () => {
    const created = await client.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conflicted', namespace: 'default' }, data: { a: '1' } });
    await client.replace(configMaps, { ...created, data: { a: '2' } });
    const error = (await client.replace(configMaps, { ...created, data: { a: '3' } }).catch((e: unknown) => e)) as KubeApiError;
    expect(error).to.be.instanceOf(KubeApiError);
    expect(error).to.include({ status: 409, reason: 'Conflict' });
  });

  it('patches only the status through /status: a spec change in the same patch is dropped', async () => {
    // the status subresource keeps everything but status from the stored object (apiextensions-apiserver
    // pkg/registry/customresource/status_strategy.go, PrepareForUpdate)
    const notebooks = (await client.findByResource('kubeflow.org', 'notebooks'))!;
    const [first] = (await client.listAll(notebooks)).items;
    const name = first!.metadata.name!;
    const namespace = first!.metadata.namespace!;
    const status = { readyReplicas: 7, conditions: [{ type: 'Restored', status: 'True' }] };
    const patched = await client.patchStatus(notebooks, name, namespace, [
      { op: 'add', path: '/status', value: status },
      { op: 'add', path: '/spec/restoredBy', value: 'status patch' },
    ], 'json', { fieldManager: 'test' });
    expect(patched.status).to.deep.equal(status);
    expect(patched.spec).to.deep.equal(first!.spec);
    expect(Number(patched.metadata.resourceVersion)).to.be.greaterThan(Number(first!.metadata.resourceVersion));
  });

  it('watches an object being added and then modified', async () => {
    const events: WatchEvent[] = [];
    const seen = new Promise<void>((resolve) => {
      const stop = client.watch(configMaps, { namespace: 'default', fieldSelector: 'metadata.name=watched' }, (event) => {
        events.push(event);
        if (event.type === 'MODIFIED') {
          stop();
          resolve();
        }
      });
    });
    const created = await client.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', namespace: 'default' } });
    await client.patch(configMaps, 'watched', 'default', { data: { b: '1' } }, 'merge');
    await seen;
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED']);
    expect(events[0]!.object.metadata.uid).to.equal(created.metadata.uid);
  });

  it('gives up waiting with a clear message', async () => {
    const error = (await client.waitFor(configMaps, 'never', 'default', (o) => o !== undefined, { timeoutMs: 300, description: 'exist' }).catch((e: unknown) => e)) as Error;
    expect(error.message).to.equal('Timed out after 0.3s waiting for configmaps default/never to exist (it does not exist).');
  });
  it('counts each request by purpose: discovery, create, status write, other patch, dry run, get', async () => {
    const fresh = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
    try {
      const notebooks = (await fresh.findByResource('kubeflow.org', 'notebooks'))!;
      const afterDiscovery = fresh.requestPurposes();
      expect(afterDiscovery.discovery).to.be.greaterThan(2);
      expect(afterDiscovery.get).to.equal(0);
      const nb = { apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'counted', namespace: 'kubeflow' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } };
      await fresh.create(notebooks, nb, { dryRun: true });
      await fresh.create(notebooks, nb);
      await fresh.patchStatus(notebooks, 'counted', 'kubeflow', { status: { readyReplicas: 0 } }, 'merge');
      await fresh.patch(notebooks, 'counted', 'kubeflow', { metadata: { labels: { a: 'b' } } }, 'merge');
      await fresh.get(notebooks, 'counted', 'kubeflow');
      const counts = fresh.requestPurposes();
      expect({ create: counts.create, status: counts.status, patch: counts.patch, dryRun: counts.dryRun, get: counts.get })
        .to.deep.equal({ create: 1, status: 1, patch: 1, dryRun: 1, get: 1 });
      // the verb counts stay as they were: a status patch is a patch, discovery a get, a dry run apart
      const verbs = fresh.requestCounts();
      expect({ patch: verbs.patch, create: verbs.create, dryRuns: verbs.dryRuns, get: verbs.get }).to.deep.equal({ patch: 2, create: 1, dryRuns: 1, get: 1 + afterDiscovery.discovery });
      await fresh.delete(notebooks, 'counted', 'kubeflow');
    } finally {
      fresh.close();
    }
  });
});
