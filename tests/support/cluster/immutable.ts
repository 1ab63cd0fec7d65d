// Fields an update may not change, as the API server's update validation refuses them:
// - PersistentVolumeClaims: kubernetes/kubernetes pkg/apis/core/validation/validation.go, ValidatePersistentVolumeClaimUpdate:
//   the spec is immutable, except that volumeName may be set once, storageClassName may be set once where it was
//   unset, and a bound claim's storage request may grow (never shrink);
// - Secrets and ConfigMaps: ValidateSecretUpdate / ValidateConfigMapUpdate: a Secret's type never changes; once
//   `immutable` is true, neither the data nor `immutable` itself may change.
// The real PVC message ends with a diff of the two specs (cmp.Diff), left out here.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { FieldError } from './errors.ts';
import { quantity } from './quantity.ts';

function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v);
}

interface PvcSpec { volumeName?: string; storageClassName?: string | null; resources?: { requests?: Record<string, string> }; volumeAttributesClassName?: string }

export function validatePvcUpdate(next: KubeObject, old: KubeObject): FieldError[] {
  const before = structuredClone((old.spec ?? {}) as PvcSpec);
  const after = structuredClone((next.spec ?? {}) as PvcSpec);
  const errors: FieldError[] = [];
  if (!before.volumeName && after.volumeName) before.volumeName = after.volumeName;
  if ((before.storageClassName === undefined || before.storageClassName === null) && after.storageClassName) before.storageClassName = after.storageClassName;
  delete before.volumeAttributesClassName;
  delete after.volumeAttributesClassName;
  const bound = (old.status as { phase?: string } | undefined)?.phase === 'Bound';
  const oldSize = before.resources?.requests?.storage;
  const newSize = after.resources?.requests?.storage;
  if (bound && oldSize !== undefined && newSize !== undefined) {
    if (quantity(newSize) < quantity(oldSize))
      errors.push({ field: 'spec.resources.requests.storage', type: 'FieldValueForbidden', text: 'Forbidden: field can not be less than previous value' });
    after.resources!.requests!.storage = oldSize;
  }
  if (canonical(before) !== canonical(after))
    errors.push({ field: 'spec', type: 'FieldValueForbidden', text: 'Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims' });
  return errors;
}

export function validateDataUpdate(kind: 'Secret' | 'ConfigMap', next: KubeObject, old: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const type = (o: KubeObject) => (o as { type?: string }).type;
  if (kind === 'Secret' && type(next) !== undefined && type(next) !== type(old))
    errors.push({ field: 'type', type: 'FieldValueInvalid', text: `Invalid value: ${JSON.stringify(type(next))}: field is immutable` });
  const immutable = (o: KubeObject) => (o as { immutable?: boolean }).immutable === true;
  if (!immutable(old)) return errors;
  if (!immutable(next)) errors.push({ field: 'immutable', type: 'FieldValueForbidden', text: 'Forbidden: field is immutable when `immutable` is set' });
  const data = (o: KubeObject) => canonical({ data: (o as { data?: unknown }).data ?? {}, binaryData: (o as { binaryData?: unknown }).binaryData ?? {} });
  if (data(next) !== data(old)) errors.push({ field: 'data', type: 'FieldValueForbidden', text: 'Forbidden: field is immutable when `immutable` is set' });
  return errors;
}
