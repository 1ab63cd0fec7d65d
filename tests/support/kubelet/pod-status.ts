// A Pod's status as its kubelet (or, for an unschedulable Pod, the scheduler) writes it: the current object's status
// with the given fields replaced, through the status subresource.
// Upstream: kubernetes/kubernetes pkg/kubelet/status/status_manager.go (syncPod: the kubelet patches the Pod's status
// subresource, never its spec).
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { fresh } from './objects.ts';
import { PODS } from './refs.ts';

export function setPodStatus(api: InProcessApi, pod: KubeObject, status: Record<string, unknown>): void {
  const current = api.get(PODS, pod.metadata.name ?? '', pod.metadata.namespace);
  if (!current) return;
  api.updateStatus(PODS, fresh({ ...current, status: { ...((current.status ?? {}) as object), ...status } }));
}
