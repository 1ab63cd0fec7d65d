// Types and required fields of the built-in kinds, checked against the real OpenAPI schemas of Kubernetes
// (kubernetes/kubernetes api/openapi-spec, as the `kubernetes-models` package compiles them into validators) instead of a
// hand-written list. What the API server answers:
// - a value of the wrong JSON type cannot be decoded into the Go struct: 400 BadRequest `<Kind> in version "<v>"
//   cannot be handled as a <Kind>: json: cannot unmarshal …` (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
//   create.go and update.go, the decoder's error; Go names the innermost struct type and the path without indices,
//   here the field path stands in for both);
// - a required field left out fails validation: 422 Invalid `<field>: Required value` (pkg/apis/*/validation).
// Enum values are left to the kinds' own validation (jobs.ts, services.ts): the schemas' enums list what a version knew,
// and a server checks only some of them.
import type { KubeObject } from '../../../src/kube/types.ts';
import { ApiError, type FieldError } from './errors.ts';
import { builtinResources, storageVersion, type ResourceDef } from './resources.ts';

interface SchemaError { instancePath: string; keyword: string; params: { missingProperty?: string; type?: string } }
type Validate = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };

/** the schema's name in the OpenAPI document: io.k8s.api.<group>.<version>.<Kind>, as kubernetes-models names it */
function schemaName(d: ResourceDef): string | undefined {
  if (d.group === 'apiextensions.k8s.io' || d.group === 'apiregistration.k8s.io') return undefined; // not io.k8s.api
  const group = d.group === '' ? 'core' : d.group.split('.')[0]!;
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  const version = storageVersion(d);
  return `IoK8sApi${cap(group)}${cap(version)}${d.kind}`;
}

const validators = new Map<string, Validate>();
for (const d of builtinResources()) {
  const name = schemaName(d);
  if (!name) continue;
  try {
    const module = (await import(`kubernetes-models/_schemas/${name}`)) as { validate: Validate };
    validators.set(`${d.group}/${d.kind}`, module.validate);
  } catch {
    // a kind the package has no schema for (Binding, ComponentStatus) is served unchecked
  }
}

/** `/spec/containers/0/name` → `spec.containers[0].name` */
function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child) parts.push(child);
  return parts.reduce((path, p) => (/^\d+$/.test(p) ? `${path}[${p}]` : path ? `${path}.${p}` : p), '');
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'bool' : typeof value === 'string' ? 'string' : 'object';
}

function at(object: unknown, instancePath: string): unknown {
  let v: unknown = object;
  for (const p of instancePath.split('/').slice(1)) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return v;
}

/**
 * What the schema of a built-in kind refuses in `object`: throws the 400 for a value of the wrong type, and returns
 * the missing required fields (for the caller's 422).
 */
export function schemaProblems(d: ResourceDef, object: KubeObject): FieldError[] {
  const validate = validators.get(`${d.group}/${d.kind}`);
  if (!validate) return [];
  // status is written through its own subresource and not required here; apiVersion and kind were checked already
  const { status: _status, ...body } = object;
  if (validate(body)) return [];
  const errors = validate.errors ?? [];
  // a oneOf/anyOf branch (int-or-string) reports type errors for the branch not taken: only a value that matches no
  // JSON type the field allows is a decoding error
  const typeError = errors.find((e) => e.keyword === 'type' && !errors.some((o) => o !== e && o.instancePath === e.instancePath && o.keyword === 'type' && o.params.type !== e.params.type) && !(e.params.type === 'integer' && Number.isInteger(at(body, e.instancePath))));
  if (typeError) {
    const value = at(body, typeError.instancePath);
    const goType = typeError.params.type === 'integer' ? 'int32' : typeError.params.type === 'object' ? 'map' : typeError.params.type === 'array' ? 'slice' : typeError.params.type;
    throw new ApiError(400, 'BadRequest', `${d.kind} in version "${object.apiVersion.split('/').pop()}" cannot be handled as a ${d.kind}: json: cannot unmarshal ${jsonType(value)} into Go struct field ${fieldPath(typeError.instancePath)} of type ${goType}`);
  }
  const missing: FieldError[] = errors
    .filter((e) => e.keyword === 'required' && e.params.missingProperty)
    .map((e) => ({ field: fieldPath(e.instancePath, e.params.missingProperty), type: 'FieldValueRequired', text: 'Required value' }));
  return [...new Map(missing.map((m) => [m.field, m])).values()];
}
