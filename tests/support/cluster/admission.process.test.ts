// ValidatingAdmissionPolicy enforcement with real CEL, through the real client-node, in the product's own use:
// guarding CRD deletion.
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startCluster, type RunningCluster } from './index.ts';

const crdBody = (name: string, annotations?: Record<string, string>) => ({
  metadata: { name: `${name}.guarded.example.org`, ...(annotations ? { annotations } : {}) },
  spec: { group: 'guarded.example.org', scope: 'Namespaced' as const, names: { plural: name, kind: name[0]!.toUpperCase() + name.slice(1, -1) }, versions: [{ name: 'v1', served: true, storage: true }] },
});

describe('admission: ValidatingAdmissionPolicy with CEL', () => {
  let c: RunningCluster;
  let crds: k8s.ApiextensionsV1Api;
  let adm: k8s.AdmissionregistrationV1Api;

  before(async () => {
    c = await startCluster({ kubeflowCrds: false });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(c.kubeconfigPath);
    crds = kc.makeApiClient(k8s.ApiextensionsV1Api);
    adm = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    await adm.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: 'protect-crds' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: ['apiextensions.k8s.io'], apiVersions: ['*'], operations: ['DELETE'], resources: ['customresourcedefinitions'] }] },
          validations: [
            {
              expression: `!oldObject.spec.group.endsWith('guarded.example.org') || (has(oldObject.metadata.annotations) && oldObject.metadata.annotations['kubeflow-upgrader/allow-delete'] == 'true')`,
              messageExpression: `'CRD ' + oldObject.metadata.name + ' is protected by ' + request.userInfo.username`,
              reason: 'Forbidden',
            },
            { expression: 'object == null && request.operation == "DELETE"' },
          ],
        },
      },
    });
    await adm.createValidatingAdmissionPolicyBinding({ body: { metadata: { name: 'protect-crds-binding' }, spec: { policyName: 'protect-crds', validationActions: ['Deny'] } } });
  });
  after(async () => c.stop());

  it('denies deleting a protected CRD with the real message shape and 403 for reason Forbidden', async () => {
    await crds.createCustomResourceDefinition({ body: crdBody('locks') });
    let failure: k8s.ApiException<string> | undefined;
    await crds.deleteCustomResourceDefinition({ name: 'locks.guarded.example.org' }).catch((e: k8s.ApiException<string>) => (failure = e));
    expect(failure?.code).to.equal(403);
    const status = JSON.parse(failure!.body);
    expect(status).to.include({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message:
        `customresourcedefinitions.apiextensions.k8s.io "locks.guarded.example.org" is forbidden: ValidatingAdmissionPolicy 'protect-crds' with binding 'protect-crds-binding' denied request: CRD locks.guarded.example.org is protected by kubernetes-admin`,
    });
    expect((await crds.readCustomResourceDefinition({ name: 'locks.guarded.example.org' })).metadata?.deletionTimestamp).to.equal(undefined);
  });

  it('admits the deletion of an annotated CRD and of CRDs outside the guarded group', async () => {
    await crds.createCustomResourceDefinition({ body: crdBody('keys', { 'kubeflow-upgrader/allow-delete': 'true' }) });
    await crds.deleteCustomResourceDefinition({ name: 'keys.guarded.example.org' });
    await crds.createCustomResourceDefinition({ body: { ...crdBody('doors'), metadata: { name: 'doors.open.example.org' }, spec: { ...crdBody('doors').spec, group: 'open.example.org' } } });
    await crds.deleteCustomResourceDefinition({ name: 'doors.open.example.org' });
    const deadline = Date.now() + 5000;
    while (c.cluster.findResource({ group: 'open.example.org', resource: 'doors' }) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(c.cluster.findResource({ group: 'open.example.org', resource: 'doors' })).to.equal(undefined);
  });

  it('uses 422 Invalid and "failed expression" when a validation has no reason or message', async () => {
    await adm.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: 'no-big-maps' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] },
          validations: [{ expression: '!has(object.data) || object.data.size() < 3' }],
        },
      },
    });
    await adm.createValidatingAdmissionPolicyBinding({ body: { metadata: { name: 'no-big-maps' }, spec: { policyName: 'no-big-maps', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } } } } } });
    const core = (() => {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(c.kubeconfigPath);
      return kc.makeApiClient(k8s.CoreV1Api);
    })();
    let failure: k8s.ApiException<string> | undefined;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'big' }, data: { a: '1', b: '2', c: '3' } } }).catch((e: k8s.ApiException<string>) => (failure = e));
    expect(failure?.code).to.equal(422);
    expect(JSON.parse(failure!.body).message).to.equal(
      `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'no-big-maps' with binding 'no-big-maps' denied request: failed expression: !has(object.data) || object.data.size() < 3`,
    );
    // the binding's namespaceSelector leaves other namespaces alone
    const made = await core.createNamespacedConfigMap({ namespace: 'kubeflow', body: { metadata: { name: 'big' }, data: { a: '1', b: '2', c: '3' } } });
    expect(made.metadata?.name).to.equal('big');
  });
});
