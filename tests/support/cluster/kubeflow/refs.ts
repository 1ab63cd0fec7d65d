// The resources the simulated controllers read and write, named as the API names them.
import type { ResourceRef } from '../contract.ts';

const core = (resource: string): ResourceRef => ({ group: '', resource });

export const refs = {
  namespaces: core('namespaces'),
  serviceAccounts: core('serviceaccounts'),
  secrets: core('secrets'),
  configMaps: core('configmaps'),
  services: core('services'),
  pods: core('pods'),
  resourceQuotas: core('resourcequotas'),
  persistentVolumeClaims: core('persistentvolumeclaims'),
  deployments: { group: 'apps', resource: 'deployments' },
  statefulSets: { group: 'apps', resource: 'statefulsets' },
  roleBindings: { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' },
  profiles: { group: 'kubeflow.org', resource: 'profiles' },
  notebooks: { group: 'kubeflow.org', resource: 'notebooks' },
  podDefaults: { group: 'kubeflow.org', resource: 'poddefaults' },
  experiments: { group: 'kubeflow.org', resource: 'experiments' },
  suggestions: { group: 'kubeflow.org', resource: 'suggestions' },
  trials: { group: 'kubeflow.org', resource: 'trials' },
  inferenceServices: { group: 'serving.kserve.io', resource: 'inferenceservices' },
  authorizationPolicies: { group: 'security.istio.io', resource: 'authorizationpolicies' },
  virtualServices: { group: 'networking.istio.io', resource: 'virtualservices' },
} satisfies Record<string, ResourceRef>;
