// The one table of the kinds the product knows by name, in restore order. Everything else about them is derived
// from it: the restore order and its phases (restore-order.ts), the kinds whose status a restore writes back
// (status-kinds.ts), what is restored before the volume fill (the restore engine's barrier), what snapshot-profiles
// keeps (the backup engine), and the one cluster-scoped state kind (kinds.ts). Which kinds are state at all is
// discovered from the API server (kinds.ts); a kind not named here is restored after every named one, in a stable
// order, as Velero does.

export interface KnownKind {
  /** 1: Profiles, then the wait for their namespaces; 2: the objects of each namespace */
  phase: 1 | 2;
  group: string;
  resource: string;
  kind: string;
  /**
   * restored before PVC data is filled: what a Pod that mounts a PVC needs to exist before anything mounts it
   * (its identity, credentials, config, limits) and the PVCs themselves
   */
  beforeVolumeFill?: true;
  /**
   * the status a controller decides from; a restore writes it back after the object (status-kinds.ts says how, and
   * adds the training operator's job kinds by their shape)
   */
  status?: { why: string; suspendUntilStatus?: true };
  /** part of a KFAM contributor or a Profile: what snapshot-profiles keeps */
  snapshot?: true;
}

// Training jobs are named for their place in the order only; which kinds get their status back is derived from the
// training operator's API shape (status-kinds.ts), so a kind not named here (MXJob) is covered too.
const trainingJob = (resource: string, kind: string): KnownKind => ({ phase: 2, group: 'kubeflow.org', resource, kind });

export const knownKinds: readonly KnownKind[] = [
  { phase: 1, group: 'kubeflow.org', resource: 'profiles', kind: 'Profile', snapshot: true },
  { phase: 2, group: '', resource: 'serviceaccounts', kind: 'ServiceAccount', beforeVolumeFill: true },
  { phase: 2, group: '', resource: 'secrets', kind: 'Secret', beforeVolumeFill: true },
  { phase: 2, group: '', resource: 'configmaps', kind: 'ConfigMap', beforeVolumeFill: true },
  // defaults and limits the API server applies only when a Pod or PVC is created (as Velero orders limitranges)
  { phase: 2, group: '', resource: 'limitranges', kind: 'LimitRange', beforeVolumeFill: true },
  { phase: 2, group: '', resource: 'resourcequotas', kind: 'ResourceQuota', beforeVolumeFill: true },
  { phase: 2, group: '', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', beforeVolumeFill: true },
  { phase: 2, group: 'rbac.authorization.k8s.io', resource: 'roles', kind: 'Role' },
  { phase: 2, group: 'rbac.authorization.k8s.io', resource: 'rolebindings', kind: 'RoleBinding', snapshot: true },
  { phase: 2, group: 'security.istio.io', resource: 'authorizationpolicies', kind: 'AuthorizationPolicy', snapshot: true },
  { phase: 2, group: 'networking.k8s.io', resource: 'networkpolicies', kind: 'NetworkPolicy' },
  // PodDefaults change only Pods created after them: every kind after this one is a workload that waits for them
  { phase: 2, group: 'kubeflow.org', resource: 'poddefaults', kind: 'PodDefault' },
  { phase: 2, group: 'serving.kserve.io', resource: 'servingruntimes', kind: 'ServingRuntime' },
  { phase: 2, group: 'kubeflow.org', resource: 'notebooks', kind: 'Notebook' },
  { phase: 2, group: 'tensorboard.kubeflow.org', resource: 'tensorboards', kind: 'Tensorboard' },
  { phase: 2, group: 'kubeflow.org', resource: 'pvcviewers', kind: 'PVCViewer' },
  { phase: 2, group: 'serving.kserve.io', resource: 'inferenceservices', kind: 'InferenceService' },
  { phase: 2, group: 'serving.kserve.io', resource: 'inferencegraphs', kind: 'InferenceGraph' },
  {
    phase: 2, group: 'kubeflow.org', resource: 'experiments', kind: 'Experiment',
    status: { why: 'katib v0.18.0 pkg/controller.v1beta1/experiment/experiment_controller.go Reconcile: an Experiment whose status has Succeeded or Failed is complete and gets no new Trials' },
  },
  trainingJob('pytorchjobs', 'PyTorchJob'),
  trainingJob('tfjobs', 'TFJob'),
  trainingJob('mpijobs', 'MPIJob'),
  trainingJob('xgboostjobs', 'XGBoostJob'),
  trainingJob('paddlejobs', 'PaddleJob'),
  // served and reconciled by training-operator 1.7 and 1.8 (Charmed Kubeflow 1.8 and 1.9), pkg/controller.v1/mxnet
  trainingJob('mxjobs', 'MXJob'),
  // not named by the issue, but reconciled by the same common/job.go in training-operator v1.9.0 (pkg/controller.v1/jax)
  trainingJob('jaxjobs', 'JAXJob'),
];

/** `<resource>.<group>` (core: `<resource>.`), the key the tables below use */
const keyOf = (group: string, resource: string) => `${resource}.${group}`;
const byResource = new Map(knownKinds.map((k) => [keyOf(k.group, k.resource), k]));

/** the table's entry for a served resource, or undefined for a kind the product does not name */
export function knownKind(group: string, resource: string): KnownKind | undefined {
  return byResource.get(keyOf(group, resource));
}

/**
 * `<resource>.<group>`, or the bare resource for the core group: how Kubernetes spells a GroupResource
 * (kubernetes/apimachinery pkg/runtime/schema/group_version.go, GroupResource.String), which Velero's folders follow.
 */
export function spelledResource(kind: Pick<KnownKind, 'group' | 'resource'>): string {
  return kind.group === '' ? kind.resource : `${kind.resource}.${kind.group}`;
}
