// generatedReason: why an object is a controller's output (left out of backups, never restored), one row per rule.
// Each controller row names the upstream code that makes the object, as src/kubeflow/generated.ts cites it.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { generatedReason } from '../../src/kubeflow/generated.ts';

type Owner = NonNullable<KubeObject['metadata']['ownerReferences']>[number];

const obj = (apiVersion: string, kind: string, name: string, extra: Record<string, unknown> = {}, owners?: Owner[]): KubeObject =>
  ({ apiVersion, kind, metadata: { name, namespace: 'alice', ...(owners ? { ownerReferences: owners } : {}) }, ...extra });
const controlledBy = (kind: string, name: string, apiVersion = 'kubeflow.org/v1'): Owner => ({ apiVersion, kind, name, uid: 'u', controller: true });
const referencedBy = (kind: string, name: string): Owner => ({ apiVersion: 'v1', kind, name, uid: 'u' });

const rows: { case: string; object: KubeObject; reason: string | undefined }[] = [
  // an ownerReference with controller: true, whoever set it
  { case: 'a Notebook\'s StatefulSet (notebook-controller notebook_controller.go, SetControllerReference)', object: obj('apps/v1', 'StatefulSet', 'nb', {}, [controlledBy('Notebook', 'nb')]), reason: 'generated: controller ownerReference to Notebook/nb' },
  { case: 'a Notebook\'s Service (notebook-controller notebook_controller.go)', object: obj('v1', 'Service', 'nb', {}, [controlledBy('Notebook', 'nb')]), reason: 'generated: controller ownerReference to Notebook/nb' },
  { case: 'the owner\'s RoleBinding namespaceAdmin (profile_controller.go, updateRoleBinding)', object: obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'namespaceAdmin', {}, [controlledBy('Profile', 'alice')]), reason: 'generated: controller ownerReference to Profile/alice' },
  { case: 'the RoleBinding default-editor (profile_controller.go, updateServiceAccount)', object: obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'default-editor', {}, [controlledBy('Profile', 'alice')]), reason: 'generated: controller ownerReference to Profile/alice' },
  { case: 'the AuthorizationPolicy ns-owner-access-istio (profile_controller.go, updateIstioAuthorizationPolicy)', object: obj('security.istio.io/v1beta1', 'AuthorizationPolicy', 'ns-owner-access-istio', {}, [controlledBy('Profile', 'alice')]), reason: 'generated: controller ownerReference to Profile/alice' },
  { case: 'the ResourceQuota kf-resource-quota (profile_controller.go, updateResourceQuota)', object: obj('v1', 'ResourceQuota', 'kf-resource-quota', {}, [controlledBy('Profile', 'alice')]), reason: 'generated: controller ownerReference to Profile/alice' },
  { case: 'a KFP profile controller child, owned by the Namespace (metacontroller manage_children.go)', object: obj('v1', 'Secret', 'mlpipeline-minio-artifact', {}, [controlledBy('Namespace', 'alice', 'v1')]), reason: 'generated: controller ownerReference to Namespace/alice' },
  { case: 'a training job\'s Pod names its job, not the runtime-kind rule', object: obj('v1', 'Pod', 'train-worker-0', {}, [controlledBy('PyTorchJob', 'train')]), reason: 'generated: controller ownerReference to PyTorchJob/train' },
  { case: 'the controller reference among several ownerReferences is the one named', object: obj('v1', 'ConfigMap', 'c', {}, [referencedBy('ConfigMap', 'x'), controlledBy('Notebook', 'nb')]), reason: 'generated: controller ownerReference to Notebook/nb' },
  // no controller reference: the profile controller and metacontroller always set one, so no name rule stands in for them
  { case: 'namespaceAdmin without an ownerReference is not taken for the controller\'s', object: obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'namespaceAdmin'), reason: undefined },
  { case: 'a kfp-launcher ConfigMap without an ownerReference is the user\'s', object: obj('v1', 'ConfigMap', 'kfp-launcher', { data: { defaultPipelineRoot: 's3://mine' } }), reason: undefined },
  { case: 'an ownerReference that is not a controller\'s leaves a user object alone', object: obj('v1', 'ConfigMap', 'c', {}, [referencedBy('ConfigMap', 'x')]), reason: undefined },
  { case: 'an ownerReference with controller: false leaves a user object alone', object: obj('v1', 'ConfigMap', 'c', {}, [{ ...controlledBy('Notebook', 'nb'), controller: false }]), reason: undefined },
  // kinds never state, whoever made them (runtime-kinds.ts)
  { case: 'a Pod with no owner', object: obj('v1', 'Pod', 'p'), reason: 'generated: Pods are made by the workload that owns them, which is backed up' },
  { case: 'a Katib Trial with no owner', object: obj('kubeflow.org/v1beta1', 'Trial', 't'), reason: 'generated: Trials are made by Katib from their Experiment' },
  // objects controllers make under a fixed name without any ownerReference
  { case: 'kube-root-ca.crt (kubernetes rootcacertpublisher/publisher.go)', object: obj('v1', 'ConfigMap', 'kube-root-ca.crt'), reason: 'generated: ConfigMap/kube-root-ca.crt is made by Kubernetes in every namespace' },
  { case: 'istio-ca-root-cert (istio namespacecontroller.go)', object: obj('v1', 'ConfigMap', 'istio-ca-root-cert'), reason: 'generated: ConfigMap/istio-ca-root-cert is made by Istio in every injected namespace' },
  { case: 'a name rule applies only to an object with no ownerReference at all', object: obj('v1', 'ConfigMap', 'kube-root-ca.crt', {}, [referencedBy('ConfigMap', 'x')]), reason: undefined },
  { case: 'a name rule applies only to its own group and kind', object: obj('example.com/v1', 'ConfigMap', 'kube-root-ca.crt'), reason: undefined },
  { case: 'a Secret named like a root CA is not the publisher\'s ConfigMap', object: obj('v1', 'Secret', 'kube-root-ca.crt'), reason: undefined },
  // since Kubernetes 1.24 no token Secret is made without being asked for: users made each one
  { case: 'a Secret of type service-account-token is the user\'s', object: obj('v1', 'Secret', 't', { type: 'kubernetes.io/service-account-token' }), reason: undefined },
  { case: 'an Opaque Secret is the user\'s', object: obj('v1', 'Secret', 't', { type: 'Opaque' }), reason: undefined },
  // ServiceAccounts controllers make and users change (service-accounts.ts): generated only while unchanged
  { case: 'Kubernetes\' default ServiceAccount, unchanged (serviceaccounts_controller.go, no ownerReference)', object: obj('v1', 'ServiceAccount', 'default'), reason: 'generated: ServiceAccount/default is made by Kubernetes\' service-account controller in every namespace and holds no change of users' },
  { case: 'default-viewer as the profile controller made it', object: obj('v1', 'ServiceAccount', 'default-viewer', {}, [controlledBy('Profile', 'alice')]), reason: 'generated: ServiceAccount/default-viewer is made by the profile controller and holds no change of users' },
  { case: 'default-editor with a user\'s pull secret is state', object: obj('v1', 'ServiceAccount', 'default-editor', { imagePullSecrets: [{ name: 'regcred' }] }, [controlledBy('Profile', 'alice')]), reason: undefined },
  { case: 'a user\'s own ServiceAccount', object: obj('v1', 'ServiceAccount', 'runner'), reason: undefined },
];

describe('kubeflow/generated: generatedReason', () => {
  for (const row of rows) it(`${row.case} → ${row.reason ?? 'not generated'}`, () => expect(generatedReason(row.object)).to.equal(row.reason));
});
