// The contract between the embedded API server (server side: storage, HTTP, admission, garbage collector)
// and the simulated Kubeflow controllers and dataset (tests/support/cluster/kubeflow/).
// Controllers run in the server's process and use this in-process API, which has the same semantics as the
// HTTP API (validation, resourceVersion conflicts, finalizers, admission, garbage collection) minus authentication.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ClusterNetwork } from '../net/cluster-network.ts';

/** Names a resource the way the API does: group ('' = core) and plural resource name. */
export interface ResourceRef {
  group: string;
  resource: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ClusterEvent {
  type: WatchEventType;
  ref: ResourceRef;
  object: KubeObject;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

/**
 * Errors thrown by the in-process API carry the HTTP status and reason the HTTP API would answer with
 * (404 NotFound, 409 AlreadyExists / Conflict, 422 Invalid, 403 Forbidden, ...).
 */
export interface ClusterApiError extends Error {
  status: number;
  reason: string;
}

export interface InProcessApi {
  /** create; objects are stored in the resource's storage version; sets uid, resourceVersion, creationTimestamp */
  create(ref: ResourceRef, object: KubeObject): KubeObject;
  get(ref: ResourceRef, name: string, namespace?: string): KubeObject | undefined;
  /**
   * The stored object itself, frozen, for a caller that only reads it: what a controller's informer cache hands out
   * (kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/shared_informer.go: never to be modified). It
   * saves the deep copy `get` makes; a write to it throws.
   */
  read?(ref: ResourceRef, name: string, namespace?: string): KubeObject | undefined;
  list(ref: ResourceRef, options?: ListOptions): KubeObject[];
  /** full update; 409 Conflict when metadata.resourceVersion is set and stale */
  update(ref: ResourceRef, object: KubeObject): KubeObject;
  /** update of the status subresource only */
  updateStatus(ref: ResourceRef, object: KubeObject): KubeObject;
  /** JSON merge patch (RFC 7386) */
  mergePatch(ref: ResourceRef, name: string, namespace: string | undefined, patch: unknown): KubeObject;
  delete(ref: ResourceRef, name: string, namespace?: string, options?: DeleteOptions): void;
  /** every change of every object, delivered asynchronously (after the write returns), in resourceVersion order */
  subscribe(listener: (event: ClusterEvent) => void): () => void;
  /** the node agent that holds containers' logs offers them to `GET pods/<name>/log`; returns the withdrawal */
  serveLogs?(source: PodLogSource): () => void;
  /** the node agent that runs containers offers `pods/<name>/exec` into them (exec.ts); returns the withdrawal */
  serveExec?(source: PodExecSource): () => void;
  /**
   * the cluster's loopback network (tests/support/net/cluster-network.ts): its Service and Pod ranges and its DNS
   * server; absent when the cluster has none (an in-process Cluster, an explicit serviceNetwork, or no root)
   */
  readonly network?: ClusterNetwork;
}

/** A container's log so far, or undefined when it has not started. */
export type PodLogSource = (namespace: string, pod: string, container: string) => string | undefined;

/** What `pods/<name>/exec` asks a container to run, and which of its streams the client attached. */
export interface ExecRequest {
  command: string[];
  stdin: boolean;
}

/** A command running in a container: its streams, and how it ended (an exit code, or why it never started). */
export interface ExecProcess {
  stdin: NodeJS.WritableStream | undefined;
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  done: Promise<{ exitCode: number } | { startError: string }>;
  kill(): void;
}

/** A running container's exec, or undefined when the container is not running (not yet, or no longer). */
export type PodExecSource = (namespace: string, pod: string, container: string) => ((request: ExecRequest) => ExecProcess) | undefined;

/** A simulated controller: reacts to events asynchronously, like a real one, and writes through the API. */
export interface Controller {
  name: string;
  start(api: InProcessApi): () => void;
}
