// What the server serves: built-in kinds and CRD-defined kinds, and the discovery documents describing them.
import type { NameRule } from './names.ts';

export interface ServedVersion {
  name: string;
  served: boolean;
  storage: boolean;
}

export interface ResourceDef {
  group: string;
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  versions: ServedVersion[];
  statusSubresource: boolean;
  nameRule: NameRule;
  /** built-in kinds drop apiVersion/kind from list items, as typed lists do on a real server */
  builtin: boolean;
  /** the verbs discovery lists and the server accepts on the resource itself (not its subresources) */
  verbs: string[];
  /** a CRD's printer columns, used for Table output */
  printerColumns?: { name: string; type: string; jsonPath: string; description?: string; priority?: number }[];
}

export const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function storageVersion(def: ResourceDef): string {
  const v = def.versions.find((x) => x.storage);
  if (!v) throw new Error(`resource ${def.resource}.${def.group} has no storage version`);
  return v.name;
}

export function servedVersions(def: ResourceDef): string[] {
  return def.versions.filter((v) => v.served).map((v) => v.name);
}

function builtin(
  group: string,
  version: string,
  kind: string,
  resource: string,
  opts: { namespaced?: boolean; short?: string[]; status?: boolean; nameRule?: NameRule; categories?: string[]; verbs?: string[] } = {},
): ResourceDef {
  return {
    group,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: opts.namespaced ?? true,
    shortNames: opts.short ?? [],
    categories: opts.categories ?? [],
    versions: [{ name: version, served: true, storage: true }],
    statusSubresource: opts.status ?? false,
    nameRule: opts.nameRule ?? 'subdomain',
    builtin: true,
    verbs: opts.verbs ?? VERBS,
  };
}

const ALL = ['all'];
const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';
const NETWORKING = 'networking.k8s.io';

/**
 * Every built-in kind a Kubernetes 1.30 API server serves in the groups core/v1, apps/v1, batch/v1,
 * networking.k8s.io/v1, policy/v1, autoscaling/v2, rbac.authorization.k8s.io/v1, coordination.k8s.io/v1,
 * discovery.k8s.io/v1 and storage.k8s.io/v1, plus the CRD and admission-policy kinds the product uses, with the scope,
 * short names, categories, verbs and status subresource of kubernetes/kubernetes api/discovery/api__v1.json and
 * apis__<group>__<version>.json (the discovery documents the API server's own tests pin).
 *
 * Some of those files, regenerated at one commit, list no `watch` for apps, networking, policy, storage and
 * coordination kinds; every released server watches them (`kubectl get deploy -w`, and every controller's informer
 * depends on it), so the full verb list stands here. Where a verb is really missing, the server refuses it with 405.
 */
export function builtinResources(): ResourceDef[] {
  const WITHOUT_DELETECOLLECTION = VERBS.filter((v) => v !== 'deletecollection');
  return [
    // core/v1
    builtin('', 'v1', 'Binding', 'bindings', { verbs: ['create'] }),
    builtin('', 'v1', 'ComponentStatus', 'componentstatuses', { namespaced: false, short: ['cs'], verbs: ['get', 'list'] }),
    builtin('', 'v1', 'ConfigMap', 'configmaps', { short: ['cm'] }),
    builtin('', 'v1', 'Endpoints', 'endpoints', { short: ['ep'] }),
    builtin('', 'v1', 'Event', 'events', { short: ['ev'] }),
    builtin('', 'v1', 'LimitRange', 'limitranges', { short: ['limits'] }),
    builtin('', 'v1', 'Namespace', 'namespaces', { namespaced: false, short: ['ns'], status: true, nameRule: 'label', verbs: WITHOUT_DELETECOLLECTION }),
    builtin('', 'v1', 'Node', 'nodes', { namespaced: false, short: ['no'], status: true }),
    builtin('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', { short: ['pvc'], status: true }),
    builtin('', 'v1', 'PersistentVolume', 'persistentvolumes', { namespaced: false, short: ['pv'], status: true }),
    builtin('', 'v1', 'Pod', 'pods', { short: ['po'], status: true, categories: ALL }),
    builtin('', 'v1', 'PodTemplate', 'podtemplates'),
    builtin('', 'v1', 'ReplicationController', 'replicationcontrollers', { short: ['rc'], status: true, categories: ALL }),
    builtin('', 'v1', 'ResourceQuota', 'resourcequotas', { short: ['quota'], status: true }),
    builtin('', 'v1', 'Secret', 'secrets'),
    builtin('', 'v1', 'ServiceAccount', 'serviceaccounts', { short: ['sa'] }),
    builtin('', 'v1', 'Service', 'services', { short: ['svc'], status: true, nameRule: 'dns1035', categories: ALL }),
    // apps/v1
    builtin('apps', 'v1', 'ControllerRevision', 'controllerrevisions'),
    builtin('apps', 'v1', 'DaemonSet', 'daemonsets', { short: ['ds'], status: true, categories: ALL }),
    builtin('apps', 'v1', 'Deployment', 'deployments', { short: ['deploy'], status: true, categories: ALL }),
    builtin('apps', 'v1', 'ReplicaSet', 'replicasets', { short: ['rs'], status: true, categories: ALL }),
    builtin('apps', 'v1', 'StatefulSet', 'statefulsets', { short: ['sts'], status: true, categories: ALL }),
    // batch/v1
    builtin('batch', 'v1', 'CronJob', 'cronjobs', { short: ['cj'], status: true, categories: ALL }),
    builtin('batch', 'v1', 'Job', 'jobs', { status: true, categories: ALL }),
    // networking.k8s.io/v1
    builtin(NETWORKING, 'v1', 'IngressClass', 'ingressclasses', { namespaced: false }),
    builtin(NETWORKING, 'v1', 'Ingress', 'ingresses', { short: ['ing'], status: true }),
    builtin(NETWORKING, 'v1', 'NetworkPolicy', 'networkpolicies', { short: ['netpol'] }),
    // policy/v1
    builtin('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', { short: ['pdb'], status: true }),
    // autoscaling/v2
    builtin('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', { short: ['hpa'], status: true, categories: ['all', 'podautoscalers'] }),
    // rbac.authorization.k8s.io/v1
    builtin(RBAC, 'v1', 'Role', 'roles', { nameRule: 'path-segment' }),
    builtin(RBAC, 'v1', 'RoleBinding', 'rolebindings', { nameRule: 'path-segment' }),
    builtin(RBAC, 'v1', 'ClusterRole', 'clusterroles', { namespaced: false, nameRule: 'path-segment' }),
    builtin(RBAC, 'v1', 'ClusterRoleBinding', 'clusterrolebindings', { namespaced: false, nameRule: 'path-segment' }),
    // coordination.k8s.io/v1, discovery.k8s.io/v1
    builtin('coordination.k8s.io', 'v1', 'Lease', 'leases'),
    builtin('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices'),
    // storage.k8s.io/v1
    builtin('storage.k8s.io', 'v1', 'CSIDriver', 'csidrivers', { namespaced: false }),
    builtin('storage.k8s.io', 'v1', 'CSINode', 'csinodes', { namespaced: false }),
    builtin('storage.k8s.io', 'v1', 'CSIStorageCapacity', 'csistoragecapacities'),
    builtin('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', { namespaced: false, short: ['sc'] }),
    builtin('storage.k8s.io', 'v1', 'VolumeAttachment', 'volumeattachments', { namespaced: false, status: true }),
    // what the product itself needs beyond those groups
    builtin('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', {
      namespaced: false,
      short: ['crd', 'crds'],
      status: true,
    }),
    builtin(ADMISSION, 'v1', 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', {
      namespaced: false,
      status: true,
    }),
    builtin(ADMISSION, 'v1', 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', {
      namespaced: false,
    }),
    // the configurations of admission webhooks (webhooks.ts calls the simulated servers they name)
    builtin(ADMISSION, 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', { namespaced: false }),
    builtin(ADMISSION, 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', { namespaced: false }),
  ];
}

/**
 * Orders versions the way Kubernetes prefers them (kubernetes/apimachinery pkg/version/helpers.go,
 * CompareKubeAwareVersionStrings): kube-like versions (`v<major>[alpha|beta<minor>]`) before all others; GA before beta
 * before alpha; then the higher major, then the higher minor. Versions that are not kube-like follow in plain byte
 * order (strings.Compare, not the locale's collation). Negative when `a` is preferred over `b`. The discovery
 * controller of apiextensions-apiserver (pkg/apiserver/customresource_discovery_controller.go) sorts a group's served
 * versions this way and names the first one the group's preferred version, whatever order the CRDs list them in.
 */
export function compareKubeVersions(a: string, b: string): number {
  if (a === b) return 0;
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return { stage, major: Number(m[1]), minor: Number(m[3] ?? 0) };
  };
  const x = parse(a);
  const y = parse(b);
  if (!x && !y) return a < b ? -1 : 1;
  if (!x) return 1;
  if (!y) return -1;
  if (x.stage !== y.stage) return y.stage - x.stage;
  if (x.major !== y.major) return y.major - x.major;
  return y.minor - x.minor;
}

export const SERVER_VERSION = {
  major: '1',
  minor: '31',
  gitVersion: 'v1.31.0',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-08-13T00:00:00Z',
  goVersion: 'go1.22.5',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/** Every group's versions in preference order; the core group is ''. */
export function groupVersions(defs: Iterable<ResourceDef>): Map<string, string[]> {
  const groups = new Map<string, Set<string>>();
  for (const d of defs) {
    const set = groups.get(d.group) ?? new Set<string>();
    for (const v of servedVersions(d)) set.add(v);
    groups.set(d.group, set);
  }
  const out = new Map<string, string[]>();
  for (const [g, set] of groups) if (set.size > 0) out.set(g, [...set].sort(compareKubeVersions));
  return out;
}

function discoveryEntry(d: ResourceDef, version: string) {
  const verbs = d.verbs;
  const entry: Record<string, unknown> = {
    name: d.resource,
    singularName: d.singular,
    namespaced: d.namespaced,
    kind: d.kind,
    verbs,
  };
  if (d.shortNames.length) entry.shortNames = d.shortNames;
  if (d.categories.length) entry.categories = d.categories;
  entry.storageVersionHash = Buffer.from(`${d.group}/${version}/${d.kind}`).toString('base64').slice(0, 11);
  return entry;
}

export function apiResourceList(defs: ResourceDef[], group: string, version: string): unknown {
  const resources: unknown[] = [];
  for (const d of defs) {
    if (d.group !== group || !servedVersions(d).includes(version)) continue;
    resources.push(discoveryEntry(d, version));
    if (d.statusSubresource)
      resources.push({ name: `${d.resource}/status`, singularName: '', namespaced: d.namespaced, kind: d.kind, verbs: ['get', 'patch', 'update'] });
    if (d.group === '' && d.resource === 'namespaces')
      resources.push({ name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['update'] });
  }
  resources.sort((a, b) => String((a as { name: string }).name).localeCompare(String((b as { name: string }).name)));
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources,
  };
}

export function apiGroup(group: string, versions: string[]): unknown {
  const gv = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: gv, preferredVersion: gv[0] };
}

export function apiGroupList(defs: ResourceDef[]): unknown {
  const groups = groupVersions(defs);
  const names = [...groups.keys()].filter((g) => g !== '');
  // built-in groups first in their usual order, then custom groups by name, as the real server lists them
  const order = ['apps', 'batch', 'autoscaling', NETWORKING, 'policy', RBAC, 'storage.k8s.io', ADMISSION, 'apiextensions.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io'];
  names.sort((a, b) => {
    const ia = order.indexOf(a);
    const ib = order.indexOf(b);
    if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    return a.localeCompare(b);
  });
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: names.map((g) => ({ ...(apiGroup(g, groups.get(g) ?? []) as object) })) };
}

export function apiVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}
