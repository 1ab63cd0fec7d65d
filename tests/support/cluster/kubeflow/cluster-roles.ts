// The aggregated ClusterRoles Charmed Kubeflow installs for profile owners and contributors, by name, labels and
// aggregationRule only (the rules an aggregation controller would fill in do not matter here):
// - kubeflow/manifests common/kubeflow-roles: kubeflow-admin aggregates the roles labelled aggregate-to-kubeflow-admin
//   (kubeflow-edit is), kubeflow-edit those labelled aggregate-to-kubeflow-edit (kubeflow-view is), kubeflow-view those
//   labelled aggregate-to-kubeflow-view;
// - kubeflow/pipelines manifests/kustomize/base/installs/multi-user/view-edit-cluster-roles.yaml (the kfp-api charm
//   applies the same): kubeflow-pipelines-edit, aggregated into kubeflow-edit, and kubeflow-pipelines-view, aggregated
//   into kubeflow-view.
import type { KubeObject } from '../../../../src/kube/types.ts';

const label = (to: string) => `rbac.authorization.kubeflow.org/aggregate-to-${to}`;

function role(name: string, aggregatedInto: string | undefined, aggregates: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
    metadata: { name, labels: aggregatedInto ? { [label(aggregatedInto)]: 'true' } : {} },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label(aggregates)]: 'true' } }] },
    rules: [],
  };
}

export function kubeflowClusterRoles(): KubeObject[] {
  return [
    role('kubeflow-admin', undefined, 'kubeflow-admin'),
    role('kubeflow-edit', 'kubeflow-admin', 'kubeflow-edit'),
    role('kubeflow-view', 'kubeflow-edit', 'kubeflow-view'),
    role('kubeflow-pipelines-edit', 'kubeflow-edit', 'kubeflow-pipelines-edit'),
    role('kubeflow-pipelines-view', 'kubeflow-view', 'kubeflow-pipelines-view'),
  ];
}
