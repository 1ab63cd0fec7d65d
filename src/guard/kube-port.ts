// The few Kubernetes operations the guard engines need. The shared KubeClient (src/kube/client.ts) satisfies this
// interface as it is, so callers pass their client; naming only what we use keeps the engines' needs visible.
import type { ApiResource, KubeObject } from '../kube/types.ts';

export interface GuardKube {
  /** undefined when the object does not exist (404) */
  tryGet(resource: ApiResource, name: string, namespace?: string): Promise<KubeObject | undefined>;
  create(resource: ApiResource, object: KubeObject): Promise<KubeObject>;
  /** full update (PUT); a stale metadata.resourceVersion fails with 409 Conflict */
  replace(resource: ApiResource, object: KubeObject): Promise<KubeObject>;
  /** update of the /status subresource */
  replaceStatus(resource: ApiResource, object: KubeObject): Promise<KubeObject>;
  delete(resource: ApiResource, name: string, namespace?: string): Promise<unknown>;
  /** every object of the resource (all namespaces), page by page, each item with apiVersion and kind */
  listPages(resource: ApiResource, options?: { limit?: number }): AsyncIterable<KubeObject[]>;
}

/** What the API answered when a request failed; the shared client's KubeApiError has this shape. */
export interface ApiFailure {
  status: number;
  reason: string;
  message: string;
}

export function isApiFailure(error: unknown, status?: number): error is ApiFailure {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as Partial<ApiFailure>;
  if (typeof candidate.status !== 'number') return false;
  return status === undefined || candidate.status === status;
}

/** An ApiResource for a resource we know without discovery. */
export function knownResource(group: string, version: string, resource: string, kind: string, namespaced: boolean): ApiResource {
  return { group, version, resource, kind, namespaced, verbs: [], preferredVersion: version, versions: [version] };
}

export const CRDS = knownResource('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false);
export const NAMESPACES = knownResource('', 'v1', 'namespaces', 'Namespace', false);
export const PROFILES = knownResource('kubeflow.org', 'v1', 'profiles', 'Profile', false);
export const POLICIES = knownResource(
  'admissionregistration.k8s.io',
  'v1',
  'validatingadmissionpolicies',
  'ValidatingAdmissionPolicy',
  false,
);
export const BINDINGS = knownResource(
  'admissionregistration.k8s.io',
  'v1',
  'validatingadmissionpolicybindings',
  'ValidatingAdmissionPolicyBinding',
  false,
);
