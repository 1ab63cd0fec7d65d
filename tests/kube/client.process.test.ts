import { expect } from 'chai';
import { KubeClient } from '../../src/kube/client.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import { RetryError } from '../../src/retry/policy.ts';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import { json, startScriptedApi, status, type Handler, type ScriptedApi } from './scripted-api.ts';

const notebooks: ApiResource = {
  group: 'kubeflow.org', version: 'v1', resource: 'notebooks', kind: 'Notebook', namespaced: true,
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], preferredVersion: 'v1', versions: ['v1', 'v1beta1'],
};

function notebook(i: number): KubeObject {
  return { apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: `nb-${String(i).padStart(3, '0')}`, namespace: 'alice', uid: `uid-${i}`, resourceVersion: String(i) } };
}
/** A LIST answer the way kube-apiserver gives it: items without apiVersion and kind. */
function pageOf(items: KubeObject[], continueToken?: string) {
  return { kind: 'NotebookList', apiVersion: 'kubeflow.org/v1', metadata: { resourceVersion: '999', ...(continueToken ? { continue: continueToken } : {}) }, items: items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest) };
}
/** Serves `all` in pages of the requested limit; continue tokens are offsets. */
function paginated(all: KubeObject[], fault?: (offset: number, attempt: number) => ((res: Parameters<Handler>[1]) => void) | undefined): Handler {
  const attempts = new Map<number, number>();
  return (req, res) => {
    const offset = Number(req.query.get('continue') ?? 0);
    const attempt = (attempts.get(offset) ?? 0) + 1;
    attempts.set(offset, attempt);
    const injected = fault?.(offset, attempt);
    if (injected) return injected(res);
    const limit = Number(req.query.get('limit') ?? all.length);
    const next = offset + limit;
    json(res, 200, pageOf(all.slice(offset, next), next < all.length ? String(next) : undefined));
  };
}

const fast = { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 10_000 };

describe('KubeClient against a scripted API server', () => {
  let api: ScriptedApi | undefined;
  let client: KubeClient | undefined;
  async function serve(handler: Handler, options: Parameters<typeof KubeClient.load>[0] = {}) {
    api = await startScriptedApi(handler);
    client = await KubeClient.load({ kubeconfig: api.kubeconfigPath, retry: fast, ...options });
    return { api, client };
  }
  afterEach(async () => {
    client?.close();
    await api?.stop();
    api = client = undefined;
  });

  it('pages a list with limit/continue, sends the token, and gives items apiVersion and kind', async () => {
    const all = Array.from({ length: 23 }, (_, i) => notebook(i));
    const { api, client } = await serve(paginated(all), { pageSize: 10 });
    const pages: KubeObject[][] = [];
    for await (const page of client.listPages(notebooks, { namespace: 'alice', labelSelector: 'a=b' })) pages.push(page);
    expect(pages.map((p) => p.length)).to.deep.equal([10, 10, 3]);
    expect(pages.flat()).to.deep.equal(all);
    expect(api.requests.map((r) => [r.path, r.query.get('limit'), r.query.get('continue'), r.query.get('labelSelector')])).to.deep.equal([
      ['/apis/kubeflow.org/v1/namespaces/alice/notebooks', '10', null, 'a=b'],
      ['/apis/kubeflow.org/v1/namespaces/alice/notebooks', '10', '10', 'a=b'],
      ['/apis/kubeflow.org/v1/namespaces/alice/notebooks', '10', '20', 'a=b'],
    ]);
    expect(client.requestCounts()).to.include({ list: 3, writes: 0 });
  });

  it('starts a list over on 410 Expired without yielding an item twice', async () => {
    const all = Array.from({ length: 25 }, (_, i) => notebook(i));
    const expired = (res: Parameters<Handler>[1]) => json(res, 410, status(410, 'Expired', 'The provided continue parameter is too old'));
    const { api, client } = await serve(paginated(all, (offset, attempt) => (offset === 20 && attempt === 1 ? expired : undefined)), { pageSize: 10 });
    const seen: KubeObject[] = [];
    for await (const page of client.listPages(notebooks)) seen.push(...page);
    expect(seen.map((o) => o.metadata.name)).to.deep.equal(all.map((o) => o.metadata.name));
    expect(api.requests.map((r) => r.query.get('continue'))).to.deep.equal([null, '10', '20', null, '10', '20']);
  });

  it('after a restart from scratch yields what the first pass had not reached, and nothing twice', async () => {
    const first = Array.from({ length: 25 }, (_, i) => notebook(i));
    // between the two passes an object appears past the point the first pass reached, and an early one is deleted
    const second = [...first.filter((o) => o.metadata.name !== 'nb-003'), notebook(40)];
    const expired = (res: Parameters<Handler>[1]) => json(res, 410, status(410, 'Expired', 'too old'));
    let restarted = false;
    const firstPass = paginated(first, (offset, attempt) => (offset === 20 && attempt === 1 ? (res) => ((restarted = true), expired(res)) : undefined));
    const secondPass = paginated(second);
    const { client } = await serve((req, res) => (restarted ? secondPass(req, res) : firstPass(req, res)), { pageSize: 10 });
    const names: string[] = [];
    for await (const page of client.listPages(notebooks)) names.push(...page.map((o) => o.metadata.name!));
    expect(names).to.deep.equal([...first.map((o) => o.metadata.name!), 'nb-040']);
  });

  it('passes a 410 on from a server that answered out of key order, rather than guess what it had yielded', async () => {
    const all = Array.from({ length: 25 }, (_, i) => notebook(i)).reverse();
    const expired = (res: Parameters<Handler>[1]) => json(res, 410, status(410, 'Expired', 'too old'));
    const { client } = await serve(paginated(all, (offset, attempt) => (offset === 20 && attempt === 1 ? expired : undefined)), { pageSize: 10 });
    let error: unknown;
    try {
      for await (const _ of client.listPages(notebooks)) void _;
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(KubeApiError);
    expect((error as KubeApiError).status).to.equal(410);
  });

  it('goes on from the continue token a 410 offers', async () => {
    const all = Array.from({ length: 25 }, (_, i) => notebook(i));
    const expired = (res: Parameters<Handler>[1]) => json(res, 410, status(410, 'Expired', 'too old', { metadata: { continue: '20' } }));
    const { api, client } = await serve(paginated(all, (offset, attempt) => (offset === 20 && attempt === 1 ? expired : undefined)), { pageSize: 10 });
    const seen: KubeObject[] = [];
    for await (const page of client.listPages(notebooks)) seen.push(...page);
    expect(seen).to.have.length(25);
    expect(api.requests).to.have.length(4);
  });

  it('retries 429 honouring Retry-After, 503, and a connection reset, on reads', async () => {
    let calls = 0;
    const { client } = await serve((_req, res) => {
      calls++;
      if (calls === 1) return json(res, 429, status(429, 'TooManyRequests', 'slow down'), { 'Retry-After': '1' });
      if (calls === 2) return json(res, 503, status(503, 'ServiceUnavailable', 'busy'));
      if (calls === 3) return res.socket?.destroy();
      json(res, 200, notebook(1));
    });
    const started = Date.now();
    const got = await client.get(notebooks, 'nb-001', 'alice');
    expect(got.metadata.name).to.equal('nb-001');
    expect(calls).to.equal(4);
    expect(Date.now() - started).to.be.at.least(990); // the server asked for a second
  });

  it('never takes an answer whose body was cut off for a whole one: a read is sent again, a create is not', async () => {
    let calls = 0;
    const cut = (res: Parameters<Handler>[1]) => {
      // the status line, the headers and half of the promised body, then the connection goes
      const body = JSON.stringify(notebook(1));
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
      res.write(body.slice(0, body.length >> 1), () => res.socket?.destroy());
    };
    const { client, api } = await serve((req, res) => {
      calls++;
      if (req.method === 'POST' || calls === 1) return cut(res);
      json(res, 200, notebook(1));
    });
    expect((await client.get(notebooks, 'nb-001', 'alice')).metadata.name).to.equal('nb-001');
    expect(calls).to.equal(2);
    const refused = await client.create(notebooks, notebook(2)).then(() => undefined, (error: unknown) => error);
    expect(refused).to.be.instanceOf(Error);
    expect(api.requests.filter((r) => r.method === 'POST')).to.have.length(1);
  });

  it('does not resend a create the server may have acted on (500), unless the caller says it is safe', async () => {
    let calls = 0;
    const { client } = await serve((req, res) => {
      calls++;
      if (calls === 1 || calls === 2) return json(res, 500, status(500, 'InternalError', 'etcd hiccup'));
      json(res, 201, JSON.parse(req.body));
    });
    const thrown = await client.create(notebooks, notebook(7)).catch((e: unknown) => e);
    expect(thrown).to.be.instanceOf(KubeApiError);
    expect((thrown as KubeApiError).message).to.equal('create notebooks alice/nb-007 failed: 500 InternalError: etcd hiccup.');
    expect(calls).to.equal(1);
    const created = await client.create(notebooks, notebook(7), { safeToRetry: true });
    expect(created.metadata.name).to.equal('nb-007');
    expect(calls).to.equal(3);
    expect(client.requestCounts().create).to.equal(3);
  });

  it('waits out a quota whose status its controller has not written yet: a create refused so is sent again', async () => {
    let calls = 0;
    // the answer kube-apiserver gives then (resourcequota/controller.go: "status unknown for quota: %s, resources: %s")
    const pending = status(403, 'Forbidden', 'persistentvolumeclaims "data" is forbidden: status unknown for quota: team, resources: persistentvolumeclaims');
    const { client } = await serve((req, res) => {
      calls++;
      if (calls === 1) return json(res, 403, pending);
      json(res, 201, JSON.parse(req.body));
    });
    expect((await client.create(notebooks, notebook(8))).metadata.name).to.equal('nb-008');
    expect(calls).to.equal(2);
  });

  it('surfaces 409 Conflict as a KubeApiError with the Status details', async () => {
    const { client } = await serve((_req, res) =>
      json(res, 409, status(409, 'Conflict', 'Operation cannot be fulfilled on notebooks.kubeflow.org "nb-001": the object has been modified', { details: { name: 'nb-001', group: 'kubeflow.org', kind: 'notebooks' } })),
    );
    const error = (await client.replace(notebooks, notebook(1)).catch((e: unknown) => e)) as KubeApiError;
    expect(error).to.be.instanceOf(KubeApiError);
    expect(error).to.include({ status: 409, reason: 'Conflict' });
    expect(error.details).to.deep.include({ name: 'nb-001', kind: 'notebooks' });
    expect(error.message).to.match(/^replace notebooks alice\/nb-001 failed: 409 Conflict: Operation cannot be fulfilled/);
  });

  it('names the call when the server stays unreachable', async () => {
    const { api, client } = await serve((_req, res) => res.socket?.destroy(), { retry: { ...fast, maxAttempts: 3 } });
    const error = (await client.get(notebooks, 'nb-001', 'alice').catch((e: unknown) => e)) as RetryError;
    expect(error).to.be.instanceOf(RetryError);
    expect(error.message).to.match(/^get notebooks alice\/nb-001 failed after 3 attempts over [\d.]+s \(ECONNRESET/);
    expect(api.requests).to.have.length(3);
  });

  it('sends writes with dryRun=All, fieldManager, force and the right patch content types', async () => {
    const { api, client } = await serve((req, res) => json(res, 200, req.method === 'DELETE' ? status(200, '', '') : notebook(1)));
    await client.create(notebooks, notebook(1), { dryRun: true });
    await client.patch(notebooks, 'nb-001', 'alice', { metadata: { labels: { a: 'b' } } }, 'merge');
    await client.patch(notebooks, 'nb-001', 'alice', [{ op: 'add', path: '/metadata/labels/a', value: 'b' }], 'json');
    await client.patch(notebooks, 'nb-001', 'alice', { metadata: {} }, 'strategic');
    await client.patch(notebooks, 'nb-001', 'alice', notebook(1), 'apply', { fieldManager: 'kubeflow-upgrader', force: true });
    await client.replaceStatus(notebooks, notebook(1));
    await client.patchStatus(notebooks, 'nb-001', 'alice', [{ op: 'add', path: '/status', value: {} }], 'json', { fieldManager: 'kubeflow-upgrader' });
    await client.delete(notebooks, 'nb-001', 'alice', { propagationPolicy: 'Foreground', dryRun: true });
    const seen = api.requests.map((r) => [r.method, r.path, r.query.toString(), r.headers['content-type'] ?? '']);
    expect(seen).to.deep.equal([
      ['POST', '/apis/kubeflow.org/v1/namespaces/alice/notebooks', 'dryRun=All', 'application/json'],
      ['PATCH', '/apis/kubeflow.org/v1/namespaces/alice/notebooks/nb-001', '', 'application/merge-patch+json'],
      ['PATCH', '/apis/kubeflow.org/v1/namespaces/alice/notebooks/nb-001', '', 'application/json-patch+json'],
      ['PATCH', '/apis/kubeflow.org/v1/namespaces/alice/notebooks/nb-001', '', 'application/strategic-merge-patch+json'],
      ['PATCH', '/apis/kubeflow.org/v1/namespaces/alice/notebooks/nb-001', 'fieldManager=kubeflow-upgrader&force=true', 'application/apply-patch+yaml'],
      ['PUT', '/apis/kubeflow.org/v1/namespaces/alice/notebooks/nb-001/status', '', 'application/json'],
      ['PATCH', '/apis/kubeflow.org/v1/namespaces/alice/notebooks/nb-001/status', 'fieldManager=kubeflow-upgrader', 'application/json-patch+json'],
      ['DELETE', '/apis/kubeflow.org/v1/namespaces/alice/notebooks/nb-001', 'dryRun=All', 'application/json'],
    ]);
    expect(JSON.parse(api.requests[7]!.body)).to.include({ propagationPolicy: 'Foreground' });
    expect(client.requestCounts()).to.include({ patch: 5, update: 1, create: 0, delete: 0, dryRuns: 2, writes: 6 });
  });

  it('keeps at most api-concurrency requests in flight across all calls', async () => {
    const { api, client } = await serve((_req, res) => setTimeout(() => json(res, 200, notebook(1)), 20), { concurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, () => client.get(notebooks, 'nb-001', 'alice')));
    expect(api.maxInFlight()).to.equal(3);
  });

  it('discovers core and group resources at the preferred version, without subresources, despite a broken group', async () => {
    const documents: Record<string, unknown> = {
      '/api': { versions: ['v1'] },
      '/apis': { groups: [
        { name: 'kubeflow.org', versions: [{ groupVersion: 'kubeflow.org/v1', version: 'v1' }, { groupVersion: 'kubeflow.org/v1beta1', version: 'v1beta1' }], preferredVersion: { groupVersion: 'kubeflow.org/v1', version: 'v1' } },
        { name: 'metrics.k8s.io', versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }], preferredVersion: { version: 'v1beta1' } },
      ] },
      '/api/v1': { resources: [{ name: 'namespaces', kind: 'Namespace', namespaced: false, verbs: ['get', 'list'] }, { name: 'namespaces/status', kind: 'Namespace', namespaced: false }] },
      '/apis/kubeflow.org/v1': { resources: [{ name: 'notebooks', kind: 'Notebook', namespaced: true, verbs: ['list'] }, { name: 'profiles', kind: 'Profile', namespaced: false, verbs: ['list'] }] },
      '/apis/kubeflow.org/v1beta1': { resources: [{ name: 'notebooks', kind: 'Notebook', namespaced: true, verbs: ['list'] }, { name: 'poddefaults', kind: 'PodDefault', namespaced: true, verbs: ['list'] }] },
    };
    const { client } = await serve((req, res) => (documents[req.path] ? json(res, 200, documents[req.path]) : json(res, 503, status(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'))), { retry: { ...fast, maxAttempts: 2 } });
    const found = await client.discover();
    expect(found.map((r) => `${r.group}/${r.resource}@${r.version}[${r.versions.join(',')}]`)).to.deep.equal([
      '/namespaces@v1[v1]', 'kubeflow.org/notebooks@v1[v1,v1beta1]', 'kubeflow.org/poddefaults@v1beta1[v1beta1]', 'kubeflow.org/profiles@v1[v1]',
    ]);
    const index = await client.resourceIndex();
    expect(index.problems).to.have.length(1);
    expect(index.problems[0]).to.match(/metrics\.k8s\.io\/v1beta1/);
    expect((await client.findByKind('kubeflow.org/v1beta1', 'Notebook'))?.version).to.equal('v1beta1');
    expect((await client.findByKind('kubeflow.org/v1alpha1', 'Notebook'))).to.equal(undefined);
    expect((await client.findByResource('', 'namespaces'))?.namespaced).to.equal(false);
    const requestsBefore = client.requestCounts().get;
    await client.discover();
    expect(client.requestCounts().get).to.equal(requestsBefore); // cached
  });

  it('refuses a bad concurrency or page size in one sentence', async () => {
    api = await startScriptedApi((_req, res) => json(res, 200, {}));
    for (const options of [{ concurrency: 0 }, { concurrency: 1.5 }, { pageSize: -1 }]) {
      const error = (await KubeClient.load({ kubeconfig: api.kubeconfigPath, ...options }).catch((e: unknown) => e)) as Error;
      expect(error.message).to.match(/^(api-concurrency|The page size) must be a whole number of at least 1, not .+\.$/);
    }
  });
});
