// The resources the simulated kubelet reads and writes through the in-process API.
// (core/v1 pods and persistentvolumeclaims, batch/v1 jobs, storage.k8s.io/v1 storageclasses: upstream
// kubernetes/kubernetes api/discovery lists them under these groups.)
import type { ResourceRef } from '../cluster/contract.ts';

export const JOBS: ResourceRef = { group: 'batch', resource: 'jobs' };
export const PODS: ResourceRef = { group: '', resource: 'pods' };
export const PVCS: ResourceRef = { group: '', resource: 'persistentvolumeclaims' };
export const PVS: ResourceRef = { group: '', resource: 'persistentvolumes' };
export const SECRETS: ResourceRef = { group: '', resource: 'secrets' };
export const CONFIGMAPS: ResourceRef = { group: '', resource: 'configmaps' };
export const EVENTS: ResourceRef = { group: '', resource: 'events' };
export const STORAGE_CLASSES: ResourceRef = { group: 'storage.k8s.io', resource: 'storageclasses' };

export function sameRef(a: ResourceRef, b: ResourceRef): boolean {
  return a.group === b.group && a.resource === b.resource;
}
