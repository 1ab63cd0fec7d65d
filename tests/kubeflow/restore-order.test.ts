// The restore order (restore-order.ts, derived from known-kinds.ts), one row per ordering rule: which of two
// resources goes first and why, and which resources are workloads that wait for the namespace's PodDefaults.
import { expect } from 'chai';
import { compareForRestore, isWorkloadStep, restoreOrder, restorePriority } from '../../src/kubeflow/restore-order.ts';

type Resource = { group: string; resource: string };
const r = (spelled: string): Resource => {
  const dot = spelled.indexOf('.');
  return dot < 0 ? { group: '', resource: spelled } : { group: spelled.slice(dot + 1), resource: spelled.slice(0, dot) };
};

// [first, then, why]: compareForRestore puts `first` before `then`, whichever way round it is asked
const before: [string, string, string][] = [
  ['profiles.kubeflow.org', 'serviceaccounts', 'Profiles first: their namespaces exist only through them'],
  ['profiles.kubeflow.org', 'deployments.apps', 'Profiles before kinds the order does not know'],
  ['serviceaccounts', 'secrets', 'identities before the credentials that name them'],
  ['secrets', 'persistentvolumeclaims', 'credentials before storage'],
  ['limitranges', 'persistentvolumeclaims', 'limits before the PVCs the API server applies them to at creation'],
  ['persistentvolumeclaims', 'rolebindings.rbac.authorization.k8s.io', 'storage before RBAC'],
  ['roles.rbac.authorization.k8s.io', 'rolebindings.rbac.authorization.k8s.io', 'a Role before the RoleBinding that names it'],
  ['rolebindings.rbac.authorization.k8s.io', 'notebooks.kubeflow.org', 'RBAC before the workloads users reach through it'],
  ['authorizationpolicies.security.istio.io', 'notebooks.kubeflow.org', 'Istio policies before the workloads they admit traffic to'],
  ['poddefaults.kubeflow.org', 'notebooks.kubeflow.org', 'PodDefaults before what makes Pods (admission-webhook changes only new Pods)'],
  ['poddefaults.kubeflow.org', 'pytorchjobs.kubeflow.org', 'PodDefaults before training jobs'],
  ['notebooks.kubeflow.org', 'gadgets.alpha.io', 'every listed kind before every unlisted one'],
  ['notebooks.kubeflow.org', 'notebooks.other.io', 'a listed resource name under another group is unlisted'],
  ['gadgets.alpha.io', 'widgets.zeta.io', 'unlisted kinds alphabetically by resource.group, as Velero does'],
  ['deployments.apps', 'deployments.other.io', 'unlisted kinds of one resource name alphabetically by group'],
];

// [resource, waits for PodDefaults]: everything ordered after the PodDefaults, unknown kinds included
const workloads: [string, boolean][] = [
  ['notebooks.kubeflow.org', true],
  ['experiments.kubeflow.org', true],
  ['pytorchjobs.kubeflow.org', true],
  ['inferenceservices.serving.kserve.io', true],
  ['tensorboards.tensorboard.kubeflow.org', true],
  ['deployments.apps', true],
  ['workflowtemplates.argoproj.io', true],
  ['poddefaults.kubeflow.org', false],
  ['limitranges', false],
  ['secrets', false],
  ['persistentvolumeclaims', false],
  ['rolebindings.rbac.authorization.k8s.io', false],
  ['networkpolicies.networking.k8s.io', false],
  ['profiles.kubeflow.org', false],
];

describe('kubeflow/restore-order', () => {
  it('starts with the Profiles, in phase 1', () => expect(restoreOrder[0]).to.include({ phase: 1, resource: 'profiles' }));

  it('sorts a mixed list: Profiles, credentials and storage, RBAC, workloads, then unlisted kinds by name', () => {
    const resources = ['notebooks.kubeflow.org', 'widgets.zeta.io', 'persistentvolumeclaims', 'gadgets.alpha.io',
      'rolebindings.rbac.authorization.k8s.io', 'secrets', 'profiles.kubeflow.org'].map(r);
    expect(resources.sort(compareForRestore).map((x) => x.resource))
      .to.deep.equal(['profiles', 'secrets', 'persistentvolumeclaims', 'rolebindings', 'notebooks', 'gadgets', 'widgets']);
  });

  it('ranks PodDefaults before Notebooks', () => {
    expect(restorePriority('kubeflow.org', 'poddefaults')).to.be.lessThan(restorePriority('kubeflow.org', 'notebooks'));
  });

  it('ranks a resource of the same name under another group as unlisted', () => {
    expect(restorePriority('other.io', 'notebooks')).to.equal(restoreOrder.length);
  });

  it('compares a resource equal to itself', () => expect(compareForRestore(r('secrets'), r('secrets'))).to.equal(0));

  for (const [first, then, why] of before) {
    it(`${first} before ${then}: ${why}`, () => {
      expect(compareForRestore(r(first), r(then))).to.be.lessThan(0);
      expect(compareForRestore(r(then), r(first))).to.be.greaterThan(0);
    });
  }

  for (const [resource, waits] of workloads) {
    it(`${resource} ${waits ? 'waits' : 'does not wait'} for the namespace's PodDefaults`, () => {
      expect(isWorkloadStep(r(resource).group, r(resource).resource)).to.equal(waits);
    });
  }
});
