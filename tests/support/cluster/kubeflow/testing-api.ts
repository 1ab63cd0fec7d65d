// A small in-memory InProcessApi for the controllers' unit tests, until (and beside) the embedded API server.
// (The errors and resourceVersion rules are the API server's: upstream kubernetes/apimachinery pkg/api/errors.)
// It keeps the semantics the controllers depend on: AlreadyExists / NotFound / Conflict errors, resourceVersion
// bumps, finalizers holding a deletion, a namespace being required for namespaced objects, equality label
// selectors, and events delivered after the write returns, in order. No garbage collector, no admission.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type {
  ClusterApiError, ClusterEvent, DeleteOptions, InProcessApi, ListOptions, ResourceRef,
} from '../contract.ts';

const clusterScoped = new Set([
  '/namespaces', 'apiextensions.k8s.io/customresourcedefinitions', 'kubeflow.org/profiles',
  'rbac.authorization.k8s.io/clusterroles', 'rbac.authorization.k8s.io/clusterrolebindings',
  '/persistentvolumes', 'storage.k8s.io/storageclasses', 'serving.kserve.io/clusterservingruntimes',
]);

function apiError(status: number, reason: string, message: string): ClusterApiError {
  return Object.assign(new Error(message), { status, reason });
}

// RBAC objects only need a valid path segment (hence `namespaceAdmin`); everything else here a DNS-1123 subdomain.
function validName(ref: ResourceRef, name: string): boolean {
  if (ref.group === 'rbac.authorization.k8s.io') return name !== '.' && name !== '..' && !/[/%]/.test(name);
  return name.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name);
}

function refKey(ref: ResourceRef): string {
  return `${ref.group}/${ref.resource}`;
}

function matchesLabels(labels: Record<string, string> | undefined, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').map((term) => term.trim()).filter(Boolean).every((term) => {
    const notEqual = term.match(/^([^!=]+)!=(.*)$/);
    if (notEqual) return labels?.[notEqual[1]!.trim()] !== notEqual[2]!.trim();
    const equal = term.match(/^([^!=]+)==?(.*)$/);
    if (equal) return labels?.[equal[1]!.trim()] === equal[2]!.trim();
    if (term.startsWith('!')) return labels?.[term.slice(1)] === undefined;
    return labels?.[term] !== undefined;
  });
}

function matchesFields(object: KubeObject, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [path, value] = term.split('=') as [string, string | undefined];
    const actual = path === 'metadata.name' ? object.metadata.name : path === 'metadata.namespace' ? object.metadata.namespace : undefined;
    return actual === value;
  });
}

function mergePatchValue(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatchValue(result[key], value);
  }
  return result;
}

export interface MemoryApi extends InProcessApi {
  /** resolves once every event emitted so far has been delivered */
  drained(): Promise<void>;
}

export function createMemoryApi(): MemoryApi {
  const store = new Map<string, Map<string, KubeObject>>();
  const listeners = new Set<(event: ClusterEvent) => void>();
  let revision = 0;
  let pending: ClusterEvent[] = [];
  let flushScheduled = false;

  const bucket = (ref: ResourceRef) => {
    let objects = store.get(refKey(ref));
    if (!objects) store.set(refKey(ref), (objects = new Map()));
    return objects;
  };
  const objectKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;
  const namespaced = (ref: ResourceRef) => !clusterScoped.has(refKey(ref));

  const emit = (type: ClusterEvent['type'], ref: ResourceRef, object: KubeObject) => {
    pending.push({ type, ref, object: structuredClone(object) });
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      const events = pending;
      pending = [];
      for (const event of events) for (const listener of listeners) listener(event);
    });
  };

  const requireExisting = (ref: ResourceRef, name: string | undefined, namespace: string | undefined) => {
    const existing = name === undefined ? undefined : bucket(ref).get(objectKey(namespace, name));
    if (!existing) throw apiError(404, 'NotFound', `${ref.resource}${ref.group ? `.${ref.group}` : ''} "${name}" not found`);
    return existing;
  };

  const write = (ref: ResourceRef, next: KubeObject): KubeObject => {
    const { name, namespace } = next.metadata;
    next.metadata.resourceVersion = String(++revision);
    const key = objectKey(namespace, name!);
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length)) {
      bucket(ref).delete(key);
      emit('DELETED', ref, next);
    } else {
      bucket(ref).set(key, next);
      emit('MODIFIED', ref, next);
    }
    return structuredClone(next);
  };

  // An update that changes nothing is not written and wakes no watcher: the API server's storage compares the new
  // object with the stored one and skips the write (kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/
  // store.go, GuaranteedUpdate). A controller whose update is a no-op (the profile controller's dropped condition)
  // therefore does not loop.
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, canonical(v)]));
  };
  const unchanged = (existing: KubeObject, next: KubeObject): boolean =>
    JSON.stringify(canonical(existing)) === JSON.stringify(canonical(next));

  const checkFresh = (existing: KubeObject, object: KubeObject) => {
    const sent = object.metadata.resourceVersion;
    if (sent && sent !== existing.metadata.resourceVersion) {
      throw apiError(409, 'Conflict', `Operation cannot be fulfilled on ${existing.kind} "${existing.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
  };

  return {
    create(ref, object) {
      const created = structuredClone(object);
      const meta = created.metadata;
      if (!meta.name && meta.generateName) meta.name = meta.generateName + randomUUID().slice(0, 5);
      if (!meta.name || !validName(ref, meta.name)) {
        throw apiError(422, 'Invalid', `${object.kind} "${meta.name ?? ''}" is invalid: metadata.name: Invalid value`);
      }
      if (!namespaced(ref)) delete meta.namespace;
      else if (!meta.namespace) throw apiError(422, 'Invalid', `${object.kind} "${meta.name}" is invalid: metadata.namespace: Required value`);
      else if (!bucket({ group: '', resource: 'namespaces' }).has(objectKey(undefined, meta.namespace))) {
        throw apiError(404, 'NotFound', `namespaces "${meta.namespace}" not found`);
      }
      const key = objectKey(meta.namespace, meta.name);
      if (bucket(ref).has(key)) throw apiError(409, 'AlreadyExists', `${ref.resource} "${meta.name}" already exists`);
      meta.uid = randomUUID();
      meta.creationTimestamp = new Date().toISOString();
      meta.generation = 1;
      meta.resourceVersion = String(++revision);
      if (created.kind === 'Namespace') created.status = { phase: 'Active' };
      bucket(ref).set(key, created);
      emit('ADDED', ref, created);
      return structuredClone(created);
    },
    get(ref, name, namespace) {
      const found = bucket(ref).get(objectKey(namespaced(ref) ? namespace : undefined, name));
      return found && structuredClone(found);
    },
    list(ref, options: ListOptions = {}) {
      return [...bucket(ref).values()]
        .filter((o) => options.namespace === undefined || o.metadata.namespace === options.namespace)
        .filter((o) => matchesLabels(o.metadata.labels, options.labelSelector) && matchesFields(o, options.fieldSelector))
        .map((o) => structuredClone(o));
    },
    update(ref, object) {
      const existing = requireExisting(ref, object.metadata.name, namespaced(ref) ? object.metadata.namespace : undefined);
      checkFresh(existing, object);
      const next = structuredClone(object);
      next.metadata = { ...next.metadata, uid: existing.metadata.uid, creationTimestamp: existing.metadata.creationTimestamp };
      if (existing.metadata.deletionTimestamp) next.metadata.deletionTimestamp = existing.metadata.deletionTimestamp;
      if ('status' in existing) next.status = existing.status;
      else delete next.status;
      next.metadata.resourceVersion = existing.metadata.resourceVersion;
      if (unchanged(existing, next)) return structuredClone(existing);
      return write(ref, next);
    },
    updateStatus(ref, object) {
      const existing = requireExisting(ref, object.metadata.name, namespaced(ref) ? object.metadata.namespace : undefined);
      checkFresh(existing, object);
      return write(ref, { ...structuredClone(existing), status: structuredClone(object.status) });
    },
    mergePatch(ref, name, namespace, patch) {
      const existing = requireExisting(ref, name, namespaced(ref) ? namespace : undefined);
      const next = mergePatchValue(structuredClone(existing), patch) as KubeObject;
      next.metadata.uid = existing.metadata.uid;
      return write(ref, next);
    },
    delete(ref, name, namespace, _options?: DeleteOptions) {
      const existing = requireExisting(ref, name, namespaced(ref) ? namespace : undefined);
      if (existing.metadata.finalizers?.length) {
        if (!existing.metadata.deletionTimestamp) {
          write(ref, { ...structuredClone(existing), metadata: { ...existing.metadata, deletionTimestamp: new Date().toISOString() } });
        }
        return;
      }
      bucket(ref).delete(objectKey(existing.metadata.namespace, name));
      emit('DELETED', ref, existing);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async drained() {
      while (pending.length || flushScheduled) await new Promise((resolve) => setImmediate(resolve));
    },
  };
}
