// The shape every simulated controller shares, like controller-runtime's: watch some resources, turn each event into
// the key of the object to reconcile, and reconcile keys from a de-duplicating queue after a small delay, so the
// controllers answer asynchronously as real ones do. Conflicts and missing namespaces are requeued with backoff.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { ClusterEvent, Controller, InProcessApi, ResourceRef } from '../contract.ts';

export interface Watch {
  ref: ResourceRef;
  /** keys to reconcile when an object of this resource changes */
  keys(object: KubeObject, type: ClusterEvent['type']): string[];
}

export interface ReconcilerOptions {
  name: string;
  watches: Watch[];
  /** returns a delay in ms to reconcile the same key again, or nothing when done */
  reconcile(api: InProcessApi, key: string): number | void;
  /** delay between an event and its reconcile (the informer + queue latency of a real controller) */
  delayMs?: number;
  /** keys to reconcile once at start, besides every existing object's */
  initialKeys?: string[];
}

const maxBackoffMs = 2000;

function isRetryable(error: unknown): boolean {
  const status = (error as { status?: unknown }).status;
  // A Pod a ResourceQuota refuses (tests/support/cluster/quota.ts) is tried again, as a real controller does after its
  // FailedCreate event, until the quota admits it: upstream, controller-runtime requeues a failed reconcile with
  // backoff (kubernetes-sigs/controller-runtime pkg/internal/controller/controller.go, reconcileHandler).
  const quota = status === 403 && /\b(exceeded|failed) quota\b/.test((error as Error).message ?? '');
  return quota || status === 409 || status === 404 || status === 429 || status === 500 || status === 503;
}

export function reconciler(options: ReconcilerOptions): Controller {
  return {
    name: options.name,
    start(api) {
      const delayMs = options.delayMs ?? 5;
      const queued = new Set<string>();
      const failures = new Map<string, number>();
      const timers = new Set<NodeJS.Timeout>();
      let stopped = false;

      const enqueue = (key: string, afterMs = delayMs) => {
        if (stopped || queued.has(key)) return;
        queued.add(key);
        const timer = setTimeout(() => {
          timers.delete(timer);
          queued.delete(key);
          if (!stopped) process(key);
        }, afterMs);
        timers.add(timer);
      };

      const process = (key: string) => {
        let again: number | void;
        try {
          again = options.reconcile(api, key);
          failures.delete(key);
        } catch (error) {
          if (!isRetryable(error)) {
            console.error(`controller ${options.name}: reconciling ${key} failed: ${(error as Error).message}`);
          }
          const attempt = (failures.get(key) ?? 0) + 1;
          failures.set(key, attempt);
          again = Math.min(maxBackoffMs, 10 * 2 ** attempt);
        }
        if (typeof again === 'number') enqueue(key, again);
      };

      const unsubscribe = api.subscribe((event) => {
        for (const watch of options.watches) {
          if (watch.ref.group === event.ref.group && watch.ref.resource === event.ref.resource) {
            for (const key of watch.keys(event.object, event.type)) enqueue(key);
          }
        }
      });
      for (const key of options.initialKeys ?? []) enqueue(key);
      for (const watch of options.watches) {
        // a kind this release does not serve (a CKF release without JAXJob) has nothing to reconcile
        let objects: KubeObject[];
        try {
          objects = api.list(watch.ref);
        } catch (error) {
          if ((error as { status?: number }).status === 404) continue;
          throw error;
        }
        for (const object of objects) for (const key of watch.keys(object, 'ADDED')) enqueue(key);
      }
      return () => {
        stopped = true;
        unsubscribe();
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
      };
    },
  };
}

/** key of a namespaced object */
export function keyOf(object: KubeObject): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name!;
}

export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** keys of the controlling owner of the given kind (same namespace, or cluster-scoped owner) */
export function controllerOwnerKeys(kind: string, clusterScopedOwner = false) {
  return (object: KubeObject): string[] =>
    (object.metadata.ownerReferences ?? [])
      .filter((owner) => owner.controller && owner.kind === kind)
      .map((owner) => (clusterScopedOwner || !object.metadata.namespace ? owner.name : `${object.metadata.namespace}/${owner.name}`));
}

export function controllerReference(owner: KubeObject) {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * Makes the object exist as desired: creates it when missing; otherwise rewrites the fields listed in `owned` when
 * they differ (what a controller that owns them does on every reconcile). AlreadyExists races surface as 409s.
 */
/** An object a controller only reads: the stored one, frozen, where the API offers it (contract.ts `read`), else a copy. */
export function peek(api: InProcessApi, ref: ResourceRef, name: string, namespace?: string): KubeObject | undefined {
  return api.read ? api.read(ref, name, namespace) : api.get(ref, name, namespace);
}

export function ensure(api: InProcessApi, ref: ResourceRef, desired: KubeObject, owned: string[] = ['spec']): KubeObject {
  const existing = peek(api, ref, desired.metadata.name!, desired.metadata.namespace);
  if (!existing) return api.create(ref, desired);
  // `existing` may be the stored object itself (frozen) and update copies what it is given, so the changes are made
  // on a shallow copy of it, and only when there is one; the caller only reads what is returned
  let next: KubeObject | undefined;
  const changing = () => (next ??= { ...existing, metadata: { ...existing.metadata } });
  for (const field of owned) {
    if (JSON.stringify(existing[field]) !== JSON.stringify(desired[field])) changing()[field] = desired[field];
  }
  for (const [key, value] of Object.entries(desired.metadata.labels ?? {})) {
    if (existing.metadata.labels?.[key] !== value) {
      const target = changing();
      target.metadata.labels = { ...target.metadata.labels, [key]: value };
    }
  }
  return next ? api.update(ref, next) : existing;
}
