// The object store: like etcd behind kube-apiserver — one global resourceVersion counter, objects kept in their
// storage version with their serialized JSON (LIST writes strings, never re-stringifies), a bounded event log for
// watch resumption, and list snapshots so limit/continue pages are consistent.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ClusterEvent, ResourceRef, WatchEventType } from './contract.ts';

export interface Stored {
  readonly obj: KubeObject;
  readonly json: string;
  readonly rv: number;
}

export interface LoggedEvent {
  rv: number;
  type: WatchEventType;
  refKey: string;
  ref: ResourceRef;
  stored: Stored;
}

/**
 * The object every in-process listener is handed: the stored one itself, frozen. A shared informer hands the same
 * cached object to every event handler, which must not modify it (kubernetes/kubernetes staging/src/k8s.io/client-go/
 * tools/cache/shared_informer.go; with KUBE_CACHE_MUTATION_DETECTOR set, tools/cache/mutation_detector.go panics when
 * one does); frozen, such a write throws here instead of changing what the store holds. Nothing in the store modifies
 * an object once stored (every write stores a new one), so freezing it costs only the first reader a walk over it,
 * where a copy per listener cost a parse each.
 */
function sharedObject(e: LoggedEvent): KubeObject {
  return deepFreeze(e.stored.obj);
}

/** Freezes JSON-shaped data all the way down; a part frozen already (shared with an earlier object) is skipped. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key in value) deepFreeze(value[key]);
  return value;
}

interface Table {
  items: Map<string, Stored>;
  /**
   * The items' keys in key order, kept in order on every insert and delete, as the API server's watch cache keeps its
   * objects in a B-tree by key for LISTs (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/
   * store_btree.go). Sorting the whole table again after each new key made every LIST after a create cost n log n.
   */
  sorted: string[];
}

export const refKey = (ref: ResourceRef): string => `${ref.group}/${ref.resource}`;
export const objectKey = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;

/** Puts apiVersion, kind and metadata first so a built-in list item can drop the first two by slicing the string. */
function ordered(obj: KubeObject): KubeObject {
  const { apiVersion, kind, metadata, ...rest } = obj;
  return { apiVersion, kind, metadata, ...rest };
}

export interface Snapshot {
  rv: number;
  items: Stored[];
  created: number;
}

export class ObjectStore {
  private rv = 1;
  private readonly tables = new Map<string, Table>();
  private readonly log: LoggedEvent[] = [];
  private readonly listeners = new Set<(e: LoggedEvent) => void>();
  private readonly snapshots = new Map<string, Snapshot>();
  private pending: LoggedEvent[] = [];
  private flushScheduled = false;

  constructor(
    private readonly logCapacity = 20000,
    private readonly snapshotTtlMs = 5 * 60_000,
  ) {}

  currentRv(): number {
    return this.rv;
  }

  /** Oldest resourceVersion a watch can resume from. */
  oldestRv(): number {
    return this.log[0]?.rv ?? this.rv;
  }

  private table(key: string): Table {
    let t = this.tables.get(key);
    if (!t) {
      t = { items: new Map(), sorted: [] };
      this.tables.set(key, t);
    }
    return t;
  }

  get(ref: ResourceRef, key: string): Stored | undefined {
    return this.tables.get(refKey(ref))?.items.get(key);
  }

  /** Writes the object with the next resourceVersion; returns what was stored. */
  put(ref: ResourceRef, key: string, obj: KubeObject, type: 'ADDED' | 'MODIFIED'): Stored {
    const t = this.table(refKey(ref));
    const rv = ++this.rv;
    const o = ordered(obj);
    o.metadata.resourceVersion = String(rv);
    const stored: Stored = { obj: o, json: JSON.stringify(o), rv };
    if (!t.items.has(key)) t.sorted.splice(lowerBound(t.sorted, key), 0, key);
    t.items.set(key, stored);
    this.emit({ rv, type, refKey: refKey(ref), ref, stored });
    return stored;
  }

  remove(ref: ResourceRef, key: string): Stored | undefined {
    const t = this.tables.get(refKey(ref));
    const old = t?.items.get(key);
    if (!t || !old) return undefined;
    t.items.delete(key);
    t.sorted.splice(lowerBound(t.sorted, key), 1);
    const rv = ++this.rv;
    const o = { ...old.obj, metadata: { ...old.obj.metadata, resourceVersion: String(rv) } };
    const stored: Stored = { obj: o, json: JSON.stringify(o), rv };
    this.emit({ rv, type: 'DELETED', refKey: refKey(ref), ref, stored });
    return stored;
  }

  dropTable(ref: ResourceRef): void {
    this.tables.delete(refKey(ref));
  }

  count(ref: ResourceRef): number {
    return this.tables.get(refKey(ref))?.items.size ?? 0;
  }

  totalObjects(): number {
    let n = 0;
    for (const t of this.tables.values()) n += t.items.size;
    return n;
  }

  /** Items in key order (namespace/name), restricted to one namespace when given. */
  scan(ref: ResourceRef, namespace?: string): Stored[] {
    const t = this.tables.get(refKey(ref));
    if (!t) return [];
    const keys = t.sorted;
    let from = 0;
    let to = keys.length;
    if (namespace !== undefined) {
      const prefix = `${namespace}/`;
      from = lowerBound(keys, prefix);
      to = lowerBound(keys, `${namespace}0`); // '0' follows '/' in code-unit order
    }
    const out: Stored[] = [];
    for (let i = from; i < to; i++) out.push(t.items.get(keys[i]!)!);
    return out;
  }

  /** A consistent view of one resource for paginated LISTs, kept until it expires. */
  snapshot(ref: ResourceRef): Snapshot {
    this.expireSnapshots();
    const id = `${refKey(ref)}@${this.rv}`;
    let s = this.snapshots.get(id);
    if (!s) {
      s = { rv: this.rv, items: this.scan(ref), created: Date.now() };
      this.snapshots.set(id, s);
    }
    return s;
  }

  findSnapshot(ref: ResourceRef, rv: number): Snapshot | undefined {
    this.expireSnapshots();
    return this.snapshots.get(`${refKey(ref)}@${rv}`);
  }

  /** Forget all list snapshots, as etcd compaction would: outstanding continue tokens answer 410 Expired. */
  compact(): void {
    this.snapshots.clear();
    this.log.length = 0;
  }

  private expireSnapshots(): void {
    const now = Date.now();
    for (const [id, s] of this.snapshots) if (now - s.created > this.snapshotTtlMs) this.snapshots.delete(id);
  }

  /** Events after `rv` (exclusive), or undefined when the log no longer reaches back that far. */
  eventsSince(rv: number): LoggedEvent[] | undefined {
    if (rv >= this.rv) return [];
    const first = this.log[0];
    if (!first || first.rv > rv + 1) return undefined;
    return this.log.slice(lowerBoundRv(this.log, rv + 1));
  }

  subscribeRaw(listener: (e: LoggedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscribe(listener: (event: ClusterEvent) => void): () => void {
    return this.subscribeRaw((e) => {
      listener({
        type: e.type,
        ref: e.ref,
        get object() {
          return sharedObject(e);
        },
      });
    });
  }

  private emit(e: LoggedEvent): void {
    this.log.push(e);
    // trimmed a quarter at a time: trimming one event per write shifted the whole log on every write (O(log) each)
    if (this.log.length > this.logCapacity + (this.logCapacity >> 2)) this.log.splice(0, this.log.length - this.logCapacity);
    this.pending.push(e);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // delivered after the write returns, in resourceVersion order, like a watch
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (const e of batch)
      for (const l of [...this.listeners]) {
        try {
          l(e);
        } catch (err) {
          console.error(`cluster: event listener failed: ${(err as Error).message}`);
        }
      }
  }
}

function lowerBound(keys: string[], target: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function lowerBoundRv(log: LoggedEvent[], rv: number): number {
  let lo = 0;
  let hi = log.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (log[mid]!.rv < rv) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
