// A custom resource's structural schema applied as the apiextensions-apiserver applies it to every create and update
// of the resource: non-nullable nulls dropped, defaulting, then pruning, then validation (OpenAPI value validation and x-kubernetes-validations
// CEL rules). Each part names the upstream file it follows, all under kubernetes/kubernetes
// staging/src/k8s.io/apiextensions-apiserver/.
import { isIPv4, isIPv6 } from 'node:net';
import { compileCel, toCelEscaped as toCel } from './cel.ts';
import type { FieldError } from './errors.ts';

export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** The parts of an OpenAPI v3 schema a structural schema may hold (pkg/apiserver/schema/structural.go). */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  description?: string;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: CelRule[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

// ---- nulls: pkg/apiserver/schema/defaulting/prunenulls.go ----------------------------------------------------------

/**
 * Drops each object field whose value is null where its schema (by property, else additionalProperties) is neither
 * nullable nor has a default: such a null is removed, not refused. A null with a default is defaulted next; a null
 * list item, or a null where no schema applies, stays (and validation judges it). The custom-resource decoder runs
 * this before defaulting (pkg/apiserver/customresource_handler.go, unstructuredDefaulter.Default).
 */
export function pruneNonNullableNulls(value: unknown, schema: Schema | undefined): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNonNullableNulls(item, schema?.items);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, item] of Object.entries(value)) {
    const sub = schema?.properties?.[key] ?? (typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (item === null && sub !== undefined && !sub.nullable && sub.default === undefined) delete value[key];
    else pruneNonNullableNulls(item, sub);
  }
}

// ---- defaulting: pkg/apiserver/schema/defaulting/algorithm.go ------------------------------------------------------

/**
 * Sets each absent property that declares a default (and a null one that is not nullable) to a copy of the default,
 * then walks into properties, additionalProperties and items. Defaults apply at every level the value reaches.
 */
export function applyDefaults(value: unknown, schema: Schema | undefined): void {
  if (!schema) return;
  const nullDefault = (sub: Schema | undefined) => sub && sub.default !== undefined && !sub.nullable;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (item === null && nullDefault(schema.items)) value[i] = structuredClone(schema.items!.default);
      else applyDefaults(item, schema.items);
    });
    return;
  }
  if (!isObject(value)) return;
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    if (prop.default !== undefined && !(key in value)) value[key] = structuredClone(prop.default) as Json;
  }
  for (const [key, item] of Object.entries(value)) {
    const sub = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (item === null && nullDefault(sub)) value[key] = structuredClone(sub!.default) as Json;
    else applyDefaults(item, sub);
  }
}

// ---- pruning: pkg/apiserver/schema/pruning/algorithm.go ------------------------------------------------------------

/**
 * Removes every field the schema does not declare, except under x-kubernetes-preserve-unknown-fields (which is not
 * inherited by an additionalProperties schema). apiVersion, kind and metadata stay at the resource's root and in each
 * x-kubernetes-embedded-resource. Returns the pruned paths, sorted, as upstream's ReturnPruned does.
 */
export function prune(value: unknown, schema: Schema | undefined, isResourceRoot: boolean): string[] {
  const pruned: string[] = [];
  pruneValue(value, schema, isResourceRoot, '', pruned);
  return pruned.sort();
}

function pruneValue(value: unknown, schema: Schema | undefined, keepTypeMeta: boolean, path: string, pruned: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => pruneValue(item, schema?.items, false, `${path}[${i}]`, pruned));
    return;
  }
  if (!isObject(value)) return;
  const preserve = schema?.['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = keepTypeMeta || schema?.['x-kubernetes-embedded-resource'] === true;
  for (const key of Object.keys(value)) {
    if (embedded && (key === 'apiVersion' || key === 'kind')) continue;
    // ObjectMeta is coerced, not pruned (pkg/apiserver/schema/objectmeta/coerce.go)
    if (embedded && key === 'metadata') continue;
    const prop = schema?.properties?.[key];
    if (prop) {
      pruneValue(value[key], prop, false, join(path, key), pruned);
      continue;
    }
    const extra = schema?.additionalProperties;
    if (extra !== undefined && extra !== false) {
      pruneValue(value[key], isObject(extra) ? extra : undefined, false, join(path, key), pruned);
      continue;
    }
    if (extra === false) {
      // additionalProperties: false keeps the keys; their values have no schema
      pruneValue(value[key], undefined, false, join(path, key), pruned);
      continue;
    }
    // an unknown field under x-kubernetes-preserve-unknown-fields is kept with everything in it
    if (preserve) continue;
    delete value[key];
    pruned.push(join(path, key));
  }
}

// ---- value validation: pkg/apiserver/validation/validation.go (kube-openapi's validator) and formats.go -------------

const FORMATS: Record<string, (s: string) => boolean> = {
  // pkg/apiserver/validation/formats.go lists the string formats the apiserver checks (names compared without '-', as
  // go-openapi normalizes them); any other string format is ignored. Integer formats (int32, int64) are not checked
  // against their range: kube-openapi pkg/validation/validate/type.go only asks that the value be an integer.
  datetime: (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  ipv4: (s) => isIPv4(s),
  ipv6: (s) => isIPv6(s),
  cidr: (s) => { const [ip, bits, more] = s.split('/'); return more === undefined && bits !== undefined && /^\d+$/.test(bits) && ((isIPv4(ip!) && Number(bits) <= 32) || (isIPv6(ip!) && Number(bits) <= 128)); },
  mac: (s) => /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$/i.test(s),
  hostname: (s) => s.length <= 255 && s.split('.').every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l)),
  byte: (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0,
  // Go's time.ParseDuration
  duration: (s) => /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/.test(s) || s === '0',
  email: (s) => /^[^@\s]+@[^@\s]+$/.test(s),
  uri: (s) => { try { return new URL(s).protocol !== ''; } catch { return false; } },
  // apimachinery pkg/api/resource/quantity.go
  quantity: (s) => /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/.test(s),
};

/**
 * Whether a JSON number is an integer to the server: the decoder keeps a whole number as int64 and turns one beyond
 * int64 into a float64 (apimachinery pkg/util/json, convertNumber), which type.go then calls a number.
 */
const isInteger = (v: number) => Number.isInteger(v) && Math.abs(v) < 2 ** 63;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: unknown, schema: Schema): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof v === 'string' || (typeof v === 'number' && isInteger(v));
  switch (schema.type) {
    case undefined: return true;
    case 'integer': return typeof v === 'number' && isInteger(v);
    case 'number': return typeof v === 'number';
    case 'object': return isObject(v);
    case 'array': return Array.isArray(v);
    default: return typeof v === schema.type;
  }
}

const mustBe = (path: string, type: string, v: unknown): FieldError => ({
  field: path, type: 'FieldValueTypeInvalid',
  text: `Invalid value: "${typeName(v)}": ${path} in body must be of type ${type}: "${typeName(v)}"`,
});
const invalidAt = (path: string, v: unknown, detail: string): FieldError => ({
  field: path, type: 'FieldValueInvalid', text: `Invalid value: ${shown(v)}: ${detail}`,
});
const shown = (v: unknown) => (isObject(v) ? '"object"' : Array.isArray(v) ? '"array"' : JSON.stringify(v));

/**
 * Every OpenAPI value-validation error of `value` against `schema` (not the CEL rules). On an update, `prior` holds the
 * old object: errors under a node whose value is unchanged from the correlated old one are dropped (validation
 * ratcheting, pkg/apiserver/validation/ratcheting.go, on by default from Kubernetes 1.30; the caller leaves `prior` out
 * where the server's version has it off).
 */
export function validateValue(value: unknown, schema: Schema | undefined, path: string, isResourceRoot = false, prior?: Prior): FieldError[] {
  const errors: FieldError[] = [];
  if (!schema) return errors;
  walk(value, schema, path, isResourceRoot, errors, prior);
  return errors;
}

/** the old value correlated with the one being validated (absent: nothing to correlate with) */
interface Prior { old: unknown }

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/**
 * The old item a list item correlates with (ratcheting.go correlateOldValueForChildAtNewIndex): by key in a map list,
 * by index when the list type is unset, never in a set or an atomic list.
 */
function priorItem(s: Schema, prior: Prior | undefined, item: unknown, index: number): Prior | undefined {
  if (!prior || !Array.isArray(prior.old)) return undefined;
  const type = s['x-kubernetes-list-type'];
  if (type === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    if (!isObject(item)) return undefined;
    const found = prior.old.find((o) => isObject(o) && keys.every((k) => sameJson(o[k], item[k])));
    return found === undefined ? undefined : { old: found };
  }
  if (type === 'set' || type === 'atomic') return undefined;
  return index < prior.old.length ? { old: prior.old[index] } : undefined;
}

function walk(v: unknown, s: Schema, path: string, root: boolean, errors: FieldError[], prior?: Prior): void {
  const found: FieldError[] = [];
  check(v, s, path, root, found, prior);
  if (found.length === 0) return;
  // ratcheting: what was already there, unchanged, is not refused again
  if (prior && sameJson(prior.old, v)) return;
  errors.push(...found);
}

function check(v: unknown, s: Schema, path: string, root: boolean, errors: FieldError[], prior: Prior | undefined): void {
  if (v === null) {
    if (!s.nullable && s.type !== undefined) errors.push(mustBe(path, s.type, v));
    return;
  }
  if (!typeMatches(v, s)) {
    errors.push(mustBe(path, s['x-kubernetes-int-or-string'] ? 'integer,string' : s.type!, v));
    return;
  }
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    errors.push({ field: path, type: 'FieldValueNotSupported', text: `Unsupported value: ${JSON.stringify(v)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  if (typeof v === 'string') {
    if (s.maxLength !== undefined && [...v].length > s.maxLength) errors.push({ field: path, type: 'FieldValueTooLong', text: `Too long: may not be more than ${s.maxLength} bytes` });
    if (s.minLength !== undefined && [...v].length < s.minLength) errors.push(invalidAt(path, v, `${path} in body should be at least ${s.minLength} chars long`));
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) errors.push(invalidAt(path, v, `${path} in body should match '${s.pattern}'`));
    const check = s.format ? FORMATS[s.format.replaceAll('-', '')] : undefined;
    if (check && !check(v)) errors.push(invalidAt(path, v, `${path} in body must be of type ${s.format}: ${JSON.stringify(v)}`));
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
      errors.push(invalidAt(path, v, `${path} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
      errors.push(invalidAt(path, v, `${path} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
    if (s.multipleOf !== undefined && !Number.isInteger(v / s.multipleOf)) errors.push(invalidAt(path, v, `${path} in body should be a multiple of ${s.multipleOf}`));
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) errors.push({ field: path, type: 'FieldValueTooMany', text: `Too many: ${v.length}: must have at most ${s.maxItems} items` });
    if (s.minItems !== undefined && v.length < s.minItems) errors.push(invalidAt(path, v, `${path} in body should have at least ${s.minItems} items`));
    listTypeErrors(v, s, path, errors);
    if (s.items) v.forEach((item, i) => walk(item, s.items!, `${path}[${i}]`, false, errors, priorItem(s, prior, item, i)));
  }
  if (isObject(v)) {
    const n = Object.keys(v).length;
    if (s.maxProperties !== undefined && n > s.maxProperties) errors.push({ field: path, type: 'FieldValueTooMany', text: `Too many: ${n}: must have at most ${s.maxProperties} items` });
    if (s.minProperties !== undefined && n < s.minProperties) errors.push(invalidAt(path, v, `${path} in body should have at least ${s.minProperties} properties`));
    for (const key of s.required ?? []) if (!(key in v)) errors.push({ field: join(path, key), type: 'FieldValueRequired', text: 'Required value' });
    if (s['x-kubernetes-embedded-resource'] && !root) {
      // pkg/apiserver/schema/objectmeta/validation.go: an embedded resource names its apiVersion and kind
      if (typeof v.apiVersion !== 'string' || v.apiVersion === '') errors.push({ field: join(path, 'apiVersion'), type: 'FieldValueRequired', text: 'Required value: must not be empty' });
      if (typeof v.kind !== 'string' || v.kind === '') errors.push({ field: join(path, 'kind'), type: 'FieldValueRequired', text: 'Required value: must not be empty' });
    }
    for (const [key, item] of Object.entries(v)) {
      if ((root || s['x-kubernetes-embedded-resource']) && key === 'metadata') continue;
      const sub = s.properties?.[key] ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
      const old = prior && isObject(prior.old) && key in prior.old ? { old: prior.old[key] } : undefined;
      if (sub) walk(item, sub, join(path, key), false, errors, old);
    }
  }
  for (const part of s.allOf ?? []) walk(v, part, path, root, errors, prior);
  if (s.anyOf && !s.anyOf.some((part) => validateValue(v, part, path).length === 0)) errors.push(invalidAt(path, v, `${path} in body must validate at least one schema (anyOf)`));
  if (s.oneOf && s.oneOf.filter((part) => validateValue(v, part, path).length === 0).length !== 1) errors.push(invalidAt(path, v, `${path} in body must validate one and only one schema (oneOf)`));
  if (s.not && validateValue(v, s.not, path).length === 0) errors.push(invalidAt(path, v, `${path} in body should not validate the schema (not)`));
}

/** x-kubernetes-list-type set and map: no duplicate items, no two items with the same keys (pkg/apiserver/schema/listtype/validation.go) */
function listTypeErrors(list: unknown[], s: Schema, path: string, errors: FieldError[]): void {
  const type = s['x-kubernetes-list-type'];
  if (type === 'set') {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      const k = JSON.stringify(item);
      if (seen.has(k)) errors.push({ field: `${path}[${i}]`, type: 'FieldValueDuplicate', text: `Duplicate value: ${k}` });
      seen.add(k);
    });
  }
  if (type === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (!isObject(item)) return;
      // a key absent from an item takes the key's default, as upstream's keyed lookup does
      const k = JSON.stringify(keys.map((key) => item[key] ?? s.items?.properties?.[key]?.default ?? null));
      if (seen.has(k)) errors.push({ field: `${path}[${i}]`, type: 'FieldValueDuplicate', text: `Duplicate value: ${JSON.stringify(Object.fromEntries(keys.map((key) => [key, item[key]])))}` });
      seen.add(k);
    });
  }
}

// ---- CEL: pkg/apiserver/schema/cel/validation.go -------------------------------------------------------------------

/** messageExpression wins when it yields a non-empty string; when it fails or yields nothing, message is used */
function messageOf(rule: CelRule, v: unknown, old: unknown): string | undefined {
  if (rule.messageExpression) {
    try {
      const text = compileCel(rule.messageExpression)({ self: toCel(v), ...(isTransitionRule(rule) ? { oldSelf: toCel(old) } : {}) });
      if (typeof text === 'string' && text.trim() !== '') return text;
    } catch {
      // falls back to message, as upstream does when the expression cannot be evaluated
    }
  }
  return rule.message;
}

/** A rule that names oldSelf is a transition rule: it runs only on update, and only where the old value exists. */
export function isTransitionRule(rule: CelRule): boolean {
  return /\boldSelf\b/.test(rule.rule);
}

/**
 * Every x-kubernetes-validations rule that fails, walking the value and, on update, the old value beside it (list
 * items are paired by index for atomic lists, by key for map lists, as upstream's correlation does).
 */
export function validateCel(value: unknown, old: unknown, schema: Schema | undefined, path: string, ratcheting = true): FieldError[] {
  const errors: FieldError[] = [];
  if (schema) celWalk(value, old, schema, path, errors, ratcheting);
  return errors;
}

function celWalk(v: unknown, old: unknown, s: Schema, path: string, errors: FieldError[], ratcheting: boolean): void {
  if (v === undefined || v === null) return;
  for (const rule of s['x-kubernetes-validations'] ?? []) {
    const transition = isTransitionRule(rule);
    if (transition && old === undefined && !rule.optionalOldSelf) continue;
    let ok: unknown;
    try {
      ok = compileCel(rule.rule)({ self: toCel(v), ...(transition ? { oldSelf: toCel(old) } : {}) });
    } catch (error) {
      // a runtime error fails the rule with its sentence, as upstream reports it
      errors.push(invalidAt(path, v, `${(error as Error).message.split('\n')[0]} evaluating rule: ${rule.rule}`));
      continue;
    }
    // a rule without oldSelf is ratcheted like the schema: an unchanged value is not refused again
    // (pkg/registry/customresource/strategy.go passes cel.WithRatcheting only under CRDValidationRatcheting)
    if (ok !== true && ratcheting && !transition && old !== undefined && sameJson(old, v)) continue;
    if (ok !== true) {
      const field = rule.fieldPath ? `${path}${rule.fieldPath}` : path;
      errors.push({ field, type: 'FieldValueInvalid', text: `Invalid value: ${shown(v)}: ${messageOf(rule, v, old) ?? `failed rule: ${rule.rule}`}` });
    }
  }
  if (Array.isArray(v) && s.items) {
    const oldList = Array.isArray(old) ? old : undefined;
    const keys = s['x-kubernetes-list-map-keys'];
    v.forEach((item, i) => {
      // only map lists correlate old items with new ones; items of atomic and set lists have no oldSelf
      let before: unknown;
      if (oldList && s['x-kubernetes-list-type'] === 'map' && keys && isObject(item)) {
        before = oldList.find((o) => isObject(o) && keys.every((k) => JSON.stringify(o[k]) === JSON.stringify(item[k])));
      }
      celWalk(item, before, s.items!, `${path}[${i}]`, errors, ratcheting);
    });
  }
  if (isObject(v)) {
    const oldObject = isObject(old) ? old : undefined;
    for (const [key, item] of Object.entries(v)) {
      const sub = s.properties?.[key] ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
      if (sub) celWalk(item, oldObject?.[key], sub, join(path, key), errors, ratcheting);
    }
  }
}

/**
 * What the apiextensions-apiserver does with a custom resource's body on create (old undefined) or update, in its
 * order (pkg/registry/customresource/strategy.go, validator.go; pkg/apiserver/customresource_handler.go): defaults,
 * prunes, then validates (after dropping the nulls the schema does not allow); CEL rules run only when the schema validation passed. Mutates `object`; returns the errors.
 */
export function admitCustomResource(
  object: Record<string, unknown>, old: Record<string, unknown> | undefined, schema: Schema | undefined, options: { ratcheting?: boolean } = {},
): { pruned: string[]; errors: FieldError[] } {
  if (!schema) return { pruned: [], errors: [] };
  // validation ratcheting only where the server's CRDValidationRatcheting gate is on (apiextensions-apiserver
  // pkg/features/kube_features.go: alpha and off in 1.28 and 1.29, beta and on from 1.30)
  const ratcheting = options.ratcheting ?? true;
  pruneNonNullableNulls(object, schema);
  applyDefaults(object, schema);
  const pruned = prune(object, schema, true);
  const errors = validateValue(object, schema, '', true, old && ratcheting ? { old } : undefined);
  if (errors.length === 0) errors.push(...validateCel(object, old, schema, '', ratcheting));
  return { pruned, errors: errors.map((e) => ({ ...e, field: e.field.replace(/^\./, '') || '<root>' })) };
}
