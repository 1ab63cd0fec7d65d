// How a restore writes an object where a plain create, or a comparison with the live object, is not enough: per kind,
// which of the writer's behaviours apply, each row naming the upstream code it follows. The writer
// (src/restore/writer.ts) asks this table for every object and runs the behaviours it names
// (src/restore/kind-writes.ts); it holds no kind of its own. A new kind that needs an existing behaviour is one row
// here. What a restore changes in the object itself, whatever the write, is the other table (restore-changes.ts).
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';
import { prefersDualStack } from './ip-families.ts';
import { isControllerServiceAccount } from './service-accounts.ts';
import { restoresStatus, suspendsUntilStatus } from './status-kinds.ts';
import { isPvc } from './storage-classes.ts';

/**
 * What the writer can do beyond create-or-compare. Behaviours that depend on the archived status
 * (write-status, suspend-until-status, pin-finished) run only for objects the backup holds a status for.
 */
export type WriteBehaviour =
  /** merged into the object a controller makes, never created over it or replaced (controller-objects.ts) */
  | 'merge-into-controller-object'
  /** storage-class-map applied before the write */
  | 'map-storage-class'
  /** created with the fill mark when the movers fill it from the backup (volume-fill.ts) */
  | 'mark-for-fill'
  /** narrowed to its primary IP family on a target that is not dual-stack (src/restore/ip-families.ts) */
  | 'adapt-ip-families'
  /** its archived status written after the create; a rerun finishes a create that stopped before it */
  | 'write-status'
  /** created suspended and resumed once its status is written */
  | 'suspend-until-status'
  /** a finished Experiment without maxTrialCount created with one, so that Katib keeps it finished */
  | 'pin-finished'
  /** never updated into a binding of another role: the live one is kept and the object fails with one sentence */
  | 'keep-other-role';

export interface WriteRow {
  /** the kinds the row covers, as the results and the docs name them */
  kinds: string;
  matches: (object: KubeObject) => boolean;
  behaviours: readonly WriteBehaviour[];
  /** the upstream code the behaviour follows */
  source: string;
}

const isKind = (group: string, kind: string) => (object: KubeObject) => object.kind === kind && groupOf(object.apiVersion) === group;

export const writeRows: readonly WriteRow[] = [
  {
    kinds: 'ServiceAccount default, default-editor, default-viewer',
    matches: isControllerServiceAccount,
    behaviours: ['merge-into-controller-object'],
    source: 'vmware-tanzu/velero pkg/restore/merge_service_account.go; kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go; kubeflow/kubeflow components/profile-controller/controllers/profile_controller.go (updateServiceAccount)',
  },
  {
    kinds: 'PersistentVolumeClaim',
    matches: isPvc,
    behaviours: ['map-storage-class', 'mark-for-fill'],
    source: 'vmware-tanzu/velero pkg/restore/actions/change_storageclass_action.go (the map); vmware-tanzu/velero pkg/restore/actions/pvc_action.go (a claim a pod volume backup fills)',
  },
  {
    kinds: 'Service preferring dual-stack over two families',
    matches: prefersDualStack,
    behaviours: ['adapt-ip-families'],
    source: 'kubernetes pkg/registry/core/service/storage/alloc.go (initIPFamilyFields); vmware-tanzu/velero pkg/restore/actions/service_action.go',
  },
  {
    kinds: 'kinds whose status a controller decides from (Katib Experiment, training-operator jobs)',
    matches: restoresStatus,
    behaviours: ['write-status'],
    source: 'katib pkg/controller.v1beta1/experiment/experiment_controller.go (Reconcile); training-operator pkg/controller.v1/common/job.go (ReconcileJobs); vmware-tanzu/velero --status-include-resources',
  },
  {
    kinds: 'training-operator jobs (kubeflow.org/v1 <Framework>Job)',
    matches: suspendsUntilStatus,
    behaviours: ['suspend-until-status'],
    source: 'training-operator v1.9.0 pkg/controller.v1/common/job.go (IsJobSuspended: a suspended job gets no pods)',
  },
  {
    kinds: 'Experiment (kubeflow.org)',
    matches: isKind('kubeflow.org', 'Experiment'),
    behaviours: ['pin-finished'],
    source: 'katib v0.17/v0.18 pkg/controller.v1beta1/experiment/experiment_controller.go (a finished Experiment without maxTrialCount is restarted); pkg/webhook/v1beta1/experiment/validator/validator.go',
  },
  {
    kinds: 'RoleBinding, ClusterRoleBinding',
    matches: (object) => groupOf(object.apiVersion) === 'rbac.authorization.k8s.io' && (object.kind === 'RoleBinding' || object.kind === 'ClusterRoleBinding'),
    behaviours: ['keep-other-role'],
    source: 'kubernetes pkg/apis/rbac/validation/validation.go (ValidateRoleBindingUpdate: cannot change roleRef); vmware-tanzu/velero pkg/restore/restore.go (processUpdateResourcePolicy)',
  },
];

/** the behaviours of every row that matches `object` */
export function writeBehavioursOf(object: KubeObject): ReadonlySet<WriteBehaviour> {
  const found = new Set<WriteBehaviour>();
  for (const row of writeRows) if (row.matches(object)) for (const b of row.behaviours) found.add(b);
  return found;
}
