import { expect } from 'chai';
import { evaluate } from '@marcbachmann/cel-js';
import {
  ALLOW_DELETE_ANNOTATION,
  CRD_GUARD_NAME,
  DEFAULT_PROTECTED_CRD_GROUPS,
  MANAGED_BY_LABEL,
  PROFILE_GUARD_NAME,
  crdGuardPolicy,
  desiredGuardObjects,
  guardOptionsFromConfig,
  parseProtectedGroups,
  profileGuardPolicy,
} from '../../src/guard/policy.ts';
import type { KubeObject } from '../../src/kube/types.ts';

interface Validation {
  expression: string;
  message: string;
  messageExpression: string;
}

function validationOf(policy: KubeObject): Validation {
  const spec = policy.spec as { validations: Validation[] };
  const validation = spec.validations[0];
  if (!validation) throw new Error('policy has no validation');
  return validation;
}

function crdDeletion(name: string, group: string, annotations?: Record<string, string>) {
  const oldObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name, uid: 'a3c1', resourceVersion: '812', labels: { 'app.kubernetes.io/name': 'jupyter-controller' }, ...(annotations ? { annotations } : {}) },
    spec: { group, names: { plural: name.split('.')[0], kind: 'X' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true }] },
    status: { storedVersions: ['v1'] },
  };
  const request = {
    operation: 'DELETE',
    name,
    resource: { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' },
    userInfo: { username: 'system:serviceaccount:kubeflow:jupyter-controller' },
  };
  return { object: null, oldObject, request };
}

function profileDeletion(name: string, annotations?: Record<string, string>) {
  const oldObject = {
    apiVersion: 'kubeflow.org/v1',
    kind: 'Profile',
    metadata: { name, finalizers: ['profile-finalizer'], ...(annotations ? { annotations } : {}) },
    spec: { owner: { kind: 'User', name: 'alice@example.com' } },
  };
  return { object: null, oldObject, request: { operation: 'DELETE', name } };
}

describe('guard policy', () => {
  const policy = crdGuardPolicy(DEFAULT_PROTECTED_CRD_GROUPS);
  const crdRule = validationOf(policy);

  it('refuses deleting a CRD of a protected group without the annotation', () => {
    expect(evaluate(crdRule.expression, crdDeletion('notebooks.kubeflow.org', 'kubeflow.org'))).to.equal(false);
    expect(evaluate(crdRule.expression, crdDeletion('tensorboards.tensorboard.kubeflow.org', 'tensorboard.kubeflow.org'))).to.equal(false);
    expect(evaluate(crdRule.expression, crdDeletion('inferenceservices.serving.kserve.io', 'serving.kserve.io'))).to.equal(false);
  });

  it('allows deleting a CRD of an unprotected group', () => {
    expect(evaluate(crdRule.expression, crdDeletion('workflows.argoproj.io', 'argoproj.io'))).to.equal(true);
    // a group that merely ends like a protected one is not protected
    expect(evaluate(crdRule.expression, crdDeletion('things.notkubeflow.org', 'notkubeflow.org'))).to.equal(true);
  });

  it('allows deleting a protected CRD annotated allow-delete "true", and only "true"', () => {
    const allowed = crdDeletion('notebooks.kubeflow.org', 'kubeflow.org', { [ALLOW_DELETE_ANNOTATION]: 'true' });
    expect(evaluate(crdRule.expression, allowed)).to.equal(true);
    const wrongValue = crdDeletion('notebooks.kubeflow.org', 'kubeflow.org', { [ALLOW_DELETE_ANNOTATION]: 'yes' });
    expect(evaluate(crdRule.expression, wrongValue)).to.equal(false);
    const otherAnnotations = crdDeletion('notebooks.kubeflow.org', 'kubeflow.org', { 'controller-gen.kubebuilder.io/version': 'v0.14.0' });
    expect(evaluate(crdRule.expression, otherAnnotations)).to.equal(false);
  });

  it('says kubeflow-upgrader refused it and gives the annotate command for that CRD', () => {
    const message = evaluate(crdRule.messageExpression, crdDeletion('notebooks.kubeflow.org', 'kubeflow.org'));
    expect(message).to.include('kubeflow-upgrader refused to delete CustomResourceDefinition notebooks.kubeflow.org');
    expect(message).to.include(`kubectl annotate crd notebooks.kubeflow.org ${ALLOW_DELETE_ANNOTATION}=true`);
    expect(crdRule.message).to.include('kubeflow-upgrader refused').and.to.include('kubectl annotate crd');
  });

  it('matches only DELETE of customresourcedefinitions, so creations and updates are never blocked', () => {
    const spec = policy.spec as { matchConstraints: { resourceRules: Array<{ operations: string[]; resources: string[] }> }; failurePolicy: string };
    expect(spec.matchConstraints.resourceRules).to.have.length(1);
    expect(spec.matchConstraints.resourceRules[0]?.operations).to.deep.equal(['DELETE']);
    expect(spec.matchConstraints.resourceRules[0]?.resources).to.deep.equal(['customresourcedefinitions']);
    expect(spec.failurePolicy).to.equal('Fail');
  });

  it('guards Profiles with the same annotation when asked', () => {
    const rule = validationOf(profileGuardPolicy());
    expect(evaluate(rule.expression, profileDeletion('alice'))).to.equal(false);
    expect(evaluate(rule.expression, profileDeletion('alice', { [ALLOW_DELETE_ANNOTATION]: 'true' }))).to.equal(true);
    expect(evaluate(rule.messageExpression, profileDeletion('alice'))).to.include(
      `kubeflow-upgrader refused to delete Profile alice`,
    );
  });

  it('builds labelled policies and Deny bindings from config', () => {
    const all = desiredGuardObjects({ protectCrds: true, protectedCrdGroups: ['kubeflow.org'], protectProfiles: true });
    expect(all.map((o) => `${o.object.kind}/${o.object.metadata.name}`)).to.deep.equal([
      `ValidatingAdmissionPolicy/${CRD_GUARD_NAME}`,
      `ValidatingAdmissionPolicyBinding/${CRD_GUARD_NAME}`,
      `ValidatingAdmissionPolicy/${PROFILE_GUARD_NAME}`,
      `ValidatingAdmissionPolicyBinding/${PROFILE_GUARD_NAME}`,
    ]);
    for (const { object } of all) {
      expect(object.apiVersion).to.equal('admissionregistration.k8s.io/v1');
      expect(object.metadata.labels?.[MANAGED_BY_LABEL]).to.equal('kubeflow-upgrader');
    }
    const binding = all[1]?.object.spec as { policyName: string; validationActions: string[] };
    expect(binding).to.deep.equal({ policyName: CRD_GUARD_NAME, validationActions: ['Deny'] });
    expect(desiredGuardObjects({ protectCrds: false, protectedCrdGroups: ['kubeflow.org'], protectProfiles: false })).to.deep.equal([]);
  });

  it('parses protected-crd-groups and refuses a malformed entry in one sentence', () => {
    expect(parseProtectedGroups(' serving.kserve.io,kubeflow.org,, kubeflow.org ')).to.deep.equal(['kubeflow.org', 'serving.kserve.io']);
    expect(() => parseProtectedGroups('kubeflow.org,Kubeflow Org')).to.throw('protected-crd-groups entry "Kubeflow Org" is not an API group name');
    expect(guardOptionsFromConfig({ protectCrds: true, protectedCrdGroups: 'kubeflow.org,serving.kserve.io', protectProfiles: false })).to.deep.equal({
      protectCrds: true,
      protectedCrdGroups: ['kubeflow.org', 'serving.kserve.io'],
      protectProfiles: false,
    });
  });
});
