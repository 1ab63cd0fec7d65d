// Unknown fields in a write's body, as kube-apiserver's decoding treats them, and the `fieldValidation` query parameter:
// - a built-in kind's body is decoded into its Go struct, so a field the type does not declare (also inside metadata,
//   an ObjectMeta) is dropped, whatever the directive. The strict decoder (kubernetes-sigs/json, internal/golang/
//   encoding/json/kubernetes_patch.go: case-sensitive, the path of each unknown field built as `spec.containers[0].foo`,
//   at most 100 kept) reports them as `unknown field "<path>"`;
// - a custom resource's unknown fields are pruned by its schema (crd-schema.ts) and its metadata coerced into an
//   ObjectMeta (apiextensions-apiserver pkg/apiserver/schema/objectmeta/coerce.go), reported the same way;
// - staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (fieldValidation: an empty directive is Warn),
//   create.go and update.go (Warn: each unknown field a warning; Strict: 400 `<Kind> in version "<v>" cannot be
//   handled as a <Kind>: strict decoding error: unknown field "<path>", …`; Ignore: silently dropped), patch.go
//   (jsonPatcher.applyPatchToCurrentObject: a patched object with unknown fields is, under Strict, 422 with an empty
//   kind and name, `patch: Invalid value: "<patched JSON>": strict decoding error: …`; a strategic merge patch prints
//   the patch as a Go map there, strategicPatchObject → applyPatchToObject, which is not imitated: the patched JSON
//   stands in); server-side apply's own answers to undeclared fields (the field manager's typed conversion) are not
//   modelled: an applied configuration's unknown fields are dropped like an update's;
// - staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (ValidateFieldValidation: "", Ignore,
//   Strict, Warn; anything else 422 `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: …`);
// - the Warning header: staging/src/k8s.io/apiserver/pkg/endpoints/filters/warning.go (recorder.AddWarning: empty texts
//   skipped, duplicates once, past 4096 runes in all every text cut to 256 runes) and staging/src/k8s.io/apimachinery/
//   pkg/util/net/http.go (NewWarningHeader: `299 - "<text>"`, `"` and `\` escaped).
// Which fields a built-in type declares is read from @kubernetes/client-node's generated models (their
// attributeTypeMap, generated from the Kubernetes OpenAPI document): a client library's copy of the API's types, not
// the product's rules. The models follow a newer Kubernetes than the 1.30/1.31 this server plays, so a field added since
// is kept here where a 1.31 server would drop it.
import * as models from '@kubernetes/client-node';
import type { KubeObject } from '../../../src/kube/types.ts';
import { ApiError } from './errors.ts';
import type { ResourceDef } from './resources.ts';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

interface Attribute { baseName: string; type: string }
type Model = { getAttributeTypeMap(): Attribute[] };

const registry = models as unknown as Record<string, Model | undefined>;
const attributesCache = new Map<string, Map<string, string> | null>();

/** the declared fields of a client-node model, JSON name → type; null for no such model */
function attributesOf(type: string): Map<string, string> | null {
  let found = attributesCache.get(type);
  if (found !== undefined) return found;
  const model = registry[type];
  found = model && typeof model.getAttributeTypeMap === 'function' ? new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type])) : null;
  attributesCache.set(type, found);
  return found;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** the model of a built-in kind: CoreV1Event / EventsV1Event where a kind name is in two groups, else V1Job, V2HorizontalPodAutoscaler */
function modelOf(def: ResourceDef, version: string): string | undefined {
  const prefix = def.group === '' ? 'Core' : cap(def.group.split('.')[0]!);
  for (const name of [`${prefix}${cap(version)}${def.kind}`, `${cap(version)}${def.kind}`]) if (attributesOf(name)) return name;
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** drops what `type` does not declare from `value`, recording each dropped path */
function dropUndeclared(value: unknown, type: string, path: string, unknown: string[]): void {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((item, i) => dropUndeclared(item, array[1]!, `${path}[${i}]`, unknown));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (isObject(value)) for (const [k, v] of Object.entries(value)) dropUndeclared(v, map[1]!, `${path}.${k}`, unknown);
    return;
  }
  const attributes = attributesOf(type);
  if (!attributes || !isObject(value)) return;
  for (const key of Object.keys(value)) {
    const field = path ? `${path}.${key}` : key;
    const fieldType = attributes.get(key);
    if (fieldType === undefined) {
      unknown.push(field);
      delete value[key];
    } else dropUndeclared(value[key], fieldType, field, unknown);
  }
}

/**
 * Drops the fields a write's body holds that its kind does not declare (a built-in kind: anywhere; a custom resource:
 * inside metadata, its schema prunes the rest) and returns their paths in the order the body lists them.
 */
export function dropUnknownFields(def: ResourceDef, obj: KubeObject): string[] {
  const unknown: string[] = [];
  const version = (obj.apiVersion ?? '').split('/').pop() ?? '';
  const model = def.builtin ? modelOf(def, version) : undefined;
  if (model) dropUndeclared(obj, model, '', unknown);
  else if (isObject(obj.metadata)) dropUndeclared(obj.metadata, 'V1ObjectMeta', 'metadata', unknown);
  return unknown;
}

/** `fieldValidation` of a write's query: '' is Warn; an unknown value is the 422 of ValidateFieldValidation */
export function fieldValidationOf(value: string | null, options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): FieldValidation {
  const v = value ?? '';
  if (v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  const text = `Unsupported value: ${JSON.stringify(v)}: supported values: "", "Ignore", "Strict", "Warn"`;
  throw new ApiError(422, 'Invalid', `${options}.meta.k8s.io "" is invalid: fieldValidation: ${text}`, {
    kind: options, group: 'meta.k8s.io', causes: [{ reason: 'FieldValueNotSupported', message: text, field: 'fieldValidation' }],
  });
}

const strictText = (paths: string[]) => `strict decoding error: ${paths.slice(0, 100).map((p) => `unknown field ${JSON.stringify(p)}`).join(', ')}`;

/** create.go / update.go under Strict: the decoder's error as a 400 */
export function strictDecodingError(def: ResourceDef, version: string, paths: string[]): ApiError {
  return new ApiError(400, 'BadRequest', `${def.kind} in version ${JSON.stringify(version)} cannot be handled as a ${def.kind}: ${strictText(paths)}`);
}

/** patch.go under Strict: the patched object's strict decoding error as a 422 with an empty kind and name */
export function strictPatchError(patched: KubeObject, paths: string[]): ApiError {
  const text = `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${strictText(paths)}`;
  return new ApiError(422, 'Invalid', ` "" is invalid: patch: ${text}`, { causes: [{ reason: 'FieldValueInvalid', message: text, field: 'patch' }] });
}

export const unknownFieldWarning = (path: string) => `unknown field ${JSON.stringify(path)}`;

const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024;
const TRUNCATE_ITEM_RUNES = 256;

/** NewWarningHeader(299, "-", text) */
function warningHeader(text: string): string {
  return `299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** The warnings of one request and the Warning header lines they make (filters/warning.go, recorder) */
export class WarningRecorder {
  private readonly ordered: string[] = [];
  private readonly recorded = new Set<string>();
  private written = 0;
  private truncating = false;
  headers: string[] = [];

  add(text: string): void {
    if (text.length === 0) return;
    if (this.written >= TRUNCATE_AT_TOTAL_RUNES && this.truncating) return;
    if (this.recorded.has(text)) return;
    this.recorded.add(text);
    this.ordered.push(text);
    const cut = (t: string) => { const runes = [...t]; return runes.length > TRUNCATE_ITEM_RUNES ? runes.slice(0, TRUNCATE_ITEM_RUNES).join('') : t; };
    let shown = text;
    if (this.truncating) shown = cut(text);
    const runes = [...shown].length;
    if (this.written + runes <= TRUNCATE_AT_TOTAL_RUNES || this.truncating) {
      this.written += runes;
      this.headers.push(warningHeader(shown));
      return;
    }
    this.truncating = true;
    this.written = 0;
    this.headers = [];
    for (const t of this.ordered) {
      const c = cut(t);
      this.written += [...c].length;
      this.headers.push(warningHeader(c));
    }
  }
}
