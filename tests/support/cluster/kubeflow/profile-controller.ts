// The profile controller, simulated after kubeflow/kubeflow v1.10.0 components/profile-controller/controllers/
// profile_controller.go: for each Profile a namespace named after it (owner annotation, Kubeflow labels), the
// default-editor/default-viewer service accounts and role bindings, the owner's namespaceAdmin binding, the
// ns-owner-access-istio AuthorizationPolicy, kf-resource-quota when asked for, and the profile-finalizer; every child
// it creates is controlled by the Profile. Three behaviours a restore must live with, as upstream has them:
// - it reconciles a Profile on the Profile's own events and on those of objects it owns (SetupWithManager: For
//   Profile, Owns Namespace, AuthorizationPolicy, ServiceAccount, RoleBinding); a namespace it does not own can be
//   fixed or deleted without the Profile ever being looked at again (and controller-runtime's resync is hours);
// - a namespace that exists without the owner's annotation is refused, and the refusal condition is appended with
//   Update (appendErrorConditionAndReturn), which the status subresource of the Profile CRD drops: no condition ever
//   shows, and nothing changes, so nothing requeues;
// - a namespace that exists with the right owner is adopted as it is: setNamespaceLabels only adds label keys that
//   are missing, and no ownerReference is set on it.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, ensure, reconciler } from './reconciler.ts';

export const profileFinalizer = 'profile-finalizer';

/**
 * The default namespace labels Charmed Kubeflow hands the controller (canonical/kubeflow-profiles-operator track/1.10
 * src/templates/namespace-labels.yaml.j2, with the charm's default security-policy "privileged").
 */
export const defaultNamespaceLabels: Readonly<Record<string, string>> = {
  'katib-metricscollector-injection': 'enabled',
  'katib.kubeflow.org/metrics-collector-injection': 'enabled',
  'serving.kubeflow.org/inferenceservice': 'enabled',
  'pipelines.kubeflow.org/enabled': 'true',
  'app.kubernetes.io/part-of': 'kubeflow-profile',
  'user.kubeflow.org/enabled': 'true',
  'pod-security.kubernetes.io/enforce': 'privileged',
  'namespace-node-affinity': 'enabled',
};

/** a namespace the controller creates: istio-injection (set by the controller itself) and the default labels */
export const profileNamespaceLabels: Readonly<Record<string, string>> = { 'istio-injection': 'enabled', ...defaultNamespaceLabels };

export function notOwnedMessage(owner: string): string {
  return `namespace already exist, but not owned by profile creator ${owner}`;
}

interface ProfileSpec {
  owner?: { kind?: string; name?: string };
  resourceQuotaSpec?: { hard?: Record<string, string> };
}

function roleBinding(profile: KubeObject, name: string, clusterRole: string, subject: Record<string, string>, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: profile.metadata.name, ownerReferences: [controllerReference(profile)], ...(annotations ? { annotations } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects: [subject],
  };
}

function children(profile: KubeObject, owner: string): Array<[typeof refs[keyof typeof refs], KubeObject, string[]]> {
  const namespace = profile.metadata.name!;
  const ownerRefs = [controllerReference(profile)];
  const serviceAccount = (name: string): KubeObject => ({
    apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, ownerReferences: ownerRefs },
  });
  const saSubject = (name: string) => ({ kind: 'ServiceAccount', name, namespace });
  return [
    [refs.serviceAccounts, serviceAccount('default-editor'), []],
    [refs.serviceAccounts, serviceAccount('default-viewer'), []],
    [refs.roleBindings, roleBinding(profile, 'default-editor', 'kubeflow-edit', saSubject('default-editor')), ['subjects']],
    [refs.roleBindings, roleBinding(profile, 'default-viewer', 'kubeflow-view', saSubject('default-viewer')), ['subjects']],
    [refs.roleBindings, roleBinding(profile, 'namespaceAdmin', 'kubeflow-admin',
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: owner }, { user: owner, role: 'admin' }), ['subjects']],
    [refs.authorizationPolicies, {
      apiVersion: 'security.istio.io/v1beta1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'ns-owner-access-istio', namespace, ownerReferences: ownerRefs, annotations: { user: owner, role: 'admin' } },
      spec: {
        action: 'ALLOW',
        rules: [
          { when: [{ key: 'request.headers[kubeflow-userid]', values: [owner] }] },
          { from: [{ source: { principals: ['cluster.local/ns/istio-system/sa/istio-ingressgateway-workload-service-account'] } }] },
          { to: [{ operation: { paths: ['/healthz', '/metrics', '/wait-for-drain'] } }] },
          { from: [{ source: { principals: [`cluster.local/ns/${namespace}/sa/default-editor`] } }] },
        ],
      },
    }, ['spec']],
  ];
}

/** appendErrorConditionAndReturn: the condition goes out with a plain Update, which the status subresource drops */
function appendFailedCondition(api: InProcessApi, profile: KubeObject, message: string): void {
  const status = (profile.status ?? {}) as { conditions?: Array<{ type: string; status?: string; message?: string }> };
  api.update(refs.profiles, { ...profile, status: { ...status, conditions: [...(status.conditions ?? []), { type: 'Failed', message }] } });
}

/** setNamespaceLabels: add each default label whose key is missing; a key already there keeps its value */
function missingLabels(namespace: KubeObject): Record<string, string> | undefined {
  const labels = namespace.metadata.labels ?? {};
  const missing = Object.entries(defaultNamespaceLabels).filter(([key]) => !(key in labels));
  return missing.length ? { ...labels, ...Object.fromEntries(missing) } : undefined;
}

function reconcileProfile(api: InProcessApi, name: string): number | void {
  const profile = api.get(refs.profiles, name);
  if (!profile) return;
  const finalizers = profile.metadata.finalizers ?? [];
  if (profile.metadata.deletionTimestamp) {
    // The namespace and everything in it go through the garbage collector once the Profile is gone.
    if (finalizers.includes(profileFinalizer)) {
      api.update(refs.profiles, { ...profile, metadata: { ...profile.metadata, finalizers: finalizers.filter((f) => f !== profileFinalizer) } });
    }
    return;
  }
  const spec = (profile.spec ?? {}) as ProfileSpec;
  const owner = spec.owner?.name ?? '';
  const namespace = api.get(refs.namespaces, name);
  if (namespace && namespace.metadata.annotations?.owner !== owner) {
    appendFailedCondition(api, profile, notOwnedMessage(owner));
    return;
  }
  if (!finalizers.includes(profileFinalizer)) {
    api.update(refs.profiles, { ...profile, metadata: { ...profile.metadata, finalizers: [...finalizers, profileFinalizer] } });
    return 0; // the update changed the resourceVersion: read again
  }
  if (namespace?.metadata.deletionTimestamp) return 200;
  if (!namespace) {
    api.create(refs.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, annotations: { owner }, labels: { ...profileNamespaceLabels }, ownerReferences: [controllerReference(profile)] },
    });
  } else {
    const labels = missingLabels(namespace);
    if (labels) api.update(refs.namespaces, { ...namespace, metadata: { ...namespace.metadata, labels } });
  }
  for (const [ref, desired, owned] of children(profile, owner)) ensure(api, ref, desired, owned);
  const hard = spec.resourceQuotaSpec?.hard;
  const quota = api.get(refs.resourceQuotas, 'kf-resource-quota', name);
  if (hard && Object.keys(hard).length) {
    ensure(api, refs.resourceQuotas, {
      apiVersion: 'v1', kind: 'ResourceQuota',
      metadata: { name: 'kf-resource-quota', namespace: name, ownerReferences: [controllerReference(profile)] },
      spec: { hard },
    });
  } else if (quota) {
    api.delete(refs.resourceQuotas, 'kf-resource-quota', name);
  }
}

export function profileController() {
  const byProfileOwner = controllerOwnerKeys('Profile', true);
  return reconciler({
    name: 'profile-controller',
    delayMs: 5,
    // For(Profile) and Owns(Namespace, AuthorizationPolicy, ServiceAccount, RoleBinding), nothing else: a namespace
    // without a controller reference to a Profile wakes no Profile, whatever happens to it.
    watches: [
      { ref: refs.profiles, keys: (o) => [o.metadata.name!] },
      ...[refs.namespaces, refs.serviceAccounts, refs.roleBindings, refs.authorizationPolicies]
        .map((ref) => ({ ref, keys: byProfileOwner })),
    ],
    reconcile: reconcileProfile,
  });
}
