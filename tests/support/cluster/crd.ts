// CustomResourceDefinition rules the product meets during upgrades: served/storage versions, the conditions a
// real server sets, and status.storedVersions, which Kubernetes only ever grows on its own.
// (upstream: kubernetes/apiextensions-apiserver pkg/apis/apiextensions/validation and pkg/controller/status)
import type { KubeObject } from '../../../src/kube/types.ts';
import { invalid, invalidValue, required, type FieldError } from './errors.ts';
import { VERBS, type ResourceDef } from './resources.ts';
import { admitCustomResource, applyDefaults, prune, pruneNonNullableNulls, type Schema } from './crd-schema.ts';

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
const GROUP = 'apiextensions.k8s.io';

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  subresources?: { status?: unknown };
  additionalPrinterColumns?: { name: string; type: string; jsonPath: string; description?: string; priority?: number }[];
}
interface CrdSpec {
  group?: string;
  scope?: string;
  names?: { plural?: string; singular?: string; kind?: string; listKind?: string; shortNames?: string[]; categories?: string[] };
  versions?: CrdVersion[];
}

function specOf(crd: KubeObject): CrdSpec {
  return (crd.spec ?? {}) as CrdSpec;
}

export function storedVersionsOf(crd: KubeObject): string[] {
  const s = (crd.status ?? {}) as { storedVersions?: string[] };
  return s.storedVersions ?? [];
}

export function storageVersionOf(crd: KubeObject): string | undefined {
  return specOf(crd).versions?.find((v) => v.storage)?.name;
}

export function validateCrd(crd: KubeObject): void {
  const name = crd.metadata.name ?? '';
  const spec = specOf(crd);
  const errors: FieldError[] = [];
  if (!spec.group) errors.push(required('spec.group'));
  if (!spec.names?.plural) errors.push(required('spec.names.plural'));
  if (!spec.names?.kind) errors.push(required('spec.names.kind'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errors.push({ field: 'spec.scope', type: 'FieldValueNotSupported', text: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"` });
  if (spec.group && spec.names?.plural && name !== `${spec.names.plural}.${spec.group}`)
    errors.push(invalidValue('metadata.name', name, `must be spec.names.plural+"."+spec.group`));
  const versions = spec.versions ?? [];
  if (versions.length === 0) errors.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => v.storage).length !== 1)
    errors.push(invalidValue('spec.versions', versions.map((v) => v.name), 'must have exactly one version marked as storage version'));
  if (errors.length) throw invalid('CustomResourceDefinition', GROUP, name, errors);
}

/**
 * The real server's storedVersions rules: every stored version must still be in spec.versions, and the storage
 * version must be among them.
 */
export function validateStoredVersions(crd: KubeObject): void {
  const names = new Set((specOf(crd).versions ?? []).map((v) => v.name));
  const stored = storedVersionsOf(crd);
  const errors: FieldError[] = [];
  stored.forEach((v, i) => {
    if (!names.has(v)) errors.push(invalidValue(`status.storedVersions[${i}]`, v, 'missing from spec.versions'));
  });
  const storage = storageVersionOf(crd);
  if (storage && stored.length > 0 && !stored.includes(storage))
    errors.push(invalidValue('status.storedVersions', stored, `must have the storage version ${storage}`));
  if (errors.length) throw invalid('CustomResourceDefinition', GROUP, crd.metadata.name ?? '', errors);
}

/** Status as the apiextensions controllers settle it: names accepted, established, storage version recorded. */
export function settledStatus(crd: KubeObject, previous: KubeObject | undefined, now: string): Record<string, unknown> {
  const spec = specOf(crd);
  const storage = storageVersionOf(crd);
  const stored = previous ? [...storedVersionsOf(previous)] : [];
  if (storage && !stored.includes(storage)) stored.push(storage);
  const names = spec.names ?? {};
  const condition = (type: string, reason: string, message: string) => ({ type, status: 'True', lastTransitionTime: now, reason, message });
  const oldStatus = (previous?.status ?? {}) as { conditions?: { type: string }[] };
  const keep = (oldStatus.conditions ?? []).filter((c) => c.type !== 'NamesAccepted' && c.type !== 'Established');
  return {
    ...(previous?.status as object | undefined),
    acceptedNames: {
      plural: names.plural,
      singular: names.singular ?? names.kind?.toLowerCase(),
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      ...(names.shortNames ? { shortNames: names.shortNames } : {}),
      ...(names.categories ? { categories: names.categories } : {}),
    },
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
      ...keep,
    ],
    storedVersions: stored,
  };
}

export function crdToDef(crd: KubeObject): ResourceDef {
  const spec = specOf(crd);
  const names = spec.names ?? {};
  const versions = spec.versions ?? [];
  const storage = versions.find((v) => v.storage);
  return {
    group: spec.group ?? '',
    resource: names.plural ?? '',
    singular: names.singular ?? (names.kind ?? '').toLowerCase(),
    kind: names.kind ?? '',
    listKind: names.listKind ?? `${names.kind}List`,
    namespaced: spec.scope === 'Namespaced',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    versions: versions.map((v) => ({ name: v.name, served: v.served !== false, storage: v.storage === true })),
    // the status subresource follows the storage version's declaration
    statusSubresource: Boolean(storage?.subresources && 'status' in storage.subresources),
    nameRule: 'subdomain',
    builtin: false,
    // apiextensions-apiserver serves every verb on a custom resource (customresource_handler.go)
    verbs: VERBS,
    printerColumns: storage?.additionalPrinterColumns ?? [],
  };
}

/** the openAPIV3Schema a CRD declares for one version (a CRD without one stores whatever it is sent) */
export function schemaOf(crd: KubeObject, version: string): Schema | undefined {
  const v = (specOf(crd).versions ?? []).find((x) => x.name === version) as (CrdVersion & { schema?: { openAPIV3Schema?: Schema } }) | undefined;
  return v?.schema?.openAPIV3Schema;
}

/**
 * A custom resource's create or update body, defaulted, pruned and validated against its CRD's schema for the version
 * the request used (kubernetes/apiextensions-apiserver pkg/registry/customresource/strategy.go and validator.go): the
 * body is changed in place; a schema or CEL failure is the real server's 422. Returns the pruned fields' paths.
 */
export function admitCustomObject(crd: KubeObject, version: string, object: KubeObject, old: KubeObject | undefined, options: { ratcheting?: boolean } = {}): string[] {
  const spec = specOf(crd);
  const { errors, pruned } = admitCustomResource(object, old, schemaOf(crd, version), options);
  if (errors.length) throw invalid(spec.names?.kind ?? '', spec.group ?? '', object.metadata?.name ?? '', errors);
  return pruned;
}

/**
 * A stored custom resource as a read decodes it with its CRD's current schema (apiextensions-apiserver
 * pkg/apiserver/customresource_handler.go, crdConversionRESTOptionsGetter: the storage codec's schemaCoercingDecoder
 * prunes unknown fields (unstructuredSchemaCoercer.apply → structuralpruning.PruneWithOptions, then
 * PruneNonNullableNullsWithoutDefaults) and its unstructuredDefaulter applies the defaults, both with the schema of the
 * version the object was stored in). What etcd holds is not changed: the next write stores the decoded object. A
 * version no longer in the CRD is decoded with the storage version's schema. Returns undefined when the read changes
 * nothing.
 */
export function decodeStoredCustomObject(crd: KubeObject, stored: KubeObject): KubeObject | undefined {
  const version = stored.apiVersion.slice(stored.apiVersion.indexOf('/') + 1);
  const schema = schemaOf(crd, version) ?? schemaOf(crd, storageVersionOf(crd) ?? version);
  if (!schema) return undefined;
  const object = structuredClone(stored) as KubeObject & Record<string, unknown>;
  prune(object, schema, true);
  pruneNonNullableNulls(object, schema);
  applyDefaults(object, schema);
  return JSON.stringify(object) === JSON.stringify(stored) ? undefined : object;
}
