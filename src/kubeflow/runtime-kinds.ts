// Kinds served in a namespace whose objects are never state, whoever made them: records of what happened, or the
// output of a controller that makes them again from an object that is backed up. Everything else a namespace holds
// is discovered and backed up (src/kubeflow/kinds.ts). Canonical's own Velero setup for Kubeflow leaves pods,
// replicasets and the Argo run kinds out of user-namespace backups for the same reason (canonical/kubeflow-profiles-
// operator src/constants.py, K8S_USER_WORKLOAD_EXCLUDE_RESOURCECS, the resources its user-workload Velero backup
// config excludes; canonical/bundle-kubeflow issue 1197).
import { groupOf } from './identity.ts';

export interface RuntimeKind {
  group: string;
  kind: string;
  /** why no backup keeps it */
  why: string;
}

export const runtimeKinds: readonly RuntimeKind[] = [
  // The kubelet and the workload controllers make Pods; a restored Pod would run beside the one its owner makes.
  { group: '', kind: 'Pod', why: 'Pods are made by the workload that owns them, which is backed up' },
  // A record of what happened on the source cluster; meaningless on another.
  { group: '', kind: 'Event', why: 'Events record what happened on the source cluster' },
  { group: 'events.k8s.io', kind: 'Event', why: 'Events record what happened on the source cluster' },
  // The endpoints and endpointslice controllers derive them from Services and the Pods that back them.
  { group: '', kind: 'Endpoints', why: 'Endpoints are derived from Services and their Pods by the endpoints controller' },
  { group: 'discovery.k8s.io', kind: 'EndpointSlice', why: 'EndpointSlices are derived from Services and their Pods by the endpointslice controller' },
  // The Deployment controller makes one per pod template; restoring them would fight it.
  { group: 'apps', kind: 'ReplicaSet', why: 'ReplicaSets are made by their Deployment' },
  // The StatefulSet and DaemonSet controllers record their history with them.
  { group: 'apps', kind: 'ControllerRevision', why: 'ControllerRevisions are the history the StatefulSet and DaemonSet controllers keep' },
  // Leader election and heartbeats: a restored Lease names a holder that does not exist on the target.
  { group: 'coordination.k8s.io', kind: 'Lease', why: 'Leases hold the leader election of running processes' },
  // Published by the CSI external-provisioner for the nodes of the source cluster.
  { group: 'storage.k8s.io', kind: 'CSIStorageCapacity', why: 'CSIStorageCapacity objects are published by the CSI driver for its nodes' },
  // Katib makes them from the Experiment (katib pkg/controller.v1beta1/experiment), which is backed up with its status.
  { group: 'kubeflow.org', kind: 'Suggestion', why: 'Suggestions are made by Katib from their Experiment' },
  { group: 'kubeflow.org', kind: 'Trial', why: 'Trials are made by Katib from their Experiment' },
  // KFP's run machinery: a run lives in KFP's database and MinIO; the Workflow that executed it is output.
  // And one restored would run again: the workflow controller operates on every Workflow not labelled
  // workflows.argoproj.io/completed=true (argo-workflows workflow/controller/controller.go tweakWorkflowlist) and starts
  // from the beginning one whose status.phase is empty (operator.go operate), as a restore without status leaves it.
  { group: 'argoproj.io', kind: 'Workflow', why: 'Argo Workflows are the execution of KFP runs, which live in KFP\'s database; restored, the workflow controller would run them again' },
  { group: 'argoproj.io', kind: 'WorkflowTaskResult', why: 'WorkflowTaskResults are written by a running Workflow\'s pods' },
  { group: 'argoproj.io', kind: 'WorkflowTaskSet', why: 'WorkflowTaskSets are written by the Argo controller for a running Workflow' },
  { group: 'argoproj.io', kind: 'WorkflowArtifactGCTask', why: 'WorkflowArtifactGCTasks are made by the Argo controller for a finished Workflow' },
];

const byGroupKind = new Map(runtimeKinds.map((k) => [`${k.group}/${k.kind}`, k]));

export function runtimeKindOf(group: string, kind: string): RuntimeKind | undefined {
  return byGroupKind.get(`${group}/${kind}`);
}

export function runtimeKindOfObject(object: { apiVersion: string; kind: string }): RuntimeKind | undefined {
  return runtimeKindOf(groupOf(object.apiVersion), object.kind);
}
