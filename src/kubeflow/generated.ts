// Which objects a controller made (and will make again): restoring them fights the controller, backing them up
// wastes space. An object with a controller ownerReference is generated: every Kubeflow controller, and
// metacontroller for the KFP profile controller and Canonical's resource-dispatcher (metacontroller
// pkg/controller/common/manage_children.go), sets one on what it makes. Name rules are only for the few objects a
// controller makes without any ownerReference, each with the upstream source that shows it. `generatedReason` says
// which rule matched, so a backup or a plan can say why.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';
import { runtimeKindOfObject } from './runtime-kinds.ts';
import { controllerServiceAccounts, isControllerServiceAccount, userChanges } from './service-accounts.ts';

interface NamedObjectRule {
  group: string;
  kind: string;
  name: string;
  maker: string;
  /** the upstream code that makes the object without an ownerReference */
  source: string;
}

/** objects a controller makes under a fixed name without an ownerReference */
export const unownedControllerObjects: readonly NamedObjectRule[] = [
  {
    group: '', kind: 'ConfigMap', name: 'kube-root-ca.crt', maker: 'Kubernetes in every namespace',
    source: 'kubernetes pkg/controller/certificates/rootcacertpublisher/publisher.go: made in every namespace, with no ownerReference',
  },
  {
    group: '', kind: 'ConfigMap', name: 'istio-ca-root-cert', maker: 'Istio in every injected namespace',
    source: 'istio pilot/pkg/serviceregistry/kube/controller/namespacecontroller.go: made in every namespace Istio watches, with no ownerReference',
  },
];

const namedRules = new Map(unownedControllerObjects.map((rule) => [`${rule.group}/${rule.kind}/${rule.name}`, rule.maker]));

/** why this object is a controller's output, or undefined when it is not */
export function generatedReason(object: KubeObject): string | undefined {
  // Made by a controller, but changed by users: kept (and merged on restore) when the change is there.
  if (isControllerServiceAccount(object)) {
    if (userChanges(object).length) return undefined;
    return `generated: ServiceAccount/${object.metadata.name} is made by ${controllerServiceAccounts[object.metadata.name!]} and holds no change of users`;
  }
  const controller = object.metadata.ownerReferences?.find((owner) => owner.controller === true);
  if (controller) return `generated: controller ownerReference to ${controller.kind}/${controller.name}`;
  const runtime = runtimeKindOfObject(object);
  if (runtime) return `generated: ${runtime.why}`;
  if (object.metadata.ownerReferences?.length) return undefined;
  const maker = namedRules.get(`${groupOf(object.apiVersion)}/${object.kind}/${object.metadata.name}`);
  if (maker) return `generated: ${object.kind}/${object.metadata.name} is made by ${maker}`;
  return undefined;
}
