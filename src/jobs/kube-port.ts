// The narrow view of the Kubernetes API the hardened Jobs (volume movers, control-plane copies) need. The engines hand
// in an adapter over the kube seam (src/kube/client.ts); tests hand in one over the embedded server's in-process API.
// Keeping the port this small is what lets the Jobs stay independent of which client drives them.
import type { KubeObject } from '../kube/types.ts';

/** A resource the mover touches: namespaced unless `namespaced` is false (then every call's namespace is ''). */
export interface MoverResource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  /** false for a cluster-scoped resource (PersistentVolumes, VolumeSnapshotContents), whose calls take the namespace '' */
  namespaced?: boolean;
}

export const JOBS: MoverResource = { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job' };
export const PODS: MoverResource = { group: '', version: 'v1', resource: 'pods', kind: 'Pod' };
export const SECRETS: MoverResource = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' };
export const EVENTS: MoverResource = { group: '', version: 'v1', resource: 'events', kind: 'Event' };
export const PVCS: MoverResource = {
  group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim',
};

export interface WaitOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface VolumeKube {
  /** undefined when the object does not exist */
  get(resource: MoverResource, namespace: string, name: string): Promise<KubeObject | undefined>;
  list(resource: MoverResource, namespace: string, labelSelector?: string): Promise<KubeObject[]>;
  /** rejects with an error whose `status` is 409 when the name is taken */
  create(resource: MoverResource, object: KubeObject): Promise<KubeObject>;
  /** a JSON merge patch (RFC 7386: null removes a key) */
  mergePatch(resource: MoverResource, namespace: string, name: string, patch: unknown): Promise<KubeObject>;
  /** the last `tailLines` lines a container of a Pod has logged */
  podLog(namespace: string, pod: string, container: string, tailLines: number): Promise<string>;
  /** succeeds when the object is already gone; Background propagation so a Job takes its Pods along */
  delete(resource: MoverResource, namespace: string, name: string): Promise<void>;
  /**
   * Resolves with the object (undefined once deleted) as soon as `done` holds for it, watching rather than polling;
   * rejects when timeoutMs passes first.
   */
  waitFor(
    resource: MoverResource,
    namespace: string,
    name: string,
    done: (object: KubeObject | undefined) => boolean,
    options: WaitOptions,
  ): Promise<KubeObject | undefined>;
}
