import { expect } from 'chai';
import type { ApiResource } from '../../src/kube/types.ts';
import { backupDecision } from '../../src/kubeflow/backup-selection.ts';
import { notStateReason, stateResources } from '../../src/kubeflow/kinds.ts';
import { parseResourceFilter } from '../../src/kubeflow/resource-filters.ts';
import { runtimeKinds } from '../../src/kubeflow/runtime-kinds.ts';

const served = (group: string, resource: string, kind: string, namespaced = true, verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']): ApiResource =>
  ({ group, version: 'v1', resource, kind, namespaced, verbs, preferredVersion: 'v1', versions: ['v1'] });

describe('state kinds, discovered', () => {
  const discovered = [
    served('', 'pods', 'Pod'),
    served('', 'limitranges', 'LimitRange'),
    served('networking.k8s.io', 'networkpolicies', 'NetworkPolicy'),
    served('argoproj.io', 'workflowtemplates', 'WorkflowTemplate'),
    served('argoproj.io', 'workflows', 'Workflow'),
    served('', 'nodes', 'Node', false),
    served('kubeflow.org', 'profiles', 'Profile', false),
    served('authorization.k8s.io', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, ['create']),
    served('metrics.k8s.io', 'pods', 'PodMetrics', true, ['get', 'list']),
    served('coordination.k8s.io', 'leases', 'Lease'),
  ];

  it('keeps every namespaced kind that can be listed, read and created, and Profiles, in a stable order', () => {
    expect(stateResources(discovered).map((r) => `${r.resource}.${r.group}`)).to.deep.equal([
      'limitranges.', 'workflowtemplates.argoproj.io', 'profiles.kubeflow.org', 'networkpolicies.networking.k8s.io',
    ]);
  });

  it('says why a served kind holds no state', () => {
    expect(notStateReason(served('', 'nodes', 'Node', false))).to.match(/cluster-scoped/);
    expect(notStateReason(served('metrics.k8s.io', 'pods', 'PodMetrics', true, ['get', 'list']))).to.equal('pods.metrics.k8s.io is served without the verbs create, which a backup and a restore need');
    expect(notStateReason(served('', 'events', 'Event'))).to.match(/record what happened/);
  });

  it('gives every runtime kind a reason of its own', () => {
    for (const kind of runtimeKinds) expect(kind.why, kind.kind).to.match(/\w+ \w+/);
    expect(new Set(runtimeKinds.map((k) => `${k.group}/${k.kind}`)).size).to.equal(runtimeKinds.length);
  });

  it('keeps a discovered kind nobody named, and include-resources / exclude-resources still apply to it', () => {
    const policy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny', namespace: 'alice' }, spec: { podSelector: {} } };
    const namespaces = new Set(['alice']);
    expect(backupDecision(policy, { namespaces }, 'networkpolicies')).to.deep.equal({ keep: true, category: 'state', reason: 'state: NetworkPolicy in profile namespace alice' });
    expect(backupDecision(policy, { namespaces, filter: parseResourceFilter('', 'networkpolicies.networking.k8s.io') }, 'networkpolicies'))
      .to.deep.equal({ keep: false, category: 'filtered', reason: 'excluded by exclude-resources (networkpolicies.networking.k8s.io)' });
    expect(backupDecision(policy, { namespaces, filter: parseResourceFilter('notebooks.kubeflow.org', '') }, 'networkpolicies'))
      .to.deep.equal({ keep: false, category: 'filtered', reason: 'not in include-resources (notebooks.kubeflow.org)' });
  });
});
