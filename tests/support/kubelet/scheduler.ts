// The scheduler: places each Pending Pod on a node, round robin over the nodes, or on the one its node affinity,
// nodeSelector or nodeName requires; a Pod that requires a node the cluster lacks stays Pending with PodScheduled
// False, reason Unschedulable. Placing a Pod binds the claims it mounts, which is what WaitForFirstConsumer waits for.
// Upstream: kubernetes/kubernetes pkg/scheduler/schedule_one.go (the binding that writes spec.nodeName, and the
// PodScheduled condition of a Pod that fits nowhere), pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go
// (ErrReasonPod "node(s) didn't match Pod's node affinity/selector"), pkg/scheduler/framework/types.go
// (NoNodeAvailableMsg "0/%v nodes are available") and pkg/scheduler/framework/plugins/volumebinding/binder.go (claims
// of a WaitForFirstConsumer class are provisioned for the chosen node; storage.ts binds them).
// Simplified: the real message also counts the nodes per reason ("0/2 nodes are available: 2 node(s) didn't ..."),
// and no resources, taints or scores are weighed.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import type { PodSpec } from './objects.ts';
import { setPodStatus } from './pod-status.ts';
import { PODS, PVCS } from './refs.ts';
import { bindClaim, isBound } from './storage.ts';
import type { SnapshotStore } from './snapshots/hostpath-driver.ts';

export interface Scheduler {
  /** the node a Pending Pod goes to, its claims bound there; undefined when it is not Pending or fits nowhere */
  place(pod: KubeObject): string | undefined;
  /** writes the placement into the Pod (spec.nodeName), unless it named its node itself */
  bind(pod: KubeObject, node: string): KubeObject;
}

/** The node a Pod's required node affinity or nodeSelector names by hostname or metadata.name, if any. */
function requiredNode(spec: PodSpec): string | undefined {
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    const field = term.matchFields?.find((f) => f.key === 'metadata.name')?.values?.[0];
    if (field) return field;
    const host = term.matchExpressions?.find((e) => e.key === 'kubernetes.io/hostname')?.values?.[0];
    if (host) return host;
  }
  return spec.nodeSelector?.['kubernetes.io/hostname'];
}

export function scheduler(api: InProcessApi, nodes: string[], dataDir: string, snapshots?: SnapshotStore): Scheduler {
  let nextNode = 0;
  return {
    place(pod) {
      if (((pod.status as { phase?: string } | undefined)?.phase ?? 'Pending') !== 'Pending') return undefined;
      const spec = (pod.spec ?? {}) as PodSpec;
      let node = spec.nodeName ?? requiredNode(spec);
      if (node && !nodes.includes(node)) {
        setPodStatus(api, pod, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: `0/${nodes.length} nodes are available: node(s) didn't match Pod's node affinity/selector.` }] });
        return undefined;
      }
      node ??= nodes[nextNode++ % nodes.length] ?? 'node-a';
      const namespace = pod.metadata.namespace ?? '';
      for (const volume of spec.volumes ?? []) {
        const claim = volume.persistentVolumeClaim?.claimName;
        const pvc = claim ? api.get(PVCS, claim, namespace) : undefined;
        if (pvc && !isBound(pvc) && !isBound(bindClaim(api, dataDir, pvc, node, snapshots))) {
          // the volume could not be provisioned (storage.ts says why on the claim): the Pod waits, unscheduled
          // (kubernetes pkg/scheduler/framework/plugins/volumebinding/binder.go, checkBindings)
          setPodStatus(api, pod, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulerError', message: `running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "${claim}"` }] });
          return undefined;
        }
      }
      return node;
    },
    bind(pod, node) {
      const spec = (pod.spec ?? {}) as PodSpec;
      if (spec.nodeName) return pod;
      try {
        return api.mergePatch(PODS, pod.metadata.name ?? '', pod.metadata.namespace ?? '', { spec: { nodeName: node } });
      } catch {
        return { ...pod, spec: { ...spec, nodeName: node } };
      }
    },
  };
}
