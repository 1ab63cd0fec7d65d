// The aggregated ClusterRoles Charmed Kubeflow installs for profile owners and contributors:
// - kubeflow-roles.yaml beside this file, canonical/kubeflow-roles-operator src/manifests/kubeflow-roles.yaml as the
//   kubeflow-roles charm applies it: kubeflow-admin aggregates the roles labelled aggregate-to-kubeflow-admin
//   (kubeflow-edit and kubeflow-kubernetes-admin are), kubeflow-edit those labelled aggregate-to-kubeflow-edit
//   (kubeflow-view, kubeflow-kubernetes-edit), kubeflow-view those labelled aggregate-to-kubeflow-view
//   (kubeflow-kubernetes-view); the aggregation controller (../rbac/aggregation.ts) fills in their rules;
// - kubeflow/pipelines manifests/kustomize/base/installs/multi-user/view-edit-cluster-roles.yaml (the kfp-api charm
//   applies the same): kubeflow-pipelines-edit, aggregated into kubeflow-edit, and kubeflow-pipelines-view, aggregated
//   into kubeflow-view, by name, labels and aggregationRule only (their own rules name Kubeflow Pipelines' kinds).
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../../src/kube/types.ts';

const label = (to: string) => `rbac.authorization.kubeflow.org/aggregate-to-${to}`;

function role(name: string, aggregatedInto: string, aggregates: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
    metadata: { name, labels: { [label(aggregatedInto)]: 'true' } },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label(aggregates)]: 'true' } }] },
    rules: [],
  };
}

export function kubeflowClusterRoles(): KubeObject[] {
  const text = readFileSync(new URL('./kubeflow-roles.yaml', import.meta.url), 'utf8');
  const fromCharm = parseAllDocuments(text).map((d) => d.toJS() as KubeObject | null).filter((o): o is KubeObject => o !== null);
  return [
    ...fromCharm,
    role('kubeflow-pipelines-edit', 'kubeflow-edit', 'kubeflow-pipelines-edit'),
    role('kubeflow-pipelines-view', 'kubeflow-view', 'kubeflow-pipelines-view'),
  ];
}
