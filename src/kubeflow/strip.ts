// What the API server owns in an object: a restored copy must not carry it (the server refuses a resourceVersion
// on create, and a uid or controller reference from another cluster points at nothing).
import type { KubeObject } from '../kube/types.ts';

const serverMetadata = [
  'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink',
] as const;

/** a copy without server-owned fields, status and controller ownerReferences; the input is left untouched */
export function stripServerFields(object: KubeObject): KubeObject {
  const { status: _status, ...rest } = structuredClone(object);
  const metadata = rest.metadata;
  for (const field of serverMetadata) delete metadata[field];
  if (metadata.ownerReferences) {
    const kept = metadata.ownerReferences.filter((owner) => owner.controller !== true);
    if (kept.length) metadata.ownerReferences = kept;
    else delete metadata.ownerReferences;
  }
  return rest as KubeObject;
}
