// The three patch formats kube-apiserver accepts besides server-side apply: JSON merge patch (RFC 7386),
// JSON patch (RFC 6902) and strategic merge patch (built-in kinds only, with their list merge keys), as
// kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go dispatches them by content type.
import { badRequest, ApiError } from './errors.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A deep copy of JSON-shaped data. Hand-written because structuredClone (serialize + deserialize through the
 * host) was the largest cost of applying the dataset: every write and every read of the in-process API copies.
 * The keys come from Object.keys rather than for-in: with for-in, V8 specialised the keyed load to the enum cache and
 * threw the optimised code away hundreds of times in a restore's cluster ("unexpected name in keyed access"), which
 * made each copy about three times dearer there than in raw CREATE's (docs/performance.md).
 */
export function clone<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = clone(v[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    out[k] = clone((v as Record<string, unknown>)[k]);
  }
  return out as T;
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function unescapePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`the server rejected our request due to an error in our request: invalid JSON pointer "${path}"`);
  return path.slice(1).split('/').map(unescapePointer);
}

function parentOf(doc: unknown, segs: string[], op: string, path: string): { parent: unknown; key: string } {
  let cur = doc;
  for (const s of segs.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(s)];
    else if (isObject(cur)) cur = cur[s];
    else cur = undefined;
    if (cur === undefined) throw jsonPatchError(op, path, 'missing path');
  }
  return { parent: cur, key: segs[segs.length - 1] ?? '' };
}

function jsonPatchError(op: string, path: string, why: string): ApiError {
  return new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: jsonpatch ${op} operation does not apply: doc is ${why}: ${path}`);
}

function readAt(doc: unknown, path: string, op: string): unknown {
  let cur = doc;
  for (const s of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(s)];
    else if (isObject(cur)) cur = cur[s];
    else cur = undefined;
    if (cur === undefined) throw jsonPatchError(op, path, 'missing path');
  }
  return cur;
}

function removeAt(doc: unknown, path: string, op: string): unknown {
  const { parent, key } = parentOf(doc, pointer(path), op, path);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!(i >= 0 && i < parent.length)) throw jsonPatchError(op, path, 'missing path');
    return parent.splice(i, 1)[0];
  }
  if (!isObject(parent) || !(key in parent)) throw jsonPatchError(op, path, 'missing path');
  const v = parent[key];
  delete parent[key];
  return v;
}

function addAt(doc: unknown, path: string, value: unknown, op: string, replace: boolean): unknown {
  const segs = pointer(path);
  if (segs.length === 0) return clone(value);
  const { parent, key } = parentOf(doc, segs, op, path);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (!(i >= 0 && i <= parent.length) || (replace && i >= parent.length)) throw jsonPatchError(op, path, 'missing path');
    if (replace) parent[i] = clone(value);
    else parent.splice(i, 0, clone(value));
  } else if (isObject(parent)) {
    if (replace && !(key in parent)) throw jsonPatchError(op, path, 'missing path');
    parent[key] = clone(value);
  } else throw jsonPatchError(op, path, 'missing path');
  return doc;
}

export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('the server rejected our request due to an error in our request: a JSON patch must be an array of operations');
  let doc = clone(target);
  for (const raw of ops) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string')
      throw badRequest('the server rejected our request due to an error in our request: each JSON patch operation needs "op" and "path"');
    const { op, path } = raw;
    switch (op) {
      case 'add':
        doc = addAt(doc, path, raw.value, op, false);
        break;
      case 'replace':
        doc = addAt(doc, path, raw.value, op, true);
        break;
      case 'remove':
        removeAt(doc, path, op);
        break;
      case 'move': {
        const v = removeAt(doc, String(raw.from), op);
        doc = addAt(doc, path, v, op, false);
        break;
      }
      case 'copy':
        doc = addAt(doc, path, readAt(doc, String(raw.from), op), op, false);
        break;
      case 'test':
        if (JSON.stringify(readAt(doc, path, op)) !== JSON.stringify(raw.value))
          throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: testing value ${path} failed: test failed`);
        break;
      default:
        throw badRequest(`the server rejected our request due to an error in our request: Unexpected kind: ${op}`);
    }
  }
  return doc;
}

/** Merge keys of the built-in kinds' lists that strategic merge patch merges element-wise (from their Go struct tags). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  ownerReferences: 'uid',
  conditions: 'type',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  secrets: 'name',
};
/** lists of scalars merged as sets */
const MERGED_SCALAR_LISTS = new Set(['finalizers']);

function mergeKeyFor(field: string, items: unknown[]): string | undefined {
  if (field === 'ports') return items.some((i) => isObject(i) && 'containerPort' in i) ? 'containerPort' : 'port';
  return MERGE_KEYS[field];
}

export function strategicMerge(target: unknown, patch: unknown, field = ''): unknown {
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return clone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/') || k === '$retainKeys' || k === '$patch') continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const name = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[name];
      if (Array.isArray(cur) && Array.isArray(v)) out[name] = cur.filter((x) => !v.includes(x as never));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const cur = out[k];
    if (Array.isArray(v)) {
      const key = mergeKeyFor(k, [...v, ...(Array.isArray(cur) ? cur : [])]);
      if (key && Array.isArray(cur)) out[k] = mergeList(cur, v, key, k);
      else if (MERGED_SCALAR_LISTS.has(k) && Array.isArray(cur)) out[k] = [...cur, ...v.filter((x) => !cur.includes(x))];
      else out[k] = clone(v);
      continue;
    }
    const merged = strategicMerge(cur, v, k);
    if (merged === undefined) delete out[k];
    else out[k] = merged;
  }
  void field;
  return out;
}

function mergeList(cur: unknown[], patch: unknown[], key: string, field: string): unknown[] {
  const out = cur.map((x) => clone(x));
  for (const p of patch) {
    if (!isObject(p)) continue;
    const i = out.findIndex((x) => isObject(x) && x[key] === p[key]);
    if (p.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) out[i] = strategicMerge(out[i], p, field);
    else out.push(strategicMerge(undefined, p, field));
  }
  return out;
}

export type { Json };
