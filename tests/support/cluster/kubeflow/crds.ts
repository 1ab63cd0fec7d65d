// The CustomResourceDefinitions of Charmed Kubeflow (shared/reference/kubeflow.md), as the charms install them:
// names, scope, served and storage versions, the status subresource where upstream has one. These schemas are
// permissive (x-kubernetes-preserve-unknown-fields): the default cluster stores what users send. The CRDs of one CKF
// release, with the schema parts that change between releases, are releases.ts.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Schema } from '../crd-schema.ts';

export interface CrdSpec {
  group: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope?: 'Namespaced' | 'Cluster';
  /** served versions, the storage version first */
  versions: string[];
  status?: boolean;
  /** the openAPIV3Schema of every version; permissive when absent */
  schema?: Schema;
}

const permissiveSchema = {
  openAPIV3Schema: {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  },
};

export function crdObject(spec: CrdSpec): KubeObject {
  const names: Record<string, unknown> = {
    plural: spec.plural,
    singular: spec.singular ?? spec.kind.toLowerCase(),
    kind: spec.kind,
    listKind: `${spec.kind}List`,
  };
  if (spec.shortNames) names.shortNames = spec.shortNames;
  if (spec.categories) names.categories = spec.categories;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${spec.plural}.${spec.group}`,
      labels: { 'app.kubernetes.io/part-of': 'kubeflow' },
    },
    spec: {
      group: spec.group,
      names,
      scope: spec.scope ?? 'Namespaced',
      versions: spec.versions.map((name, index) => ({
        name,
        served: true,
        storage: index === 0,
        schema: structuredClone(spec.schema ? { openAPIV3Schema: spec.schema } : permissiveSchema),
        ...(spec.status ? { subresources: { status: {} } } : {}),
      })),
    },
  };
}

const trainingJobs: Array<[kind: string, plural: string]> = [
  ['PyTorchJob', 'pytorchjobs'],
  ['TFJob', 'tfjobs'],
  ['MPIJob', 'mpijobs'],
  ['XGBoostJob', 'xgboostjobs'],
  ['PaddleJob', 'paddlejobs'],
  ['JAXJob', 'jaxjobs'],
  // training-operator 1.8, which Charmed Kubeflow 1.9 ships, still serves MXJob (pkg/apis/kubeflow.org/v1/mxnet_types.go)
  ['MXJob', 'mxjobs'],
];

export const kubeflowCrdSpecs: readonly CrdSpec[] = [
  { group: 'kubeflow.org', kind: 'Profile', plural: 'profiles', scope: 'Cluster', versions: ['v1', 'v1beta1'], status: true },
  { group: 'kubeflow.org', kind: 'Notebook', plural: 'notebooks', versions: ['v1', 'v1beta1', 'v1alpha1'], status: true },
  { group: 'kubeflow.org', kind: 'PodDefault', plural: 'poddefaults', versions: ['v1alpha1'] },
  { group: 'kubeflow.org', kind: 'PVCViewer', plural: 'pvcviewers', versions: ['v1alpha1'], status: true },
  { group: 'tensorboard.kubeflow.org', kind: 'Tensorboard', plural: 'tensorboards', versions: ['v1alpha1'], status: true },
  { group: 'kubeflow.org', kind: 'Experiment', plural: 'experiments', versions: ['v1beta1'], status: true, categories: ['all', 'kubeflow', 'katib'] },
  { group: 'kubeflow.org', kind: 'Suggestion', plural: 'suggestions', versions: ['v1beta1'], status: true, categories: ['all', 'kubeflow', 'katib'] },
  { group: 'kubeflow.org', kind: 'Trial', plural: 'trials', versions: ['v1beta1'], status: true, categories: ['all', 'kubeflow', 'katib'] },
  ...trainingJobs.map(([kind, plural]): CrdSpec => ({
    group: 'kubeflow.org', kind, plural, versions: ['v1'], status: true, categories: ['all', 'kubeflow'],
  })),
  { group: 'kubeflow.org', kind: 'ScheduledWorkflow', plural: 'scheduledworkflows', shortNames: ['swf'], versions: ['v1beta1'], status: true },
  { group: 'kubeflow.org', kind: 'Viewer', plural: 'viewers', shortNames: ['vi'], versions: ['v1beta1'] },
  { group: 'argoproj.io', kind: 'Workflow', plural: 'workflows', shortNames: ['wf'], versions: ['v1alpha1'], status: false },
  { group: 'argoproj.io', kind: 'WorkflowTemplate', plural: 'workflowtemplates', shortNames: ['wftmpl'], versions: ['v1alpha1'] },
  { group: 'argoproj.io', kind: 'CronWorkflow', plural: 'cronworkflows', shortNames: ['cwf', 'cronwf'], versions: ['v1alpha1'] },
  { group: 'serving.kserve.io', kind: 'InferenceService', plural: 'inferenceservices', shortNames: ['isvc'], versions: ['v1beta1'], status: true },
  { group: 'serving.kserve.io', kind: 'ServingRuntime', plural: 'servingruntimes', versions: ['v1alpha1'] },
  { group: 'serving.kserve.io', kind: 'ClusterServingRuntime', plural: 'clusterservingruntimes', scope: 'Cluster', versions: ['v1alpha1'] },
  { group: 'serving.kserve.io', kind: 'InferenceGraph', plural: 'inferencegraphs', shortNames: ['ig'], versions: ['v1alpha1'], status: true },
  { group: 'serving.kserve.io', kind: 'TrainedModel', plural: 'trainedmodels', shortNames: ['tm'], versions: ['v1alpha1'], status: true },
  { group: 'security.istio.io', kind: 'AuthorizationPolicy', plural: 'authorizationpolicies', shortNames: ['ap'], versions: ['v1', 'v1beta1'], status: true, categories: ['istio-io', 'security-istio-io'] },
  { group: 'networking.istio.io', kind: 'VirtualService', plural: 'virtualservices', shortNames: ['vs'], versions: ['v1beta1', 'v1alpha3', 'v1'], status: true, categories: ['istio-io', 'networking-istio-io'] },
];

/** Fresh CRD objects (callers may mutate them). */
export function kubeflowCrds(): KubeObject[] {
  return kubeflowCrdSpecs.map(crdObject);
}
