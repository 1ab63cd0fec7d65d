// Cluster-scoped objects a Velero backup of namespaces carries beside them, which a restore leaves to the target:
// vmware-tanzu/velero pkg/backup/backup.go (backupCRD) adds the CustomResourceDefinition of every custom resource it
// backs up, and pkg/backup/actions/backup_pv_action.go adds the PersistentVolume bound to every PVC. Neither is user
// state: the charms install the CRDs (and a restore into a cluster without one is refused by the preflight, naming the
// kind), and the cluster's provisioner makes a new volume for each restored PVC, whose binding the restore clears
// (src/restore/normalize.ts). So they are skipped with their reason, never a reason to refuse the archive; everything
// else cluster-scoped but Profiles stays refused by the allow-list (allow-list.ts).
import type { KubeObject } from '../kube/types.ts';
import { describeObject, groupOf } from './identity.ts';

export function clusterSuppliedReason(object: KubeObject): string | undefined {
  if (object.metadata.namespace) return undefined;
  const group = groupOf(object.apiVersion);
  if (group === 'apiextensions.k8s.io' && object.kind === 'CustomResourceDefinition') {
    return `installed by the charms: ${describeObject(object)} comes with the charm that serves it, and a restore never writes a CRD`;
  }
  if (group === '' && object.kind === 'PersistentVolume') {
    return `made by the cluster: ${describeObject(object)} is provisioned anew for the restored PVC that claims it`;
  }
  return undefined;
}
