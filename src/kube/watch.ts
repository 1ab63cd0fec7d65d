// Watching with a re-list fallback, and waiting for an object to reach a state.
import type { IncomingMessage } from 'node:http';
import { classifyKubeError, describeSubject, kubeApiErrorFrom } from './errors.ts';
import { resourcePath, withQuery } from './paths.ts';
import { apiVersionOf, type ApiResource, type KubeObject } from './types.ts';
import { KfuError } from '../errors/index.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  version?: string;
  /** a failure the watch cannot get past (403, 404 of the resource); the watch has stopped */
  onError?: (error: unknown) => void;
}

export interface WatchBackend {
  listAll(resource: ApiResource, options: { namespace?: string; labelSelector?: string; fieldSelector?: string; version?: string }): Promise<{ items: KubeObject[]; resourceVersion: string | undefined }>;
  stream(path: string, signal: AbortSignal): Promise<IncomingMessage>;
  backoffMs(attempt: number): number;
}

class WatchExpired extends Error {}

/** List, report what exists as ADDED, then watch from the list's resourceVersion; re-list when that goes stale. */
export function startWatch(backend: WatchBackend, resource: ApiResource, options: WatchOptions, onEvent: (event: WatchEvent) => void): () => void {
  const controller = new AbortController();
  const { signal } = controller;
  const listOptions = {
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
    ...(options.version ? { version: options.version } : {}),
  };
  const apiVersion = apiVersionOf(resource.group, options.version ?? resource.version);
  // uid → a stub of each object seen, so that a re-list reports only changes, deletions included
  const known = new Map<string, KubeObject>();
  const stubOf = (object: KubeObject): KubeObject => ({
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name: object.metadata.name, namespace: object.metadata.namespace, uid: object.metadata.uid, resourceVersion: object.metadata.resourceVersion },
  });

  const relist = async (): Promise<string | undefined> => {
    const { items, resourceVersion } = await backend.listAll(resource, listOptions);
    const present = new Set<string>();
    for (const object of items) {
      const uid = object.metadata.uid ?? object.metadata.name ?? '';
      present.add(uid);
      const before = known.get(uid);
      if (before?.metadata.resourceVersion !== object.metadata.resourceVersion) {
        known.set(uid, stubOf(object));
        if (!signal.aborted) onEvent({ type: before === undefined ? 'ADDED' : 'MODIFIED', object });
      }
    }
    for (const [uid, stub] of known) {
      if (present.has(uid)) continue;
      known.delete(uid);
      if (!signal.aborted) onEvent({ type: 'DELETED', object: stub });
    }
    return resourceVersion;
  };

  const follow = async (resourceVersion: string | undefined): Promise<string | undefined> => {
    const path = withQuery(resourcePath(resource, { namespace: options.namespace, version: options.version }), {
      watch: 1,
      resourceVersion,
      allowWatchBookmarks: true,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
    });
    const response = await backend.stream(path, signal);
    if ((response.statusCode ?? 0) >= 300) {
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      const error = kubeApiErrorFrom(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), undefined, { verb: 'watch', resource: resource.resource, namespace: options.namespace });
      if (error.status === 410) throw new WatchExpired();
      throw error;
    }
    let buffered = '';
    let last = resourceVersion;
    response.setEncoding('utf8');
    for await (const chunk of response) {
      buffered += chunk as string;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line) continue;
        const event = JSON.parse(line) as { type: string; object: KubeObject & { code?: number } };
        if (event.type === 'ERROR') {
          if (event.object.code === 410) throw new WatchExpired();
          throw kubeApiErrorFrom(event.object.code ?? 500, JSON.stringify(event.object), undefined, { verb: 'watch', resource: resource.resource, namespace: options.namespace });
        }
        last = event.object.metadata?.resourceVersion ?? last;
        if (event.type === 'BOOKMARK') continue;
        const object = event.object.apiVersion ? event.object : { ...event.object, apiVersion, kind: resource.kind };
        const uid = object.metadata.uid ?? object.metadata.name ?? '';
        if (event.type === 'DELETED') known.delete(uid);
        else known.set(uid, stubOf(object));
        if (!signal.aborted) onEvent({ type: event.type as WatchEventType, object });
      }
    }
    return last; // the server closed the watch (its timeout): go on from where it was
  };

  void (async () => {
    let resourceVersion: string | undefined;
    let listed = false;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (!listed) {
          resourceVersion = await relist();
          listed = true;
        }
        resourceVersion = await follow(resourceVersion);
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof WatchExpired) {
          listed = false;
          continue;
        }
        const classification = classifyKubeError(error);
        if (!classification.retryable) {
          options.onError?.(error);
          return;
        }
        failures++;
        listed = false; // events may have been missed while the stream was down
        await new Promise((resolve) => setTimeout(resolve, Math.max(backend.backoffMs(Math.min(failures, 8)), classification.retryAfterMs ?? 0)));
      }
    }
  })();
  return () => controller.abort();
}

export interface WaitOptions {
  timeoutMs: number;
  /** how the condition reads in the timeout message: 'be Active', 'complete' */
  description?: string;
  /** re-read the object this often as well, in case the watch is silently broken */
  pollMs?: number;
}

export class WaitTimeoutError extends KfuError {
  static override readonly errorId = 'WaitTimeoutError';
  constructor(sentence: string) {
    super(sentence, { kind: 'failed' });
  }
}

interface WaitClient {
  watch(resource: ApiResource, options: WatchOptions, onEvent: (event: WatchEvent) => void): () => void;
  tryGet(resource: ApiResource, name: string, namespace?: string): Promise<KubeObject | undefined>;
}

export function waitFor(
  client: WaitClient,
  resource: ApiResource,
  name: string,
  namespace: string | undefined,
  predicate: (object: KubeObject | undefined) => boolean,
  options: WaitOptions,
): Promise<KubeObject | undefined> {
  const subject = describeSubject({ verb: '', resource: resource.resource, namespace, name }).trim();
  return new Promise((resolve, reject) => {
    let settled = false;
    let lastSeen: KubeObject | undefined;
    let stop: () => void = () => undefined;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poller);
      stop();
      outcome();
    };
    const consider = (object: KubeObject | undefined) => {
      if (settled) return;
      lastSeen = object;
      let satisfied: boolean;
      try {
        satisfied = predicate(object);
      } catch (error) {
        finish(() => reject(error));
        return;
      }
      if (satisfied) finish(() => resolve(object));
    };
    const timer = setTimeout(() => {
      finish(() => reject(new WaitTimeoutError(`Timed out after ${formatSeconds(options.timeoutMs)} waiting for ${subject} to ${options.description ?? 'reach the expected state'} (${describeLastSeen(lastSeen)}).`)));
    }, options.timeoutMs);
    const check = () =>
      client.tryGet(resource, name, namespace).then(consider, (error: unknown) => {
        if (!classifyKubeError(error).retryable) finish(() => reject(error));
      });
    const poller = setInterval(check, options.pollMs ?? 10_000);
    stop = client.watch(resource, { ...(namespace ? { namespace } : {}), fieldSelector: `metadata.name=${name}`, onError: (error) => finish(() => reject(error)) }, (event) => {
      if (event.object.metadata.name !== name) return;
      consider(event.type === 'DELETED' ? undefined : event.object);
    });
    void check();
  });
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}

function describeLastSeen(object: KubeObject | undefined): string {
  if (!object) return 'it does not exist';
  const status = object.status as { phase?: unknown; conditions?: Array<{ type?: unknown; status?: unknown }> } | undefined;
  const parts: string[] = [];
  if (typeof status?.phase === 'string') parts.push(`phase ${status.phase}`);
  const conditions = (status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => String(c.type));
  if (conditions.length) parts.push(`conditions ${conditions.join(', ')}`);
  return parts.length ? `last seen with ${parts.join(', ')}` : `last seen at resourceVersion ${object.metadata.resourceVersion ?? 'unknown'}`;
}
