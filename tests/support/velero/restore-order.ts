// The order in which Velero's restore walks the resource folders of an archive, from vmware-tanzu/velero:
// pkg/restore/restore.go (getOrderedResources: the high priorities in their order, then every other resource folder
// of the archive alphabetically, then the low priorities) and pkg/cmd/server/config/config.go (the default
// priorities of a Velero server). Velero makes a namespace itself before the first item that needs it, from the
// archive's Namespace item when there is one (pkg/restore/restore.go, getNamespace).

const HIGH_PRIORITIES: readonly string[] = [
  'customresourcedefinitions', 'namespaces', 'storageclasses', 'volumesnapshotclass.snapshot.storage.k8s.io',
  'volumesnapshotcontents.snapshot.storage.k8s.io', 'volumesnapshots.snapshot.storage.k8s.io', 'datauploads.velero.io',
  'persistentvolumes', 'persistentvolumeclaims', 'clusterroles', 'roles', 'serviceaccounts', 'clusterrolebindings',
  'rolebindings', 'secrets', 'configmaps', 'limitranges', 'priorityclasses', 'pods', 'replicasets.apps',
  'clusterclasses.cluster.x-k8s.io', 'endpoints', 'services',
];
const LOW_PRIORITIES: readonly string[] = [
  'clusterbootstraps.run.tanzu.vmware.com', 'clusters.cluster.x-k8s.io', 'clusterresourcesets.addons.cluster.x-k8s.io',
  'apps.kappctrl.k14s.io', 'packageinstalls.packaging.carvel.dev',
];

/**
 * A priority as Velero resolves it against discovery: `roles` names roles.rbac.authorization.k8s.io. Modelled for
 * archives whose folders name each resource once: the folder itself, or the one folder of that resource in a group.
 */
function folderFor(priority: string, folders: readonly string[]): string | undefined {
  if (folders.includes(priority)) return priority;
  const grouped = folders.filter((f) => f.split('.')[0] === priority && f.includes('.'));
  return !priority.includes('.') && grouped.length === 1 ? grouped[0] : undefined;
}

/** The archive's resource folders (`<resource>[.<group>]`) in the order a default Velero server restores them. */
export function veleroRestoreOrder(folders: readonly string[]): string[] {
  const resolve = (priorities: readonly string[]) => priorities.map((p) => folderFor(p, folders)).filter((f): f is string => f !== undefined);
  const high = resolve(HIGH_PRIORITIES);
  const low = resolve(LOW_PRIORITIES);
  const middle = folders.filter((f) => !high.includes(f) && !low.includes(f)).sort();
  return [...high, ...middle, ...low];
}
