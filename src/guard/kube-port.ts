// The few Kubernetes operations the guard engines need, named by what they do. Keeping them in one narrow port
// means the engines read as sentences and one adapter (guardKubeOf) is all that knows the shared client's shape.
import type { KubeObject } from '../kube/types.ts';

/** A resource at one version: what a request path is built from. `group` is '' for the core group. */
export interface ResourceAt {
  group: string;
  version: string;
  /** plural name */
  resource: string;
  namespaced: boolean;
}

export interface Page {
  items: KubeObject[];
  /** continue token of the next page; absent on the last page */
  continue?: string;
}

export interface PageRequest {
  limit: number;
  continue?: string;
}

export interface GuardKube {
  /** undefined when the object does not exist (404) */
  get(at: ResourceAt, name: string, namespace?: string): Promise<KubeObject | undefined>;
  create(at: ResourceAt, object: KubeObject): Promise<KubeObject>;
  /** full update (PUT); a stale metadata.resourceVersion fails with 409 Conflict */
  replace(at: ResourceAt, object: KubeObject): Promise<KubeObject>;
  /** update of the /status subresource */
  replaceStatus(at: ResourceAt, object: KubeObject): Promise<KubeObject>;
  delete(at: ResourceAt, name: string, namespace?: string): Promise<void>;
  /** one page of a cluster-wide list */
  listPage(at: ResourceAt, request: PageRequest): Promise<Page>;
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

export const CRDS: ResourceAt = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false };
export const NAMESPACES: ResourceAt = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };
export const PROFILES: ResourceAt = { group: 'kubeflow.org', version: 'v1', resource: 'profiles', namespaced: false };
export const POLICIES: ResourceAt = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'validatingadmissionpolicies',
  namespaced: false,
};
export const BINDINGS: ResourceAt = { ...POLICIES, resource: 'validatingadmissionpolicybindings' };

/** Every object of a resource, page by page, so that a cluster with many objects never loads them all at once. */
export async function* everyPage(kube: GuardKube, at: ResourceAt, limit = 500, startAt?: string): AsyncGenerator<Page> {
  let token = startAt;
  do {
    const page = await kube.listPage(at, token === undefined ? { limit } : { limit, continue: token });
    yield page;
    token = page.continue || undefined;
  } while (token !== undefined);
}
