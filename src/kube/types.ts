// The shapes every engine shares when it talks about Kubernetes objects and the resources that serve them.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** Any Kubernetes object as JSON: built-in or custom. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** One resource (plural) in one group/version as discovery reports it. `group` is '' for the core group. */
export interface ApiResource {
  group: string;
  version: string;
  /** plural name: 'notebooks', 'persistentvolumeclaims' */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  /** the group's preferred version, as discovery reports it */
  preferredVersion: string;
  /** every version of the group that serves this resource, preferred first */
  versions: string[];
}

/** 'v1' for the core group, 'group/version' otherwise. */
export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}
