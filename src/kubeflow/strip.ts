// What the API server owns in an object: a restored copy must not carry it (the server refuses a resourceVersion
// on create, and a uid or controller reference from another cluster points at nothing).
import type { KubeObject } from '../kube/types.ts';

const serverMetadata = [
  'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink',
] as const;

/** a copy without server-owned fields, status and controller ownerReferences; the input is left untouched */
export function stripServerFields(object: KubeObject): KubeObject {
  const { status: _status, metadata, ...body } = object;
  return { ...structuredClone(body), metadata: stripServerMetadata(metadata) } as KubeObject;
}

/**
 * The metadata part of stripServerFields, as a copy of its own. ObjectMeta nests two levels at most once managedFields
 * are gone (maps of strings, lists of strings or of flat owner references), so copying those levels is a deep copy,
 * at a fraction of structuredClone's cost: a restore does this for every object.
 */
export function stripServerMetadata(metadata: KubeObject['metadata']): KubeObject['metadata'] {
  const copy: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(metadata)) {
    if (value === undefined || (serverMetadata as readonly string[]).includes(field)) continue;
    copy[field] = copyOneLevel(value);
  }
  const kept = (copy.ownerReferences as Array<{ controller?: boolean }> | undefined)?.filter((owner) => owner.controller !== true);
  if (kept?.length) copy.ownerReferences = kept;
  else delete copy.ownerReferences;
  return copy as KubeObject['metadata'];
}

function copyOneLevel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item: unknown) => (typeof item === 'object' && item !== null ? structuredCloneIfDeep(item) : item));
  if (typeof value === 'object' && value !== null) return structuredCloneIfDeep(value);
  return value;
}

/** a flat object copied by spreading; anything nested deeper (not ObjectMeta's shape) falls back to structuredClone */
function structuredCloneIfDeep(value: object): unknown {
  if (Array.isArray(value)) return structuredClone(value);
  for (const inner of Object.values(value)) if (typeof inner === 'object' && inner !== null) return structuredClone(value);
  return { ...value };
}
