// The product's kube port (src/kube/client.ts KubeClient, as src/backup/kube-port.ts, src/restore/kube-port.ts and,
// through src/volumes/kube-client-port.ts, src/volumes/kube-port.ts pick from it) served straight from the embedded
// cluster's in-process API: no HTTP, no TLS, no socket. Every call does what http.ts does for the same request
// (discovery documents, version conversion, the namespace of a namespaced write, the four patch types, dry runs,
// propagation policies, LIST and WATCH selectors), and every refusal is the Status the server would send, read by
// the product's own kubeApiErrorFrom, so the engines meet the same KubeApiError (409 AlreadyExists, 404 …) as over
// HTTPS. What this leaves out is what the process tier keeps: TLS, the transport's concurrency and retries, faults,
// paging continue tokens across requests, and RBAC of the caller (the caller is kubernetes-admin, system:masters,
// whom RBAC never refuses: kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go).
import type { KubeObject, ApiResource } from '../../../src/kube/types.ts';
import { apiVersionOf } from '../../../src/kube/types.ts';
import { isNotFound, kubeApiErrorFrom, type RequestSubject } from '../../../src/kube/errors.ts';
import { mergeDiscovery, ResourceIndex, type ApiResourceList, type GroupVersionResources } from '../../../src/kube/discovery.ts';
import type { CreateOptions, DeleteOptions, ListOptions, PatchOptions, PatchType, WriteOptions } from '../../../src/kube/client.ts';
import { waitFor, type WaitOptions, type WatchEvent, type WatchOptions } from '../../../src/kube/watch.ts';
import type { Cluster, UserInfo } from './cluster.ts';
import { ApiError } from './errors.ts';
import { jsonPatch, mergePatch, strategicMerge } from './patch.ts';
import { apiResourceList, groupVersions, type ResourceDef } from './resources.ts';
import { fieldMatcher, labelMatcher } from './selectors.ts';
import type { Stored } from './store.ts';

/** kubeadm's admin.conf user, what the HTTPS front end authenticates the admin token as (index.ts) */
const ADMIN: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

export type WriteVerb = 'create' | 'update' | 'patch' | 'delete';

/** One write the adapter passed on, for a test's "wrote nothing" or "wrote only this". */
export interface WriteRecord {
  verb: WriteVerb;
  /** `<resource>[.<group>]` */
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource?: 'status';
  dryRun: boolean;
}

export interface InProcessKubeOptions {
  /** items per LIST page (KubeClient's pageSize) */
  pageSize?: number;
  /** what KubeClient reports as its concurrency (the engines size their pools by it) */
  concurrency?: number;
  /** a field manager for writes that name none (the HTTP front end takes it from the User-Agent) */
  fieldManager?: string;
}

/**
 * KubeClient's public surface over a Cluster. Structural: it satisfies BackupKube, RestoreKube and (through the
 * product's volumeKubeFromClient) VolumeKube, which pick from KubeClient.
 */
export class InProcessKube {
  readonly pageSize: number;
  readonly concurrency: number;
  /** every write, dry runs included, in the order it was made */
  readonly writes: WriteRecord[] = [];
  private readonly fieldManager: string;
  private discovery: ResourceIndex | undefined;

  constructor(readonly cluster: Cluster, options: InProcessKubeOptions = {}) {
    this.pageSize = options.pageSize ?? 500;
    this.concurrency = options.concurrency ?? 8;
    this.fieldManager = options.fieldManager ?? 'kubeflow-upgrader';
  }

  /** The writes that changed (or, not dry, would have changed) the cluster: dry runs left out. */
  realWrites(): WriteRecord[] {
    return this.writes.filter((w) => !w.dryRun);
  }

  // ---- discovery: the documents http.ts serves at /api/v1 and /apis/<group>/<version>, merged as KubeClient merges them

  async discover(options: { refresh?: boolean } = {}): Promise<ApiResource[]> {
    return (await this.resourceIndex(options)).resources;
  }

  async resourceIndex(options: { refresh?: boolean } = {}): Promise<ResourceIndex> {
    if (options.refresh || !this.discovery) this.discovery = this.readDiscovery();
    return this.discovery;
  }

  invalidateDiscovery(): void {
    this.discovery = undefined;
  }

  async findByKind(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
    return (await this.resourceIndex()).byKind(apiVersion, kind);
  }

  async findByResource(group: string, resource: string): Promise<ApiResource | undefined> {
    return (await this.resourceIndex()).byResource(group, resource);
  }

  private readDiscovery(): ResourceIndex {
    const defs = this.cluster.resources();
    const documents: GroupVersionResources[] = [];
    for (const [group, versions] of groupVersions(defs)) {
      // in server order, the preferred version first, as apiGroup() answers
      for (const version of versions) {
        const list = apiResourceList(defs, group, version) as ApiResourceList;
        documents.push({ group, version, preferredVersion: versions[0]!, groupVersions: versions, resources: list.resources ?? [] });
      }
    }
    return new ResourceIndex(mergeDiscovery(documents));
  }

  // ---- reads

  async *listPages(resource: ApiResource, options: ListOptions = {}): AsyncIterable<KubeObject[]> {
    const { items } = await this.listAll(resource, options);
    const limit = options.limit ?? this.pageSize;
    for (let at = 0; at < items.length; at += limit) yield items.slice(at, at + limit);
  }

  async listAll(resource: ApiResource, options: ListOptions = {}): Promise<{ items: KubeObject[]; resourceVersion: string | undefined }> {
    const subject: RequestSubject = { verb: 'list', resource: resource.resource, namespace: options.namespace };
    return this.call(subject, () => {
      const { def, version } = this.target(resource, options.version);
      const byLabel = labelMatcher(options.labelSelector);
      const byField = fieldMatcher(options.fieldSelector);
      const resourceVersion = String(this.cluster.store.currentRv());
      const items = this.cluster.store.scan(def, def.namespaced ? options.namespace : undefined)
        .filter((s) => byLabel(s.obj) && byField(s.obj))
        .map((s) => this.view(s, def, version));
      return { items, resourceVersion };
    });
  }

  async get(resource: ApiResource, name: string, namespace?: string): Promise<KubeObject> {
    return this.call({ verb: 'get', resource: resource.resource, namespace, name }, () => {
      const { def, version } = this.target(resource);
      const stored = this.cluster.getStored(def, name, namespace);
      if (!stored) throw notFoundFor(def, name);
      return this.view(stored, def, version);
    });
  }

  /** get, answering undefined instead of 404 NotFound */
  async tryGet(resource: ApiResource, name: string, namespace?: string): Promise<KubeObject | undefined> {
    try {
      return await this.get(resource, name, namespace);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async podLog(namespace: string, name: string, options: { container?: string; tailLines?: number } = {}): Promise<string> {
    return this.call({ verb: 'read the log of', resource: 'pods', namespace, name }, () => this.cluster.podLog(namespace, name, options.container, options.tailLines));
  }

  // ---- writes

  async create(resource: ApiResource, object: KubeObject, options: CreateOptions = {}): Promise<KubeObject> {
    const namespace = object.metadata?.namespace;
    return this.call({ verb: 'create', resource: resource.resource, namespace, name: object.metadata?.name }, () => {
      const { def, version } = this.target(resource);
      const body = withType(structuredClone(object), def, version);
      this.record('create', def, namespace, body.metadata.name, options.dryRun);
      return this.cluster.convert(this.cluster.create(def, body, this.writeOptions(options)), def, version);
    });
  }

  async replace(resource: ApiResource, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    return this.put(resource, object, options, 'main');
  }

  async replaceStatus(resource: ApiResource, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    return this.put(resource, object, options, 'status');
  }

  async patch(resource: ApiResource, name: string, namespace: string | undefined, patch: unknown, type: PatchType, options: PatchOptions = {}): Promise<KubeObject> {
    return this.patchAt(resource, name, namespace, 'main', patch, type, options);
  }

  async patchStatus(resource: ApiResource, name: string, namespace: string | undefined, patch: unknown, type: PatchType, options: PatchOptions = {}): Promise<KubeObject> {
    return this.patchAt(resource, name, namespace, 'status', patch, type, options);
  }

  async delete(resource: ApiResource, name: string, namespace?: string, options: DeleteOptions = {}): Promise<KubeObject | Record<string, unknown>> {
    return this.call({ verb: 'delete', resource: resource.resource, namespace, name }, () => {
      const { def, version } = this.target(resource);
      this.record('delete', def, namespace, name, options.dryRun);
      const result = this.cluster.deleteObject(def, name, namespace, { ...this.writeOptions(options), ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}) });
      return this.cluster.convert(result.object, def, version);
    });
  }

  // ---- watching and waiting

  /**
   * What http.ts serveWatch and KubeClient's startWatch make together: what exists now as ADDED, then every change
   * after it, each delivered asynchronously (never inside the caller's call), in resourceVersion order.
   */
  watch(resource: ApiResource, options: WatchOptions, onEvent: (event: WatchEvent) => void): () => void {
    let stopped = false;
    let def: ResourceDef;
    let version: string;
    try {
      ({ def, version } = this.target(resource, options.version));
    } catch (error) {
      queueMicrotask(() => { if (!stopped) options.onError?.(this.asKubeError(error, { verb: 'watch', resource: resource.resource, namespace: options.namespace })); });
      return () => { stopped = true; };
    }
    const byLabel = labelMatcher(options.labelSelector);
    const byField = fieldMatcher(options.fieldSelector);
    const matches = (s: Stored) => (options.namespace === undefined || s.obj.metadata.namespace === options.namespace) && byLabel(s.obj) && byField(s.obj);
    const refKey = `${def.group}/${def.resource}`;
    const listedRv = this.cluster.store.currentRv();
    const existing = this.cluster.store.scan(def, def.namespaced ? options.namespace : undefined).filter(matches);
    const later: Array<{ type: WatchEvent['type']; stored: Stored }> = [];
    let listed = false;
    const unsubscribe = this.cluster.store.subscribeRaw((e) => {
      if (stopped || e.refKey !== refKey || e.rv <= listedRv || !matches(e.stored)) return;
      if (!listed) later.push({ type: e.type, stored: e.stored });
      else onEvent({ type: e.type, object: this.view(e.stored, def, version) });
    });
    setImmediate(() => {
      if (stopped) return;
      for (const s of existing) if (!stopped) onEvent({ type: 'ADDED', object: this.view(s, def, version) });
      listed = true;
      for (const e of later.splice(0)) if (!stopped) onEvent({ type: e.type, object: this.view(e.stored, def, version) });
    });
    return () => {
      stopped = true;
      unsubscribe();
    };
  }

  waitFor(resource: ApiResource, name: string, namespace: string | undefined, predicate: (object: KubeObject | undefined) => boolean, options: WaitOptions): Promise<KubeObject | undefined> {
    return waitFor(this, resource, name, namespace, predicate, options);
  }

  // ---- plumbing

  private async put(resource: ApiResource, object: KubeObject, options: WriteOptions, subresource: 'main' | 'status'): Promise<KubeObject> {
    const namespace = object.metadata?.namespace;
    const name = object.metadata?.name;
    if (!name) throw new Error(`Cannot replace a ${resource.kind} without metadata.name.`);
    return this.call({ verb: subresource === 'status' ? 'replace status of' : 'replace', resource: resource.resource, namespace, name }, () => {
      const { def, version } = this.target(resource);
      const body = withType(structuredClone(object), def, version);
      this.record('update', def, namespace, name, options.dryRun, subresource);
      const out = subresource === 'status'
        ? this.cluster.updateStatus(def, body, this.writeOptions(options))
        : this.cluster.update(def, body, this.writeOptions(options));
      return this.cluster.convert(out, def, version);
    });
  }

  private async patchAt(resource: ApiResource, name: string, namespace: string | undefined, subresource: 'main' | 'status', patch: unknown, type: PatchType, options: PatchOptions): Promise<KubeObject> {
    if (type === 'apply' && !options.fieldManager) throw new Error(`A server-side apply of ${resource.resource} ${name} needs a fieldManager.`);
    return this.call({ verb: subresource === 'status' ? 'patch status of' : 'patch', resource: resource.resource, namespace, name }, () => {
      const { def, version } = this.target(resource);
      this.record('patch', def, namespace, name, options.dryRun, subresource);
      const writeOptions = this.writeOptions(options);
      if (type === 'apply') {
        const config = structuredClone(patch) as KubeObject;
        config.metadata ??= {};
        config.metadata.name = name;
        if (def.namespaced) config.metadata.namespace = namespace;
        config.apiVersion ??= apiVersionOf(def.group, version);
        config.kind ??= def.kind;
        return this.cluster.convert(this.cluster.apply(def, config, options.fieldManager!, options.force === true, subresource, writeOptions), def, version);
      }
      const view = (current: KubeObject) => this.cluster.convert(current, def, version);
      let change: (current: KubeObject) => KubeObject;
      if (type === 'merge') change = (current) => mergePatch(view(current), patch) as KubeObject;
      else if (type === 'json') change = (current) => jsonPatch(view(current), patch) as KubeObject;
      else {
        // strategic merge is served for built-in kinds only (http.ts; apiserver's patch handler answers 415)
        if (!def.builtin) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
        change = (current) => strategicMerge(view(current), patch) as KubeObject;
      }
      return this.cluster.convert(this.cluster.patch(def, name, namespace, change, subresource, writeOptions), def, version);
    });
  }

  private writeOptions(options: WriteOptions): { dryRun: boolean; fieldManager: string; user: UserInfo } {
    return { dryRun: options.dryRun === true, fieldManager: options.fieldManager ?? this.fieldManager, user: ADMIN };
  }

  private record(verb: WriteVerb, def: ResourceDef, namespace: string | undefined, name: string | undefined, dryRun: boolean | undefined, subresource: 'main' | 'status' = 'main'): void {
    this.writes.push({
      verb, resource: def.group ? `${def.resource}.${def.group}` : def.resource, namespace: def.namespaced ? namespace : undefined, name,
      ...(subresource === 'status' ? { subresource } : {}), dryRun: dryRun === true,
    });
  }

  /** The served resource and the version asked for; a 404 as http.ts answers a path it does not route. */
  private target(resource: ApiResource, version = resource.version): { def: ResourceDef; version: string } {
    const def = this.cluster.findResource(resource);
    if (!def || !def.versions.some((v) => v.name === version && v.served)) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    return { def, version };
  }

  /** A stored object as a client of `version` reads it: its own copy, at that apiVersion. */
  private view(stored: Stored, def: ResourceDef, version: string): KubeObject {
    return this.cluster.convert(JSON.parse(stored.json) as KubeObject, def, version);
  }

  /** Runs one request; a refusal becomes the KubeApiError the product would build from the server's Status. */
  private async call<T>(subject: RequestSubject, work: () => T): Promise<T> {
    // answered after the caller's synchronous code, as a request's answer is
    await Promise.resolve();
    try {
      return work();
    } catch (error) {
      throw this.asKubeError(error, subject);
    }
  }

  private asKubeError(error: unknown, subject: RequestSubject): unknown {
    if (error instanceof ApiError) return kubeApiErrorFrom(error.status, JSON.stringify(error.toStatus()), undefined, subject);
    return error;
  }
}

/** A body without apiVersion/kind takes them from the URL, as the real decoder defaults them (http.ts withTypeFromUrl). */
function withType(body: KubeObject, def: ResourceDef, version: string): KubeObject {
  body.apiVersion ??= apiVersionOf(def.group, version);
  body.kind ??= def.kind;
  body.metadata ??= {};
  return body;
}

function notFoundFor(def: ResourceDef, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${def.group ? `${def.resource}.${def.group}` : def.resource} "${name}" not found`, { name, kind: def.resource, ...(def.group ? { group: def.group } : {}) });
}
