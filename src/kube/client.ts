// KubeClient: the one seam to the Kubernetes API. Every engine's request goes through here, so that retries,
// concurrency, error messages and request counts are the same everywhere.
import type { KubeConfig } from '@kubernetes/client-node';
import { RetryError, RetryPolicy, type RetrySettings } from '../retry/policy.ts';
import { loadKubeConfig } from './config.ts';
import { RequestCounter, type Purpose, type PurposeCounts, type Verb } from './counters.ts';
import { mergeDiscovery, ResourceIndex, type ApiGroupList, type ApiResourceList, type GroupVersionResources } from './discovery.ts';
import { classifyKubeError, KubeApiError, kubeApiErrorFrom, isNotFound, type RequestSubject } from './errors.ts';
import { groupVersionPath, resourcePath, withQuery } from './paths.ts';
import { Transport } from './transport.ts';
import { parseRetryAfter } from '../retry/retry-after.ts';
import { apiVersionOf, type ApiResource, type KubeObject } from './types.ts';
import { startWatch, waitFor, type WaitOptions, type WatchEvent, type WatchOptions } from './watch.ts';
import { describe } from '../errors/index.ts';

export interface KubeClientOptions {
  kubeconfig?: string;
  context?: string;
  /** requests in flight at once, shared by every call of this client (`api-concurrency`) */
  concurrency?: number;
  /** items per LIST page */
  pageSize?: number;
  retry?: Partial<RetrySettings> | RetryPolicy;
  /** per request, in milliseconds */
  timeoutMs?: number;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** page size for this list */
  limit?: number;
  /** list at this version instead of the resource's */
  version?: string;
}

export interface WriteOptions {
  /** dryRun=All: the server validates and admits, and stores nothing */
  dryRun?: boolean;
  fieldManager?: string;
}

export interface CreateOptions extends WriteOptions {
  /** the caller treats 409 AlreadyExists as success, so a create whose answer was lost may be sent again */
  safeToRetry?: boolean;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';
export interface PatchOptions extends WriteOptions {
  /** server-side apply: take over fields other managers own */
  force?: boolean;
  /** a JSON patch is resent only if the caller says its operations are idempotent */
  safeToRetry?: boolean;
}

export interface DeleteOptions extends WriteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

const patchContentTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Restarting a list more often than this means the server keeps expiring it faster than we can read it. */
const maxListRestarts = 5;

interface SendOptions {
  body?: unknown;
  contentType?: string;
  idempotent: boolean;
  dryRun?: boolean;
  /** the answer is text (a log), not JSON */
  text?: boolean;
  /** what the request is for, when its verb does not say it (counters.ts) */
  purpose?: Purpose;
}

export class KubeClient {
  readonly counter = new RequestCounter();
  readonly retry: RetryPolicy;
  readonly pageSize: number;
  private discovery: Promise<ResourceIndex> | undefined;

  private constructor(private readonly transport: Transport, options: KubeClientOptions) {
    this.retry = options.retry instanceof RetryPolicy ? options.retry : new RetryPolicy(options.retry);
    this.pageSize = options.pageSize ?? 500;
  }

  static async load(options: KubeClientOptions = {}): Promise<KubeClient> {
    return KubeClient.fromKubeConfig(loadKubeConfig(options), options);
  }

  static async fromKubeConfig(config: KubeConfig, options: KubeClientOptions = {}): Promise<KubeClient> {
    const concurrency = options.concurrency ?? 8;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`api-concurrency must be a whole number of at least 1, not ${concurrency}.`);
    if (options.pageSize !== undefined && (!Number.isInteger(options.pageSize) || options.pageSize < 1)) {
      throw new Error(`The page size must be a whole number of at least 1, not ${options.pageSize}.`);
    }
    const transport = await Transport.create(config, { concurrency, timeoutMs: options.timeoutMs ?? 60_000 });
    return new KubeClient(transport, options);
  }

  get concurrency(): number {
    return this.transport.concurrency;
  }

  /** requests in flight at the transport now (inside its concurrency limit) */
  get inFlight(): number {
    return this.transport.inFlight;
  }

  /** Requests sent so far, per verb, retries included (dry runs apart). */
  requestCounts(): ReturnType<RequestCounter['snapshot']> {
    return this.counter.snapshot();
  }

  /** Requests sent so far, per purpose (status patches, discovery and dry runs apart from their verbs). */
  requestPurposes(): PurposeCounts {
    return this.counter.purposes();
  }

  close(): void {
    this.transport.close();
  }

  // ---- discovery

  /** Every resource the server serves (no subresources), cached until `refresh` or invalidateDiscovery(). */
  async discover(options: { refresh?: boolean } = {}): Promise<ApiResource[]> {
    return (await this.resourceIndex(options)).resources;
  }

  async resourceIndex(options: { refresh?: boolean } = {}): Promise<ResourceIndex> {
    if (options.refresh || !this.discovery) {
      const pending = this.readDiscovery();
      this.discovery = pending;
      pending.catch(() => {
        if (this.discovery === pending) this.discovery = undefined;
      });
    }
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

  private async readDiscovery(): Promise<ResourceIndex> {
    const subject = (what: string): RequestSubject => ({ verb: 'discover', resource: what });
    const core = (await this.send<{ versions: string[] }>('get', subject('/api'), 'GET', '/api', { idempotent: true, purpose: 'discovery' })).versions;
    const groups = (await this.send<ApiGroupList>('get', subject('/apis'), 'GET', '/apis', { idempotent: true, purpose: 'discovery' })).groups;
    const wanted: Array<Omit<GroupVersionResources, 'resources'>> = [
      ...core.map((version) => ({ group: '', version, preferredVersion: core[0]!, groupVersions: core })),
      ...groups.flatMap((g) => {
        const groupVersions = g.versions.map((v) => v.version);
        const preferredVersion = g.preferredVersion?.version ?? groupVersions[0]!;
        return groupVersions.map((version) => ({ group: g.name, version, preferredVersion, groupVersions }));
      }),
    ];
    const problems: string[] = [];
    const documents = await Promise.all(
      wanted.map(async (gv) => {
        const path = groupVersionPath(gv.group, gv.version);
        try {
          const list = await this.send<ApiResourceList>('get', subject(path), 'GET', path, { idempotent: true, purpose: 'discovery' });
          return [{ ...gv, resources: list.resources ?? [] }];
        } catch (error) {
          // An aggregated API that is down (metrics.k8s.io, typically) must not hide every other resource.
          problems.push(describe(error));
          return [];
        }
      }),
    );
    return new ResourceIndex(mergeDiscovery(documents.flat()), problems);
  }

  // ---- reads

  /**
   * Lists in pages of `limit`, each item carrying apiVersion and kind. When the server expires the continue token
   * (410), the list goes on from the token the server offers, or starts over; either way no item is yielded twice.
   */
  async *listPages(resource: ApiResource, options: ListOptions = {}): AsyncIterable<KubeObject[]> {
    for await (const page of this.pages(resource, options)) if (page.items.length > 0) yield page.items;
  }

  private async *pages(resource: ApiResource, options: ListOptions): AsyncIterable<{ items: KubeObject[]; resourceVersion: string | undefined }> {
    const limit = options.limit ?? this.pageSize;
    const version = options.version ?? resource.version;
    const apiVersion = apiVersionOf(resource.group, version);
    const base = resourcePath(resource, { namespace: options.namespace, version });
    const subject: RequestSubject = { verb: 'list', resource: resource.resource, namespace: options.namespace };
    let continueToken: string | undefined;
    let restarts = 0;
    // What was yielded, for a restart from scratch after a 410. A LIST comes in key order (namespace/name: the
    // continue token itself means "after this key"), so the last key stands for everything before it: one string
    // instead of a set of every item's key. A server that answered out of order cannot be resumed safely that way:
    // its 410 is passed on rather than risk a lost or doubled item.
    let lastKey: string | undefined;
    let ordered = true;
    let afterRestart = false;
    for (;;) {
      const path = withQuery(base, { limit, continue: continueToken, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector });
      let page: { metadata?: { continue?: string; resourceVersion?: string }; items?: Array<Record<string, unknown>> };
      try {
        page = await this.send('list', subject, 'GET', path, { idempotent: true });
      } catch (error) {
        if (!(error instanceof KubeApiError && error.status === 410 && continueToken !== undefined)) throw error;
        if (++restarts > maxListRestarts) throw error;
        continueToken = error.continueToken;
        if (continueToken === undefined && !ordered) throw error;
        afterRestart = true;
        continue;
      }
      const items: KubeObject[] = [];
      for (const raw of page.items ?? []) {
        // A LIST names apiVersion and kind once for all items; each item needs them to stand alone.
        const item = (raw.apiVersion && raw.kind ? raw : { apiVersion, kind: resource.kind, ...raw }) as KubeObject;
        const key = `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`;
        if (afterRestart && lastKey !== undefined && key <= lastKey) continue;
        if (lastKey === undefined || key > lastKey) lastKey = key;
        else ordered = false;
        items.push(item);
      }
      continueToken = page.metadata?.continue || undefined;
      yield { items, resourceVersion: page.metadata?.resourceVersion };
      if (continueToken === undefined) return;
    }
  }

  /** All items of a list, and the resourceVersion to watch from. */
  async listAll(resource: ApiResource, options: ListOptions = {}): Promise<{ items: KubeObject[]; resourceVersion: string | undefined }> {
    const items: KubeObject[] = [];
    let resourceVersion: string | undefined;
    for await (const page of this.pages(resource, options)) {
      for (const item of page.items) items.push(item);
      resourceVersion = page.resourceVersion ?? resourceVersion;
    }
    return { items, resourceVersion };
  }

  async get(resource: ApiResource, name: string, namespace?: string): Promise<KubeObject> {
    const path = resourcePath(resource, { namespace, name });
    return this.send('get', { verb: 'get', resource: resource.resource, namespace, name }, 'GET', path, { idempotent: true });
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

  /** The last `tailLines` lines of a container's log (GET pods/<name>/log). */
  async podLog(namespace: string, name: string, options: { container?: string; tailLines?: number } = {}): Promise<string> {
    const path = withQuery(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/log`, { container: options.container, tailLines: options.tailLines });
    return this.send('get', { verb: 'read the log of', resource: 'pods', namespace, name }, 'GET', path, { idempotent: true, text: true });
  }

  // ---- writes

  async create(resource: ApiResource, object: KubeObject, options: CreateOptions = {}): Promise<KubeObject> {
    const namespace = object.metadata?.namespace;
    const path = withQuery(resourcePath(resource, { namespace }), writeQuery(options));
    return this.send('create', { verb: 'create', resource: resource.resource, namespace, name: object.metadata?.name }, 'POST', path, {
      body: object,
      idempotent: options.safeToRetry === true,
      dryRun: options.dryRun === true,
    });
  }

  /** PUT: a full update; 409 Conflict when metadata.resourceVersion is set and stale. */
  async replace(resource: ApiResource, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    return this.put(resource, object, options, undefined);
  }

  async replaceStatus(resource: ApiResource, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    return this.put(resource, object, options, 'status');
  }

  async patch(resource: ApiResource, name: string, namespace: string | undefined, patch: unknown, type: PatchType, options: PatchOptions = {}): Promise<KubeObject> {
    return this.patchAt(resource, name, namespace, undefined, patch, type, options);
  }

  /** PATCH of the status subresource: only the status of what it produces is kept. */
  async patchStatus(resource: ApiResource, name: string, namespace: string | undefined, patch: unknown, type: PatchType, options: PatchOptions = {}): Promise<KubeObject> {
    return this.patchAt(resource, name, namespace, 'status', patch, type, options);
  }

  private async patchAt(resource: ApiResource, name: string, namespace: string | undefined, subresource: 'status' | undefined, patch: unknown, type: PatchType, options: PatchOptions): Promise<KubeObject> {
    if (type === 'apply' && !options.fieldManager) throw new Error(`A server-side apply of ${resource.resource} ${name} needs a fieldManager.`);
    const query = { ...writeQuery(options), ...(type === 'apply' && options.force ? { force: true } : {}) };
    const path = withQuery(resourcePath(resource, { namespace, name, ...(subresource ? { subresource } : {}) }), query);
    return this.send('patch', { verb: subresource ? 'patch status of' : 'patch', resource: resource.resource, namespace, name }, 'PATCH', path, {
      body: patch,
      contentType: patchContentTypes[type],
      // merge, strategic and apply patches state an end result, so sending one twice changes nothing more
      idempotent: type !== 'json' || options.safeToRetry === true,
      dryRun: options.dryRun === true,
      ...(subresource ? { purpose: 'status' as const } : {}),
    });
  }

  /** Returns what the server answers: the object (when finalizers hold it) or a Status. */
  async delete(resource: ApiResource, name: string, namespace?: string, options: DeleteOptions = {}): Promise<KubeObject | Record<string, unknown>> {
    const path = withQuery(resourcePath(resource, { namespace, name }), { dryRun: options.dryRun ? 'All' : undefined });
    const body = options.propagationPolicy ? { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: options.propagationPolicy } : undefined;
    return this.send('delete', { verb: 'delete', resource: resource.resource, namespace, name }, 'DELETE', path, {
      body,
      idempotent: true,
      dryRun: options.dryRun === true,
    });
  }

  // ---- watching and waiting

  /** Calls onEvent for each change (existing objects first, as ADDED); returns the function that stops it. */
  watch(resource: ApiResource, options: WatchOptions, onEvent: (event: WatchEvent) => void): () => void {
    return startWatch(
      {
        listAll: (r, o) => this.listAll(r, o),
        stream: (path, signal) => {
          this.counter.record('watch');
          return this.transport.stream('GET', path, signal);
        },
        backoffMs: (attempt) => this.retry.backoffMs(attempt),
      },
      resource,
      options,
      onEvent,
    );
  }

  /** Resolves with the object once predicate holds (undefined passed while it does not exist). */
  waitFor(resource: ApiResource, name: string, namespace: string | undefined, predicate: (object: KubeObject | undefined) => boolean, options: WaitOptions): Promise<KubeObject | undefined> {
    return waitFor(this, resource, name, namespace, predicate, options);
  }

  // ---- the one request path

  private async send<T>(verb: Verb, subject: RequestSubject, method: string, path: string, options: SendOptions): Promise<T> {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const dryRun = options.dryRun === true;
    return this.retry.run(
      { verb: subject.verb, target: describeTarget(subject), idempotent: options.idempotent || dryRun },
      classifyKubeError,
      async () => {
        this.counter.record(verb, dryRun, options.purpose);
        const response = await this.transport.request(method, path, { ...(body === undefined ? {} : { body }), ...(options.contentType ? { contentType: options.contentType } : {}) });
        const text = response.body.toString('utf8');
        if (response.status < 200 || response.status >= 300) {
          const retryAfter = parseRetryAfter(headerText(response.headers['retry-after']), Date.now());
          throw kubeApiErrorFrom(response.status, text, retryAfter, subject);
        }
        if (options.text) return text as T;
        return (text === '' ? {} : JSON.parse(text)) as T;
      },
      {
        giveUp: (error, summary) => {
          if (error instanceof KubeApiError) return summary.attempts > 1 ? error.afterAttempts(summary.attempts, summary.elapsedMs) : error;
          return new RetryError(error, summary);
        },
      },
    );
  }

  private async put(resource: ApiResource, object: KubeObject, options: WriteOptions, subresource: 'status' | undefined): Promise<KubeObject> {
    const namespace = object.metadata?.namespace;
    const name = object.metadata?.name;
    if (!name) throw new Error(`Cannot replace a ${resource.kind} without metadata.name.`);
    const path = withQuery(resourcePath(resource, { namespace, name, ...(subresource ? { subresource } : {}) }), writeQuery(options));
    return this.send('update', { verb: subresource ? 'replace status of' : 'replace', resource: resource.resource, namespace, name }, 'PUT', path, {
      body: object,
      idempotent: true,
      dryRun: options.dryRun === true,
      ...(subresource ? { purpose: 'status' as const } : {}),
    });
  }
}

function writeQuery(options: WriteOptions): Record<string, string | undefined> {
  return { dryRun: options.dryRun ? 'All' : undefined, fieldManager: options.fieldManager };
}

function describeTarget(subject: RequestSubject): string {
  const where = [subject.namespace, subject.name].filter(Boolean).join('/');
  return where ? `${subject.resource} ${where}` : subject.resource;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
