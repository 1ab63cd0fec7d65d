// Which objects a controller made (and will make again): restoring them fights the controller, backing them up
// wastes space. Each rule is data; `generatedReason` says which rule matched, so a backup or a plan can say why.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

interface NamedObjectRule {
  group: string;
  kind: string;
  names: readonly string[];
  maker: string;
}

/** objects the profile controller and the KFP profile controller make in every profile namespace (kubeflow.md) */
export const controllerMadeObjects: readonly NamedObjectRule[] = [
  { group: '', kind: 'ServiceAccount', names: ['default-editor', 'default-viewer'], maker: 'the profile controller' },
  { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', names: ['default-editor', 'default-viewer', 'namespaceAdmin'], maker: 'the profile controller' },
  { group: 'security.istio.io', kind: 'AuthorizationPolicy', names: ['ns-owner-access-istio'], maker: 'the profile controller' },
  { group: '', kind: 'ResourceQuota', names: ['kf-resource-quota'], maker: 'the profile controller' },
  { group: '', kind: 'ConfigMap', names: ['kfp-launcher', 'metadata-grpc-configmap'], maker: 'the KFP profile controller' },
  { group: 'apps', kind: 'Deployment', names: ['ml-pipeline-visualizationserver', 'ml-pipeline-ui-artifact'], maker: 'the KFP profile controller' },
  { group: '', kind: 'Service', names: ['ml-pipeline-visualizationserver', 'ml-pipeline-ui-artifact'], maker: 'the KFP profile controller' },
  { group: 'kubeflow.org', kind: 'PodDefault', names: ['access-ml-pipeline'], maker: 'the KFP profile controller' },
  { group: 'security.istio.io', kind: 'AuthorizationPolicy', names: ['ml-pipeline-visualizationserver', 'ns-owner-access-istio-charmed'], maker: 'the KFP profile controller' },
  { group: '', kind: 'Secret', names: ['mlpipeline-minio-artifact'], maker: 'the KFP profile controller' },
  { group: '', kind: 'ServiceAccount', names: ['default'], maker: 'Kubernetes in every namespace' },
  { group: '', kind: 'ConfigMap', names: ['kube-root-ca.crt'], maker: 'Kubernetes in every namespace' },
  { group: '', kind: 'ConfigMap', names: ['istio-ca-root-cert'], maker: 'Istio in every injected namespace' },
];

/** kinds whose objects are always some controller's output (kubeflow.md, "Generated elsewhere") */
export const alwaysGeneratedKinds: ReadonlyArray<{ group: string; kind: string }> = [
  { group: '', kind: 'Pod' },
  { group: '', kind: 'Endpoints' },
  { group: '', kind: 'Event' },
  { group: 'events.k8s.io', kind: 'Event' },
  { group: 'discovery.k8s.io', kind: 'EndpointSlice' },
  { group: 'apps', kind: 'ReplicaSet' },
  { group: 'apps', kind: 'ControllerRevision' },
  { group: 'kubeflow.org', kind: 'Suggestion' },
  { group: 'kubeflow.org', kind: 'Trial' },
  { group: 'argoproj.io', kind: 'Workflow' },
  { group: 'argoproj.io', kind: 'WorkflowTaskResult' },
  { group: 'argoproj.io', kind: 'WorkflowTaskSet' },
  { group: 'argoproj.io', kind: 'WorkflowArtifactGCTask' },
];

const namedRules = new Map<string, string>();
for (const rule of controllerMadeObjects) {
  for (const name of rule.names) namedRules.set(`${rule.group}/${rule.kind}/${name}`, rule.maker);
}
const generatedKinds = new Set(alwaysGeneratedKinds.map((k) => `${k.group}/${k.kind}`));

/** why this object is a controller's output, or undefined when it is not */
export function generatedReason(object: KubeObject): string | undefined {
  const controller = object.metadata.ownerReferences?.find((owner) => owner.controller === true);
  if (controller) return `generated: controller ownerReference to ${controller.kind}/${controller.name}`;
  const group = groupOf(object.apiVersion);
  const maker = namedRules.get(`${group}/${object.kind}/${object.metadata.name}`);
  if (maker) return `generated: ${object.kind}/${object.metadata.name} is made by ${maker}`;
  if (generatedKinds.has(`${group}/${object.kind}`)) return `generated: ${object.kind} objects are always made by a controller`;
  if (object.kind === 'Secret' && group === '' && object.type === 'kubernetes.io/service-account-token') {
    return 'generated: service-account-token Secrets are made by Kubernetes';
  }
  return undefined;
}
