// Field ownership for server-side apply, kept in metadata.managedFields in the real FieldsV1 shape.
// Simplification (documented): lists are atomic — a list is owned as a whole, never element by element.
// Upstream: kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal (structuredmerge.go
// for apply and update, managedfieldsupdater.go for the entries per manager and operation, conflict.go for the 409,
// its "Apply failed with N conflicts" text and FieldManagerConflict causes; before 1.27 in
// staging/src/k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager), over kubernetes-sigs/structured-merge-diff
// (fieldpath/serialize.go: the `f:` keys of FieldsV1; merge/update.go: which manager's fields conflict).
import type { KubeObject } from '../../../src/kube/types.ts';
import { ApiError } from './errors.ts';
import { clone } from './patch.ts';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

type Path = string[];
const IGNORED_TOP = new Set(['apiVersion', 'kind', 'status']);
const IGNORED_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Leaf paths of an object: scalars, lists and empty maps; identity and server-set fields are not owned. */
export function leafPaths(obj: unknown, includeStatus = false): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, p: Path) => {
    if (isObject(v) && Object.keys(v).length > 0) {
      for (const [k, child] of Object.entries(v)) {
        if (p.length === 0 && IGNORED_TOP.has(k) && !(includeStatus && k === 'status')) continue;
        if (p.length === 1 && p[0] === 'metadata' && IGNORED_META.has(k)) continue;
        walk(child, [...p, k]);
      }
    } else if (p.length > 0) out.push(p);
  };
  walk(obj, []);
  return out;
}

const keyOf = (p: Path) => JSON.stringify(p);

export function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let cur = root;
    for (const seg of p) {
      const k = `f:${seg}`;
      cur[k] ??= {};
      cur = cur[k] as Record<string, unknown>;
    }
  }
  return root;
}

export function fromFieldsV1(fields: unknown): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, p: Path) => {
    const keys = isObject(v) ? Object.keys(v).filter((k) => k.startsWith('f:')) : [];
    if (keys.length === 0) {
      if (p.length > 0) out.push(p);
      return;
    }
    for (const k of keys) walk((v as Record<string, unknown>)[k], [...p, k.slice(2)]);
  };
  walk(fields, []);
  return out;
}

function getAt(obj: unknown, p: Path): unknown {
  let cur = obj;
  for (const s of p) {
    if (!isObject(cur)) return undefined;
    cur = cur[s];
  }
  return cur;
}

function setAt(obj: Record<string, unknown>, p: Path, value: unknown): void {
  let cur = obj;
  for (const s of p.slice(0, -1)) {
    if (!isObject(cur[s])) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[p[p.length - 1]!] = clone(value);
}

function deleteAt(obj: Record<string, unknown>, p: Path): void {
  const parents: Record<string, unknown>[] = [];
  let cur: unknown = obj;
  for (const s of p.slice(0, -1)) {
    if (!isObject(cur)) return;
    parents.push(cur);
    cur = cur[s];
  }
  if (!isObject(cur)) return;
  delete cur[p[p.length - 1]!];
  // drop maps the removal left empty, as the real merge does
  for (let i = p.length - 2; i >= 0; i--) {
    const parent = parents[i]!;
    const child = parent[p[i]!];
    if (isObject(child) && Object.keys(child).length === 0) delete parent[p[i]!];
    else break;
  }
}

function entries(obj: KubeObject): ManagedFieldsEntry[] {
  return Array.isArray(obj.metadata.managedFields) ? (obj.metadata.managedFields as ManagedFieldsEntry[]) : [];
}

function owners(list: ManagedFieldsEntry[]): Map<string, ManagedFieldsEntry[]> {
  const m = new Map<string, ManagedFieldsEntry[]>();
  for (const e of list) for (const p of fromFieldsV1(e.fieldsV1)) {
    const k = keyOf(p);
    m.set(k, [...(m.get(k) ?? []), e]);
  }
  return m;
}

function conflictError(conflicts: { path: Path; manager: string; apiVersion: string }[]): ApiError {
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const k = `"${c.manager}" using ${c.apiVersion}`;
    byManager.set(k, [...(byManager.get(k) ?? []), '.' + c.path.join('.')]);
  }
  const n = conflicts.length;
  let message: string;
  if (n === 1) {
    const c = conflicts[0]!;
    message = `Apply failed with 1 conflict: conflict with "${c.manager}" using ${c.apiVersion}: .${c.path.join('.')}`;
  } else {
    const parts = [...byManager].map(([who, paths]) => `conflicts with ${who}:\n${paths.map((p) => `- ${p}`).join('\n')}`);
    message = `Apply failed with ${n} conflicts: ${parts.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: '.' + c.path.join('.') })),
  });
}

/**
 * Server-side apply of `config` by `manager` onto `current` (undefined when the object does not exist yet).
 * Returns the new object with updated managedFields; throws 409 Conflict unless `force`.
 */
export function serverSideApply(
  current: KubeObject | undefined,
  config: KubeObject,
  manager: string,
  force: boolean,
  now: string,
  subresource?: string,
): KubeObject {
  const base: KubeObject = current ? clone(current) : { apiVersion: config.apiVersion, kind: config.kind, metadata: {} };
  const list = entries(base).filter((e) => (e.subresource ?? '') === (subresource ?? ''));
  const otherSub = entries(base).filter((e) => (e.subresource ?? '') !== (subresource ?? ''));
  const owned = owners(list);
  const applied = leafPaths(config, subresource === 'status');
  const appliedKeys = new Set(applied.map(keyOf));
  const conflicts: { path: Path; manager: string; apiVersion: string }[] = [];
  for (const p of applied) {
    const now = getAt(base, p);
    const want = getAt(config, p);
    if (now === undefined || JSON.stringify(now) === JSON.stringify(want)) continue;
    for (const e of owned.get(keyOf(p)) ?? [])
      if (!(e.manager === manager && e.operation === 'Apply')) conflicts.push({ path: p, manager: e.manager, apiVersion: e.apiVersion });
  }
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);

  const previous = list.find((e) => e.manager === manager && e.operation === 'Apply');
  const result = base as unknown as Record<string, unknown>;
  if (previous)
    for (const p of fromFieldsV1(previous.fieldsV1)) {
      const k = keyOf(p);
      const sharedWithOthers = (owned.get(k) ?? []).some((e) => e !== previous);
      if (!appliedKeys.has(k) && !sharedWithOthers) deleteAt(result, p);
    }
  for (const p of applied) setAt(result, p, getAt(config, p));

  const forcedAway = new Set(conflicts.map((c) => keyOf(c.path)));
  const next: ManagedFieldsEntry[] = [];
  for (const e of list) {
    if (e === previous) continue;
    const keep = fromFieldsV1(e.fieldsV1).filter((p) => !forcedAway.has(keyOf(p)));
    if (keep.length > 0) next.push({ ...e, fieldsV1: toFieldsV1(keep) });
  }
  const mine: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion: config.apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(applied) };
  if (subresource) mine.subresource = subresource;
  next.push(mine);
  base.metadata.managedFields = [...otherSub, ...next];
  return base;
}

/** After a non-apply write by `manager`, it owns the fields it changed; other managers lose them. */
export function recordUpdate(before: KubeObject | undefined, after: KubeObject, manager: string, now: string, subresource?: string): void {
  const status = subresource === 'status';
  const old = new Map((before ? leafPaths(before, status) : []).map((p) => [keyOf(p), JSON.stringify(getAt(before, p))]));
  const changed = leafPaths(after, status).filter((p) => old.get(keyOf(p)) !== JSON.stringify(getAt(after, p)));
  const list = before ? entries(before) : entries(after);
  if (changed.length === 0 && list.length > 0) {
    after.metadata.managedFields = list;
    return;
  }
  const changedKeys = new Set(changed.map(keyOf));
  const next: ManagedFieldsEntry[] = [];
  let mine: ManagedFieldsEntry | undefined;
  for (const e of list) {
    if (e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === (subresource ?? '')) {
      mine = e;
      continue;
    }
    const keep = fromFieldsV1(e.fieldsV1).filter((p) => !changedKeys.has(keyOf(p)));
    if (keep.length > 0) next.push({ ...e, fieldsV1: toFieldsV1(keep) });
  }
  const paths = [...(mine ? fromFieldsV1(mine.fieldsV1) : []), ...changed];
  const entry: ManagedFieldsEntry = { manager, operation: 'Update', apiVersion: after.apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(paths) };
  if (subresource) entry.subresource = subresource;
  if (paths.length > 0) next.push(entry);
  after.metadata.managedFields = next;
}
