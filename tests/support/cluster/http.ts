// The HTTP face of the cluster: routing, authentication, impersonation and authorization (rbac/), discovery,
// LIST/WATCH encoding and Table output, fault injection. Semantics live in cluster.ts; this file only translates HTTP
// to it and back. The filters run in kube-apiserver's order (staging/src/k8s.io/apiserver/pkg/server/config.go
// DefaultBuildHandlerChain): authentication (401), impersonation, max-in-flight and priority (the injected faults),
// authorization (403), then the handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../../src/kube/types.ts';
import { apiVersionOf } from '../../../src/kube/types.ts';
import type { Cluster, UserInfo } from './cluster.ts';
import { versionOf } from './cluster.ts';
import { ApiError, badRequest, expired, isApiError, methodNotAllowed, pathNotFound, unauthorized, unsupportedMediaType } from './errors.ts';
import type { Faults } from './faults.ts';
import { jsonPatch, mergePatch, strategicMerge } from './patch.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, groupVersions, SERVER_VERSION, storageVersion, type ResourceDef } from './resources.ts';
import { fieldMatcher, labelMatcher } from './selectors.ts';
import type { LoggedEvent, Stored } from './store.ts';
import { impersonate, type TokenAuthenticator } from './rbac/authentication.ts';
import { forbiddenFor, type RbacAuthorizer } from './rbac/authorizer.ts';
import { requestInfo } from './rbac/request-info.ts';
import { execWithoutUpgrade } from './exec.ts';

export interface HttpContext {
  cluster: Cluster;
  authenticator: TokenAuthenticator;
  authorizer: RbacAuthorizer;
  faults: Faults;
  serverUrl: () => string;
}

const MAX_BODY = 3 * 1024 * 1024;

interface Target {
  def: ResourceDef;
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export function createHandler(ctx: HttpContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'https://cluster');
    const path = url.pathname;
    if (path === '/healthz' || path === '/livez' || path === '/readyz') return void text(res, 200, 'ok');
    const requestor = ctx.authenticator.authenticate(req.headers.authorization);
    if (!requestor) return void sendError(res, unauthorized());
    let user: UserInfo;
    try {
      user = impersonate(ctx.authorizer, requestor, req.headers, req.url ?? '/');
    } catch (e) {
      // responsewriters.InternalError answers in plain text, a refusal with a Status
      if (isApiError(e) && e.status === 500) return void text(res, 500, e.message);
      return void sendError(res, isApiError(e) ? e : internal(e));
    }
    const fault = ctx.faults.decide(req.method ?? 'GET', path);
    const run = () => {
      handle(ctx, req, res, url, user).catch((e: unknown) => {
        if (!res.headersSent) sendError(res, isApiError(e) ? e : internal(e));
        else res.end();
      });
    };
    if (!fault) return run();
    switch (fault.kind) {
      case 'latency':
        return void setTimeout(run, fault.latencyMs);
      case 'reset':
        req.socket.destroy();
        return;
      case 'throttle':
        res.setHeader('Retry-After', String(fault.retryAfterSeconds));
        return void sendError(res, new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: fault.retryAfterSeconds }));
      case 'error':
        return void sendError(res, new ApiError(500, 'InternalError', 'Internal error occurred: injected fault'));
      case 'unavailable':
        res.setHeader('Retry-After', String(fault.retryAfterSeconds));
        return void sendError(res, new ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'));
    }
  };
}

function internal(e: unknown): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error).message}`);
}

async function handle(ctx: HttpContext, req: IncomingMessage, res: ServerResponse, url: URL, user: UserInfo): Promise<void> {
  const seg = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const defs = ctx.cluster.resources();
  const method = req.method ?? 'GET';
  // WithAuthorization: the request's attributes (rbac/request-info.ts) against the authorizer, before any routing
  const attributes = { user, ...requestInfo(method, url) };
  const decision = ctx.authorizer.authorize(attributes);
  if (!decision.allowed) throw forbiddenFor(attributes, decision.reason);
  if (seg[0] === 'version' && seg.length === 1) return json(res, 200, SERVER_VERSION);
  // no schemas are published: clients fall back to the server's own validation, which is where ours happens
  if (seg[0] === 'openapi' && seg[1] === 'v3' && seg.length === 2) return json(res, 200, { paths: {} });
  if (seg[0] === 'openapi' && seg[1] === 'v2' && seg.length === 2 && (req.headers.accept ?? '').includes('protobuf')) return emptyOpenApiV2Protobuf(res);
  if (seg[0] === 'openapi' && seg[1] === 'v2' && seg.length === 2)
    return json(res, 200, { swagger: '2.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths: {}, definitions: {} });
  if (seg[0] === 'api' && seg.length === 1) return json(res, 200, apiVersions(new URL(ctx.serverUrl()).host));
  if (seg[0] === 'apis' && seg.length === 1) return json(res, 200, apiGroupList(defs));
  if (seg[0] === 'api' && seg.length === 2) {
    if (seg[1] !== 'v1') throw pathNotFound();
    return json(res, 200, apiResourceList(defs, '', 'v1'));
  }
  if (seg[0] === 'apis' && seg.length === 2) {
    const versions = groupVersions(defs).get(seg[1]!);
    if (!versions) throw pathNotFound();
    return json(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...(apiGroup(seg[1]!, versions) as object) });
  }
  if (seg[0] === 'apis' && seg.length === 3) {
    if (!groupVersions(defs).get(seg[1]!)?.includes(seg[2]!)) throw pathNotFound();
    return json(res, 200, apiResourceList(defs, seg[1]!, seg[2]!));
  }
  const target = resolveTarget(ctx.cluster, seg);
  if (!target) throw pathNotFound();
  const q = url.searchParams;
  const watch = q.get('watch') === '1' || q.get('watch') === 'true';
  const opts = {
    dryRun: q.getAll('dryRun').includes('All'),
    fieldManager: q.get('fieldManager') ?? managerFromAgent(req.headers['user-agent']),
    user,
  };
  const { def, name, namespace, subresource } = target;
  if (subresource === 'log' && def.group === '' && def.resource === 'pods' && name !== undefined && method === 'GET') {
    const tail = q.get('tailLines');
    return text(res, 200, ctx.cluster.podLog(namespace ?? '', name, q.get('container') ?? undefined, tail === null ? undefined : Number(tail)));
  }
  // pods/exec is a WebSocket upgrade (exec.ts); a plain request gets the Connect checks, then 400
  if (subresource === 'exec' && def.group === '' && def.resource === 'pods' && name !== undefined) throw execWithoutUpgrade(ctx.cluster, method, namespace ?? '', name, q);
  if (subresource && subresource !== 'status' && !(subresource === 'finalize' && def.resource === 'namespaces')) throw pathNotFound();
  if (subresource === 'status' && !def.statusSubresource) throw pathNotFound();
  // A verb the resource does not serve has no route on a real server: 405 (apiserver installer.go registers only the
  // verbs a REST storage implements, e.g. no deletecollection on namespaces, only create on bindings).
  if (!subresource && !def.verbs.includes(verbOf(method, name !== undefined, watch))) throw methodNotAllowed();

  if (name === undefined) {
    if (method === 'GET' && watch) return serveWatch(ctx, req, res, target, q);
    if (method === 'GET') return serveList(ctx, req, res, target, q);
    if (method === 'POST') {
      const body = withTypeFromUrl((await readBody(req)) as KubeObject, target);
      if (def.namespaced) {
        body.metadata ??= {};
        if (body.metadata.namespace && body.metadata.namespace !== namespace)
          throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
        body.metadata.namespace = namespace;
      }
      return answer(ctx, res, 201, target, ctx.cluster.createOwned(def, body, opts));
    }
    if (method === 'DELETE') {
      const items = ctx.cluster.list(def, { namespace, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
      for (const o of items) ctx.cluster.delete(def, o.metadata.name ?? '', o.metadata.namespace, opts);
      return json(res, 200, { kind: def.listKind, apiVersion: apiVersionOf(def.group, target.version), metadata: {}, items: items.map((o) => ctx.cluster.convert(o, def, target.version)) });
    }
    throw methodNotAllowed();
  }

  const out = (o: KubeObject, code = 200) => answer(ctx, res, code, target, o);
  switch (method) {
    case 'GET': {
      if (watch) {
        q.set('fieldSelector', `metadata.name=${name}`);
        return serveWatch(ctx, req, res, { ...target, name: undefined }, q);
      }
      const s = ctx.cluster.getStored(def, name, namespace);
      if (!s) throw notFoundFor(def, name);
      return out(s.obj);
    }
    case 'PUT': {
      const body = withTypeFromUrl((await readBody(req)) as KubeObject, target);
      body.metadata ??= {};
      if (body.metadata.name && body.metadata.name !== name) throw badRequest('the name of the object (' + body.metadata.name + ') does not match the name on the URL (' + name + ')');
      body.metadata.name = name;
      if (def.namespaced) body.metadata.namespace = namespace;
      if (subresource === 'finalize') return out(ctx.cluster.finalizeNamespace(name, ((body.spec as { finalizers?: string[] }) ?? {}).finalizers ?? []));
      return out(ctx.cluster.updateOwned(def, body, subresource === 'status' ? 'status' : 'main', opts));
    }
    case 'PATCH':
      return out(await patch(ctx, req, target, name, q, opts));
    case 'DELETE': {
      const body = ((await readBody(req, true)) ?? {}) as { propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; orphanDependents?: boolean; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] };
      let policy = (q.get('propagationPolicy') ?? body.propagationPolicy) as 'Foreground' | 'Background' | 'Orphan' | undefined;
      if (!policy && (body.orphanDependents === true || q.get('orphanDependents') === 'true')) policy = 'Orphan';
      if (policy && !['Foreground', 'Background', 'Orphan'].includes(policy)) throw new ApiError(422, 'Invalid', `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
      const result = ctx.cluster.deleteObject(def, name, namespace, { ...opts, dryRun: opts.dryRun || (body.dryRun ?? []).includes('All'), propagationPolicy: policy, preconditions: body.preconditions });
      return out(result.object, result.gone ? 200 : 202);
    }
  }
  throw methodNotAllowed();
}

/** The Kubernetes verb of a request on a resource (authorization's RequestInfo does the same mapping). */
function verbOf(method: string, named: boolean, watch: boolean): string {
  if (method === 'GET') return watch ? 'watch' : named ? 'get' : 'list';
  if (method === 'POST') return 'create';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  if (method === 'DELETE') return named ? 'delete' : 'deletecollection';
  return method.toLowerCase();
}

/** A body without apiVersion/kind takes them from the URL, as the real decoder defaults them. */
function withTypeFromUrl(body: KubeObject, t: Target): KubeObject {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body of the request must be a JSON object');
  body.apiVersion ??= apiVersionOf(t.def.group, t.version);
  body.kind ??= t.def.kind;
  return body;
}

function notFoundFor(def: ResourceDef, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${def.group ? `${def.resource}.${def.group}` : def.resource} "${name}" not found`, { name, kind: def.resource, ...(def.group ? { group: def.group } : {}) });
}

async function patch(ctx: HttpContext, req: IncomingMessage, t: Target, name: string, q: URLSearchParams, opts: { dryRun: boolean; fieldManager: string; user: UserInfo }): Promise<KubeObject> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
  const sub = t.subresource === 'status' ? 'status' : 'main';
  const view = (o: KubeObject) => ctx.cluster.convert(o, t.def, t.version);
  if (type === 'application/apply-patch+yaml' || type === 'application/apply-patch+json') {
    const manager = q.get('fieldManager');
    if (!manager) throw new ApiError(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', { kind: 'PatchOptions', group: 'meta.k8s.io', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }] });
    const config = (await readBody(req)) as KubeObject;
    if (!config || typeof config !== 'object') throw badRequest('error decoding YAML: the apply configuration must be an object');
    config.metadata ??= {};
    if (config.metadata.name && config.metadata.name !== name) throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
    config.metadata.name = name;
    if (t.def.namespaced) config.metadata.namespace = t.namespace;
    config.apiVersion ??= apiVersionOf(t.def.group, t.version);
    config.kind ??= t.def.kind;
    return ctx.cluster.apply(t.def, config, manager, q.get('force') === 'true', sub, opts);
  }
  const body = await readBody(req);
  let change: (cur: KubeObject) => KubeObject;
  if (type === 'application/merge-patch+json') change = (cur) => mergePatch(view(cur), body) as KubeObject;
  else if (type === 'application/json-patch+json') change = (cur) => jsonPatch(view(cur), body) as KubeObject;
  else if (type === 'application/strategic-merge-patch+json') {
    if (!t.def.builtin) throw unsupportedMediaType(type);
    change = (cur) => strategicMerge(view(cur), body) as KubeObject;
  } else throw unsupportedMediaType(type);
  return ctx.cluster.patch(t.def, name, t.namespace, change, sub, opts);
}

function resolveTarget(cluster: Cluster, seg: string[]): Target | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (seg[0] === 'api' && seg[1] === 'v1') {
    group = '';
    version = 'v1';
    rest = seg.slice(2);
  } else if (seg[0] === 'apis' && seg.length >= 4) {
    group = seg[1]!;
    version = seg[2]!;
    rest = seg.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource, extra] = rest;
  if (!resource || extra !== undefined) return undefined;
  const def = cluster.findResource({ group, resource });
  if (!def || !def.versions.some((v) => v.name === version && v.served)) return undefined;
  if (namespace !== undefined && !def.namespaced) return undefined;
  return { def, version, namespace, name, subresource };
}

function managerFromAgent(agent: string | undefined): string {
  const first = (agent ?? '').split('/')[0]?.trim();
  return first ? first.slice(0, 128) : 'unknown';
}

async function readBody(req: IncomingMessage, optional = false): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(c as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (raw.trim() === '') {
    if (optional) return undefined;
    throw badRequest('the request body is empty');
  }
  try {
    const type = req.headers['content-type'] ?? '';
    return type.includes('yaml') ? parseYaml(raw) : JSON.parse(raw);
  } catch (e) {
    throw badRequest(`the body of the request could not be decoded: ${(e as Error).message.split('\n')[0]}`);
  }
}

// ---- list ------------------------------------------------------------------------------------------------------

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

function decodeContinue(token: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
    if (t.v !== 'meta.k8s.io/v1' || typeof t.rv !== 'number' || typeof t.start !== 'string') throw new Error('bad');
    return t;
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}

const keyOfStored = (s: Stored) => `${s.obj.metadata.namespace ?? ''}/${s.obj.metadata.name ?? ''}`;

/** JSON of a stored object as a client of `version` sees it, without apiVersion/kind for built-in list items. */
function itemJson(s: Stored, def: ResourceDef, version: string, asListItem: boolean): string {
  const storage = apiVersionOf(def.group, storageVersion(def));
  const prefix = `{"apiVersion":${JSON.stringify(storage)},`;
  if (!s.json.startsWith(prefix)) return s.json;
  if (asListItem && def.builtin) {
    const kindPrefix = `${prefix}"kind":${JSON.stringify(def.kind)},`;
    if (s.json.startsWith(kindPrefix)) return '{' + s.json.slice(kindPrefix.length);
  }
  const wanted = apiVersionOf(def.group, version);
  return wanted === storage ? s.json : `{"apiVersion":${JSON.stringify(wanted)},` + s.json.slice(prefix.length);
}

function serveList(ctx: HttpContext, req: IncomingMessage, res: ServerResponse, t: Target, q: URLSearchParams): void {
  const { def, namespace } = t;
  const byLabel = labelMatcher(q.get('labelSelector') ?? undefined);
  const byField = fieldMatcher(q.get('fieldSelector') ?? undefined);
  const limit = Number(q.get('limit') ?? '0');
  const cont = q.get('continue');
  let items: Stored[];
  let rv: number;
  let from = 0;
  if (cont) {
    const token = decodeContinue(cont);
    const snap = ctx.cluster.store.findSnapshot(def, token.rv);
    if (!snap) throw expired();
    items = snap.items;
    rv = snap.rv;
    from = lowerBoundKey(items, token.start);
  } else if (limit > 0) {
    const snap = ctx.cluster.store.snapshot(def);
    items = snap.items;
    rv = snap.rv;
  } else {
    items = ctx.cluster.store.scan(def, namespace);
    rv = ctx.cluster.store.currentRv();
  }
  if (namespace !== undefined && (cont || limit > 0)) {
    // the snapshot holds every namespace: narrow to this one's key range
    const lo = lowerBoundKey(items, `${namespace}/`);
    const hi = lowerBoundKey(items, `${namespace}0`);
    from = Math.max(from, lo);
    items = items.slice(0, hi);
  }
  const selected: Stored[] = [];
  let i = from;
  for (; i < items.length; i++) {
    const s = items[i]!;
    if (!byLabel(s.obj) || !byField(s.obj)) continue;
    if (limit > 0 && selected.length === limit) break;
    selected.push(s);
  }
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (limit > 0 && i < items.length) {
    metadata.continue = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: keyOfStored(items[i]!) })).toString('base64url');
    if (!q.get('labelSelector') && !q.get('fieldSelector')) metadata.remainingItemCount = items.length - i;
  }
  if (wantsTable(req)) return json(res, 200, table(def, selected, metadata));
  const head = `{"kind":${JSON.stringify(def.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(def.group, t.version))},"metadata":${JSON.stringify(metadata)},"items":[`;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  // written in slices so a 150k-object LIST never builds one giant string
  const SLICE = 2000;
  res.write(head);
  for (let k = 0; k < selected.length; k += SLICE)
    res.write(selected.slice(k, k + SLICE).map((s) => itemJson(s, def, t.version, true)).join(',') + (k + SLICE < selected.length ? ',' : ''));
  res.end(']}');
}

function lowerBoundKey(items: Stored[], key: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyOfStored(items[mid]!) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function wantsTable(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').split(',')[0]!.includes('as=Table');
}

function age(ts: string | undefined): string {
  if (!ts) return '<unknown>';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

function readPath(o: unknown, jsonPath: string): unknown {
  let cur = o;
  for (const p of jsonPath.replace(/^\./, '').split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function table(def: ResourceDef, items: Stored[], metadata: Record<string, unknown>): unknown {
  const extra = (def.printerColumns ?? []).filter((c) => c.jsonPath !== '.metadata.creationTimestamp');
  if (def.group === '' && def.resource === 'namespaces') extra.push({ name: 'Status', type: 'string', jsonPath: '.status.phase' });
  const columns = [
    { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
    ...extra.map((c) => ({ name: c.name, type: c.type, format: '', description: c.description ?? '', priority: c.priority ?? 0 })),
    { name: 'Age', type: 'date', format: '', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', priority: 0 },
  ];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: columns,
    rows: items.map((s) => ({
      cells: [s.obj.metadata.name, ...extra.map((c) => readPath(s.obj, c.jsonPath) ?? '<none>'), age(s.obj.metadata.creationTimestamp)],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: s.obj.metadata },
    })),
  };
}

// ---- watch -----------------------------------------------------------------------------------------------------

function serveWatch(ctx: HttpContext, req: IncomingMessage, res: ServerResponse, t: Target, q: URLSearchParams): void {
  const { def, namespace } = t;
  const byLabel = labelMatcher(q.get('labelSelector') ?? undefined);
  const byField = fieldMatcher(q.get('fieldSelector') ?? undefined);
  const store = ctx.cluster.store;
  const matches = (s: Stored) =>
    (namespace === undefined || s.obj.metadata.namespace === namespace) && byLabel(s.obj) && byField(s.obj);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  // a client waits for the headers before it reads events: send them now, not with the first event
  res.flushHeaders();
  let lastRv = 0;
  const send = (type: string, s: Stored) => {
    if (s.rv <= lastRv) return;
    lastRv = s.rv;
    res.write(`{"type":"${type}","object":${itemJson(s, def, t.version, false)}}\n`);
  };
  const rvParam = q.get('resourceVersion');
  const startRv = rvParam && rvParam !== '0' ? Number(rvParam) : undefined;
  const buffered: LoggedEvent[] = [];
  let live = false;
  const onEvent = (e: LoggedEvent) => {
    if (e.refKey !== `${def.group}/${def.resource}` || !matches(e.stored)) return;
    if (live) send(e.type, e.stored);
    else buffered.push(e);
  };
  const unsubscribe = store.subscribeRaw(onEvent);
  const close = () => {
    unsubscribe();
    clearTimeout(timer);
    if (!res.writableEnded) res.end();
  };
  const timeout = Number(q.get('timeoutSeconds') ?? '1800');
  const timer = setTimeout(close, Math.max(1, timeout) * 1000);
  req.on('close', close);
  if (startRv === undefined || Number.isNaN(startRv)) {
    // no resourceVersion: synthetic ADDED for what exists now, then changes
    const snapshotRv = store.currentRv();
    for (const s of store.scan(def, namespace)) if (matches(s)) res.write(`{"type":"ADDED","object":${itemJson(s, def, t.version, false)}}\n`);
    lastRv = snapshotRv;
  } else {
    const past = store.eventsSince(startRv);
    if (!past) {
      const status = expired(`too old resource version: ${startRv} (${store.oldestRv()})`).toStatus();
      res.write(JSON.stringify({ type: 'ERROR', object: { ...status, reason: 'Expired' } }) + '\n');
      return close();
    }
    lastRv = startRv;
    for (const e of past) if (e.refKey === `${def.group}/${def.resource}` && matches(e.stored)) send(e.type, e.stored);
  }
  live = true;
  for (const e of buffered) send(e.type, e.stored);
  if (q.get('allowWatchBookmarks') === 'true')
    res.write(JSON.stringify({ type: 'BOOKMARK', object: { kind: def.kind, apiVersion: apiVersionOf(def.group, t.version), metadata: { resourceVersion: String(Math.max(lastRv, store.currentRv())) } } }) + '\n');
}

// ---- responses -------------------------------------------------------------------------------------------------

/** An OpenAPI v2 document with no definitions, in the protobuf encoding kubectl asks for (gnostic's Document). */
function emptyOpenApiV2Protobuf(res: ServerResponse): void {
  const field = (tag: number, payload: Buffer) => Buffer.concat([Buffer.from([tag, payload.length]), payload]);
  const info = Buffer.concat([field(0x0a, Buffer.from('Kubernetes')), field(0x12, Buffer.from(SERVER_VERSION.gitVersion))]);
  const doc = Buffer.concat([field(0x0a, Buffer.from('2.0')), field(0x12, info)]);
  res.writeHead(200, { 'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'Content-Length': doc.length });
  res.end(doc);
}

/**
 * An object as a client of the target's version sees it. When it is the stored object itself (a create, an update or a
 * GET answers with what the store holds), its JSON is the store's own string: the same bytes JSON.stringify would
 * make, without walking the object again.
 */
function answer(ctx: HttpContext, res: ServerResponse, code: number, t: Target, o: KubeObject): void {
  const name = o.metadata?.name;
  const s = name === undefined ? undefined : ctx.cluster.getStored(t.def, name, o.metadata.namespace);
  const prefix = `{"apiVersion":${JSON.stringify(o.apiVersion)},`;
  if (s && s.obj === o && s.json.startsWith(prefix)) {
    const wanted = apiVersionOf(t.def.group, t.version);
    return jsonText(res, code, wanted === o.apiVersion ? s.json : `{"apiVersion":${JSON.stringify(wanted)},${s.json.slice(prefix.length)}`);
  }
  json(res, code, ctx.cluster.convert(o, t.def, t.version));
}

function json(res: ServerResponse, code: number, body: unknown): void {
  jsonText(res, code, JSON.stringify(body));
}

function jsonText(res: ServerResponse, code: number, data: string): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), 'Cache-Control': 'no-cache, private' });
  res.end(data);
}

function text(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

function sendError(res: ServerResponse, e: ApiError): void {
  json(res, e.status, e.toStatus());
}

export { versionOf };
