// What a restore changes in an archived object before writing it, per kind: the fields that only meant something in
// the source cluster, or that the target's API server or controllers must choose themselves. Velero's
// RestoreItemActions are the model (vmware-tanzu/velero pkg/restore/actions); each row names the file it follows.
// Every kind first loses what the server owns (strip.ts: uid, resourceVersion, managedFields, …, status and
// controller ownerReferences); a row's change then runs on that copy, reading the archived object where the decision
// needs what was stripped (managedFields).
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';
import { pvcBindingAnnotations } from './pvc-binding.ts';

export interface RestoreChange {
  group: string;
  /** the kind, or '*' for every kind */
  kind: string;
  /** what is cleared or rewritten, in a sentence */
  changes: string;
  /** the upstream file the change follows */
  source: string;
  /**
   * The change, on `view` (a copy whose metadata and the parts it rewrites are its own; shared body fields must be
   * copied before they are changed). `archived` is the object as the backup holds it. Absent where the kind is never
   * written, and the row records why.
   */
  apply?: (view: KubeObject, archived: KubeObject) => void;
  /**
   * For an update of a live object: what the replacement takes back from it, where the row cleared a field the target
   * has since set and its API server refuses to see change (a Job's generated selector, a PVC's volume). Returns a new
   * object; `wanted` and `live` are left as they are.
   */
  keepOnUpdate?: (wanted: KubeObject, live: KubeObject) => KubeObject;
}

const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';
export const serviceAccountTokenType = 'kubernetes.io/service-account-token';
const serviceAccountUidAnnotation = 'kubernetes.io/service-account.uid';
const controllerUidLabels = ['batch.kubernetes.io/controller-uid', 'controller-uid'];

interface ServicePort { name?: string; port?: number; protocol?: string; nodePort?: number }
interface ServiceSpec { type?: string; clusterIP?: string; clusterIPs?: string[]; ports?: ServicePort[]; healthCheckNodePort?: number; externalTrafficPolicy?: string }

function dropEmptyAnnotations(view: KubeObject): void {
  if (view.metadata.annotations && Object.keys(view.metadata.annotations).length === 0) delete view.metadata.annotations;
}

/** the last-applied-configuration annotation's spec, when kubectl apply left one */
function lastAppliedSpec(archived: KubeObject): Record<string, unknown> | undefined {
  const text = archived.metadata.annotations?.[lastAppliedAnnotation];
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { spec?: Record<string, unknown> };
    return parsed.spec ?? {};
  } catch {
    return {};
  }
}

/** whether any field manager set `f:spec` → … (server-side apply or a create with a field manager) */
function managedFieldsSet(archived: KubeObject, path: (fields: Record<string, unknown>) => boolean): boolean {
  const entries = (archived.metadata as { managedFields?: Array<{ fieldsV1?: Record<string, unknown> }> }).managedFields ?? [];
  return entries.some((entry) => entry.fieldsV1 !== undefined && path(entry.fieldsV1));
}

/**
 * The node ports the user chose, which a restore keeps (Velero's deleteNodePorts): with a last-applied-configuration
 * annotation, the ports it gives a nodePort (named ports by name, unnamed ones by number); otherwise the ports whose
 * `f:nodePort` a field manager owns. Every other nodePort was allocated by the source cluster.
 */
function explicitNodePorts(archived: KubeObject, ports: readonly ServicePort[]): boolean[] {
  const applied = lastAppliedSpec(archived);
  if (applied) {
    const names = new Set<string>();
    const numbers = new Set<number>();
    for (const p of (applied.ports as ServicePort[] | undefined) ?? []) {
      const nodePort = Number(p?.nodePort ?? 0);
      if (!(nodePort > 0)) continue;
      if (p.name !== undefined) names.add(p.name);
      else numbers.add(nodePort);
    }
    return ports.map((p) => (p.name ? names.has(p.name) : numbers.has(p.nodePort ?? 0)));
  }
  const owned = new Set<string>();
  managedFieldsSet(archived, (fields) => {
    const specFields = fields['f:spec'] as Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries((specFields?.['f:ports'] as Record<string, unknown> | undefined) ?? {}))
      if (value && typeof value === 'object' && 'f:nodePort' in value) owned.add(key);
    return false;
  });
  return ports.map((p) => owned.has(`k:{"port":${p.port},"protocol":"${p.protocol ?? 'TCP'}"}`));
}

/** Velero's deleteHealthCheckNodePort: kept only when kubectl apply or a field manager set it */
function explicitHealthCheckNodePort(archived: KubeObject): boolean {
  const applied = lastAppliedSpec(archived);
  if (applied && Number(applied.healthCheckNodePort ?? 0) !== 0) return true;
  return managedFieldsSet(archived, (fields) => {
    const specFields = fields['f:spec'] as Record<string, unknown> | undefined;
    return specFields !== undefined && 'f:healthCheckNodePort' in specFields;
  });
}

function restoreService(view: KubeObject, archived: KubeObject): void {
  if (!view.spec || typeof view.spec !== 'object') return;
  const spec = { ...(view.spec as ServiceSpec) };
  view.spec = spec;
  if (spec.clusterIP !== 'None') {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  if (spec.type === 'ExternalName' || !spec.ports) return;
  const keep = explicitNodePorts(archived, spec.ports);
  spec.ports = spec.ports.map((port, i) => {
    if (port.nodePort === undefined || keep[i]) return port;
    const { nodePort: _allocated, ...rest } = port;
    return rest;
  });
  if (spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local' && spec.healthCheckNodePort && !explicitHealthCheckNodePort(archived))
    delete spec.healthCheckNodePort;
}

interface JobSpec { manualSelector?: boolean; selector?: { matchLabels?: Record<string, string> }; template?: { metadata?: { labels?: Record<string, string> } } }

function restoreJob(view: KubeObject): void {
  const spec = view.spec as JobSpec | undefined;
  // a manual selector is the user's own: the server neither generates nor checks it against the Job's uid
  if (!spec || spec.manualSelector === true) return;
  const copy: JobSpec = { ...spec };
  if (spec.selector?.matchLabels) {
    const matchLabels = withoutKeys(spec.selector.matchLabels, controllerUidLabels);
    const selector: NonNullable<JobSpec['selector']> = { ...spec.selector, matchLabels };
    if (Object.keys(matchLabels).length === 0) delete selector.matchLabels;
    if (Object.keys(selector).length === 0) delete copy.selector;
    else copy.selector = selector;
  }
  if (spec.template?.metadata?.labels) {
    const labels = withoutKeys(spec.template.metadata.labels, controllerUidLabels);
    const metadata: { labels?: Record<string, string> } = { ...spec.template.metadata, labels };
    if (Object.keys(labels).length === 0) delete metadata.labels;
    copy.template = { ...spec.template, metadata };
  }
  view.spec = copy;
}

/** the target's generated selector and controller-uid labels, which an update may not change (ValidateJobUpdate) */
function keepJobSelector(wanted: KubeObject, live: KubeObject): KubeObject {
  const spec = wanted.spec as JobSpec | undefined;
  const liveSpec = live.spec as JobSpec | undefined;
  if (!spec || spec.manualSelector === true || !liveSpec) return wanted;
  const liveLabels = liveSpec.template?.metadata?.labels ?? {};
  const generated = Object.fromEntries(controllerUidLabels.filter((key) => key in liveLabels).map((key) => [key, liveLabels[key]!]));
  const template = spec.template ?? {};
  return {
    ...wanted,
    spec: {
      ...spec,
      ...(liveSpec.selector ? { selector: liveSpec.selector } : {}),
      template: { ...template, metadata: { ...template.metadata, labels: { ...template.metadata?.labels, ...generated } } },
    },
  };
}

/**
 * the volume the target bound the claim to, the class it defaulted, and the selector a restore by hand-over reserved
 * it with (src/volumes/fill-mark.ts, kubeflow-upgrader/handover): a claim's spec is immutable but for the first two
 */
function keepPvcBinding(wanted: KubeObject, live: KubeObject): KubeObject {
  const spec = (wanted.spec ?? {}) as { volumeName?: string; storageClassName?: string; selector?: unknown };
  const liveSpec = (live.spec ?? {}) as { volumeName?: string; storageClassName?: string; selector?: { matchLabels?: Record<string, string> } };
  const reserved = spec.selector === undefined && liveSpec.selector?.matchLabels?.[handoverLabel] !== undefined;
  return {
    ...wanted,
    spec: {
      ...spec,
      ...(spec.volumeName === undefined && liveSpec.volumeName !== undefined ? { volumeName: liveSpec.volumeName } : {}),
      ...(spec.storageClassName === undefined && liveSpec.storageClassName !== undefined ? { storageClassName: liveSpec.storageClassName } : {}),
      ...(reserved ? { selector: liveSpec.selector } : {}),
    },
  };
}

/** the label of a claim reserved for a hand-over (src/volumes/fill-mark.ts LABEL_HANDOVER) */
const handoverLabel = 'kubeflow-upgrader/handover';

function withoutKeys(map: Record<string, string>, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([key]) => !keys.includes(key)));
}

function restoreServiceAccountToken(view: KubeObject): void {
  if (view.type !== serviceAccountTokenType) return;
  delete view.data;
  delete view.stringData;
  if (view.metadata.annotations) {
    view.metadata.annotations = { ...view.metadata.annotations };
    delete view.metadata.annotations[serviceAccountUidAnnotation];
    dropEmptyAnnotations(view);
  }
}

function restorePvc(view: KubeObject): void {
  if (view.spec && typeof view.spec === 'object') {
    const { volumeName: _volumeName, ...spec } = view.spec as Record<string, unknown>;
    // the selector a restore by hand-over reserved the claim with names a volume of that cluster (src/volumes/rebind.ts)
    const selector = spec.selector as { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | undefined;
    if (selector?.matchLabels?.[handoverLabel] !== undefined) {
      const matchLabels = withoutKeys(selector.matchLabels, [handoverLabel]);
      const rest: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } = { ...selector, matchLabels };
      if (Object.keys(matchLabels).length === 0) delete rest.matchLabels;
      if (Object.keys(rest).length === 0) delete spec.selector;
      else spec.selector = rest;
    }
    view.spec = spec;
  }
  const annotations = view.metadata.annotations;
  if (annotations) {
    view.metadata.annotations = Object.fromEntries(Object.entries(annotations).filter(([name]) => !pvcBindingAnnotations.includes(name)));
    dropEmptyAnnotations(view);
  }
}

function restoreServiceAccount(view: KubeObject): void {
  const secrets = (view as { secrets?: Array<{ name?: string }> }).secrets;
  if (!secrets) return;
  const prefix = `${view.metadata.name ?? ''}-token-`;
  const kept = secrets.filter((s) => !(s.name ?? '').startsWith(prefix));
  if (kept.length === secrets.length) return;
  if (kept.length) (view as { secrets?: unknown }).secrets = kept;
  else delete (view as { secrets?: unknown }).secrets;
}

export const restoreChanges: readonly RestoreChange[] = [
  {
    group: '*', kind: '*',
    changes: 'uid, resourceVersion, generation, creationTimestamp, managedFields, deletion marks, selfLink, generateName, status and controller ownerReferences are dropped; other ownerReferences are pointed at the restored owners\' new uids',
    source: 'vmware-tanzu/velero pkg/restore/restore.go (resetMetadata, resetStatus); kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/create.go (a create may not set a resourceVersion)',
  },
  {
    group: '', kind: 'Service',
    changes: 'spec.clusterIP and spec.clusterIPs are cleared (not for a headless Service, clusterIP None); every nodePort and the healthCheckNodePort are cleared unless the user set them (kubectl\'s last-applied-configuration, or a field manager owning f:nodePort): the target allocates its own from its ranges',
    source: 'vmware-tanzu/velero pkg/restore/actions/service_action.go; kubernetes pkg/registry/core/service/storage/alloc.go (a taken or out-of-range address or port is refused)',
    apply: restoreService,
  },
  {
    group: 'batch', kind: 'Job',
    changes: 'the controller-uid and batch.kubernetes.io/controller-uid keys leave spec.selector.matchLabels and the pod template\'s labels (unless manualSelector): the server generates them from the new Job\'s uid. A Job that finished in the source cluster is not written at all (finished-jobs.ts)',
    source: 'vmware-tanzu/velero pkg/restore/actions/job_action.go; kubernetes pkg/registry/batch/job/strategy.go (generateSelector), pkg/apis/batch/validation/validation.go (validateGeneratedSelector)',
    apply: restoreJob,
    keepOnUpdate: keepJobSelector,
  },
  {
    group: '', kind: 'Secret',
    changes: 'a service-account-token Secret loses its data and its kubernetes.io/service-account.uid annotation, for the token controller to fill for the restored ServiceAccount',
    source: 'vmware-tanzu/velero pkg/restore/actions/secret_action.go; kubernetes pkg/controller/serviceaccount/tokens_controller.go (syncSecret)',
    apply: restoreServiceAccountToken,
  },
  {
    group: '', kind: 'PersistentVolumeClaim',
    changes: 'spec.volumeName, the binding annotations (bind-completed, bound-by-controller, selected-node, storage-provisioner) and the selector label of a restore by hand-over (kubeflow-upgrader/handover) are dropped: the target binds the claim to a volume of its own. A claim the movers fill from the backup also goes in without spec.dataSource and spec.dataSourceRef (src/restore/volume-fill.ts), and the restore warns which',
    source: 'vmware-tanzu/velero pkg/restore/actions/pvc_action.go, pkg/restore/actions/csi/pvc_action.go; kubernetes pkg/controller/volume/persistentvolume/pv_controller.go; kubernetes-csi external-provisioner pkg/controller/controller.go',
    apply: restorePvc,
    keepOnUpdate: keepPvcBinding,
  },
  {
    group: '', kind: 'ServiceAccount',
    changes: 'secrets named <name>-token-… (the source cluster\'s token Secrets) leave the secrets list',
    source: 'vmware-tanzu/velero pkg/restore/actions/service_account_action.go',
    apply: restoreServiceAccount,
  },
  {
    group: '', kind: 'Pod',
    changes: 'never written: Pods are a runtime kind, made again by the workload that owns them (runtime-kinds.ts)',
    source: 'vmware-tanzu/velero pkg/restore/actions/pod_action.go (clears nodeName and the source\'s token volumes for the Pods Velero does restore)',
  },
  {
    group: '', kind: 'PersistentVolume',
    changes: 'never written: the target\'s provisioner makes a volume for each restored claim, and the data is copied into it (src/restore/volume-fill.ts)',
    source: 'vmware-tanzu/velero pkg/restore/pv_restorer.go (a PV is restored only from a snapshot); kubernetes pkg/controller/volume/persistentvolume',
  },
];

const byGroupKind = new Map(restoreChanges.filter((row) => row.kind !== '*').map((row) => [`${row.group}/${row.kind}`, row]));

/** the row of the table for an object's kind, if its kind has one */
export function restoreChangeFor(object: KubeObject): RestoreChange | undefined {
  return byGroupKind.get(`${groupOf(object.apiVersion)}/${object.kind}`);
}

/** the replacement for updating `live` to `wanted` (see RestoreChange.keepOnUpdate) */
export function replacementFor(wanted: KubeObject, live: KubeObject): KubeObject {
  return restoreChangeFor(wanted)?.keepOnUpdate?.(wanted, live) ?? wanted;
}

/** applies the object's row to `view` (see RestoreChange.apply) */
export function applyRestoreChange(view: KubeObject, archived: KubeObject): void {
  restoreChangeFor(archived)?.apply?.(view, archived);
}
