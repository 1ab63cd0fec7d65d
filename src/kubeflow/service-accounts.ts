// ServiceAccounts that a controller makes in every profile namespace and users then change: Kubernetes' `default`
// (the service-account controller, kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go, creates
// it in every namespace without an ownerReference) and the profile controller's `default-editor` and
// `default-viewer` (kubeflow/kubeflow v1.10.0 components/profile-controller/controllers/profile_controller.go,
// updateServiceAccount: created with a controller reference to the Profile only when missing, never updated). Users
// add imagePullSecrets to them and plugins add annotations (a cloud role, say). Such a ServiceAccount is backed up
// only when it carries such a change, and a restore merges the change into the one the controller made, as Velero
// does (vmware-tanzu/velero pkg/restore/merge_service_account.go): imagePullSecrets and secrets are joined by name,
// labels and annotations are added where the live object has no value for the key. It is never replaced.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

export const controllerServiceAccounts: Readonly<Record<string, string>> = {
  default: 'Kubernetes\' service-account controller in every namespace',
  'default-editor': 'the profile controller',
  'default-viewer': 'the profile controller',
};

/** annotations that say nothing a restore should carry: kubectl's copy of what was last applied */
const ignoredAnnotations = new Set(['kubectl.kubernetes.io/last-applied-configuration']);

interface NamedReference {
  name?: string;
}

export function isControllerServiceAccount(object: KubeObject): boolean {
  return object.kind === 'ServiceAccount' && groupOf(object.apiVersion) === ''
    && Object.hasOwn(controllerServiceAccounts, object.metadata.name ?? '');
}

function names(list: unknown): string[] {
  return Array.isArray(list) ? (list as NamedReference[]).map((r) => r?.name ?? '').filter(Boolean) : [];
}

/** what users changed in a controller-made ServiceAccount, e.g. ['imagePullSecrets regcred', 'annotation x'] */
export function userChanges(object: KubeObject): string[] {
  const changes = names(object.imagePullSecrets).map((name) => `imagePullSecrets ${name}`);
  for (const key of Object.keys(object.metadata.annotations ?? {})) if (!ignoredAnnotations.has(key)) changes.push(`annotation ${key}`);
  return changes;
}

/**
 * The JSON merge patch that brings the archived changes into the live ServiceAccount, or undefined when the live
 * one holds them all. Lists are written whole (a merge patch replaces a list): the live entries first, then the
 * archived ones it lacks. A key the live object has keeps its live value.
 */
export function serviceAccountMerge(live: KubeObject, archived: KubeObject): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const field of ['imagePullSecrets', 'secrets'] as const) {
    const have = Array.isArray(live[field]) ? (live[field] as NamedReference[]) : [];
    const known = new Set(names(have));
    const added = (Array.isArray(archived[field]) ? (archived[field] as NamedReference[]) : []).filter((r) => r?.name && !known.has(r.name));
    if (added.length) patch[field] = [...have, ...added];
  }
  const metadata: Record<string, Record<string, string>> = {};
  for (const field of ['labels', 'annotations'] as const) {
    const have = live.metadata[field] ?? {};
    const added = Object.entries(archived.metadata[field] ?? {}).filter(([key]) => !(key in have) && !ignoredAnnotations.has(key));
    if (added.length) metadata[field] = Object.fromEntries(added);
  }
  if (Object.keys(metadata).length) patch.metadata = metadata;
  return Object.keys(patch).length ? patch : undefined;
}
