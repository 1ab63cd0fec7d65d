// The profile controller of kubeflow/dashboard, simulated: for each Profile a namespace named after it (owner
// annotation, Kubeflow labels), the default-editor/default-viewer service accounts and role bindings, the owner's
// namespaceAdmin binding, the ns-owner-access-istio AuthorizationPolicy, kf-resource-quota when asked for, and the
// profile-finalizer; every child controlled by the Profile. A namespace that exists with another owner is refused.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, ensure, reconciler } from './reconciler.ts';

export const profileFinalizer = 'profile-finalizer';

export const profileNamespaceLabels: Readonly<Record<string, string>> = {
  'istio-injection': 'enabled',
  'app.kubernetes.io/part-of': 'kubeflow-profile',
  'pipelines.kubeflow.org/enabled': 'true',
  'katib.kubeflow.org/metrics-collector-injection': 'enabled',
  'serving.kubeflow.org/inferenceservice': 'enabled',
  'pod-security.kubernetes.io/enforce': 'baseline',
};

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

function setFailedCondition(api: InProcessApi, profile: KubeObject, message: string): void {
  const status = (profile.status ?? {}) as { conditions?: Array<{ type: string; status?: string; message?: string }> };
  if (status.conditions?.some((c) => c.type === 'Failed' && c.message === message)) return;
  api.updateStatus(refs.profiles, {
    ...profile,
    status: { ...status, conditions: [...(status.conditions ?? []), { type: 'Failed', status: 'True', message }] },
  });
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
    setFailedCondition(api, profile, notOwnedMessage(owner));
    return;
  }
  if (!finalizers.includes(profileFinalizer)) {
    api.update(refs.profiles, { ...profile, metadata: { ...profile.metadata, finalizers: [...finalizers, profileFinalizer] } });
    return 0; // the update changed the resourceVersion: read again
  }
  if (namespace?.metadata.deletionTimestamp) return 200;
  ensure(api, refs.namespaces, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, annotations: { owner }, labels: { ...profileNamespaceLabels }, ownerReferences: [controllerReference(profile)] },
  }, []);
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
    watches: [
      { ref: refs.profiles, keys: (o) => [o.metadata.name!] },
      // a namespace made or changed by someone else must be re-judged against the Profile of the same name
      { ref: refs.namespaces, keys: (o) => [o.metadata.name!] },
      ...[refs.serviceAccounts, refs.roleBindings, refs.authorizationPolicies, refs.resourceQuotas]
        .map((ref) => ({ ref, keys: byProfileOwner })),
    ],
    reconcile: reconcileProfile,
  });
}
