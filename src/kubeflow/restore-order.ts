// The restore order as data, like Velero's restore priorities: Profiles first (phase 1, then wait for each
// namespace), then namespaced objects by priority (phase 2): identities and credentials before what uses them,
// storage before workloads, RBAC and policies before the workloads users reach through them.
export interface RestoreStep {
  phase: 1 | 2;
  group: string;
  resource: string;
  kind: string;
}

const step = (phase: 1 | 2, group: string, resource: string, kind: string): RestoreStep => ({ phase, group, resource, kind });

export const restoreOrder: readonly RestoreStep[] = [
  step(1, 'kubeflow.org', 'profiles', 'Profile'),
  step(2, '', 'serviceaccounts', 'ServiceAccount'),
  step(2, '', 'secrets', 'Secret'),
  step(2, '', 'configmaps', 'ConfigMap'),
  step(2, '', 'persistentvolumeclaims', 'PersistentVolumeClaim'),
  step(2, 'rbac.authorization.k8s.io', 'roles', 'Role'),
  step(2, 'rbac.authorization.k8s.io', 'rolebindings', 'RoleBinding'),
  step(2, 'security.istio.io', 'authorizationpolicies', 'AuthorizationPolicy'),
  step(2, 'kubeflow.org', 'poddefaults', 'PodDefault'),
  step(2, 'serving.kserve.io', 'servingruntimes', 'ServingRuntime'),
  step(2, 'kubeflow.org', 'notebooks', 'Notebook'),
  step(2, 'tensorboard.kubeflow.org', 'tensorboards', 'Tensorboard'),
  step(2, 'kubeflow.org', 'pvcviewers', 'PVCViewer'),
  step(2, 'serving.kserve.io', 'inferenceservices', 'InferenceService'),
  step(2, 'serving.kserve.io', 'inferencegraphs', 'InferenceGraph'),
  step(2, 'kubeflow.org', 'experiments', 'Experiment'),
  step(2, 'kubeflow.org', 'pytorchjobs', 'PyTorchJob'),
  step(2, 'kubeflow.org', 'tfjobs', 'TFJob'),
  step(2, 'kubeflow.org', 'mpijobs', 'MPIJob'),
  step(2, 'kubeflow.org', 'xgboostjobs', 'XGBoostJob'),
  step(2, 'kubeflow.org', 'paddlejobs', 'PaddleJob'),
  step(2, 'kubeflow.org', 'jaxjobs', 'JAXJob'),
];

const rank = new Map(restoreOrder.map((s, index) => [`${s.resource}.${s.group}`, index]));

/** position in the restore order; resources not listed come after every listed one */
export function restorePriority(group: string, resource: string): number {
  return rank.get(`${resource}.${group}`) ?? restoreOrder.length;
}

/** orders resources for restore: by priority, then (for unlisted ones) alphabetically as Velero does */
export function compareForRestore(a: { group: string; resource: string }, b: { group: string; resource: string }): number {
  const byPriority = restorePriority(a.group, a.resource) - restorePriority(b.group, b.resource);
  if (byPriority !== 0) return byPriority;
  return `${a.resource}.${a.group}`.localeCompare(`${b.resource}.${b.group}`);
}
