// The pure parts of the embedded server's RBAC against upstream's own cases: the verb and attributes of a request
// (staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo_test.go), rule matching (plugin/pkg/auth/authorizer/
// rbac/rbac_test.go, pkg/apis/rbac/v1/evaluation_helpers.go), coverage (staging/src/k8s.io/component-helpers/auth/rbac/
// validation/policy_comparator_test.go) and the bootstrap edit role's grants (bootstrappolicy testdata).
import { expect } from 'chai';
import { requestInfo } from './request-info.ts';
import { compactRules, compactString, covers, ruleAllows, type Attributes, type PolicyRule } from './rules.ts';
import { forbiddenMessage } from './authorizer.ts';
import { aggregatedRules } from './aggregation.ts';
import { bootstrapClusterRoles } from './install.ts';

const info = (method: string, path: string) => requestInfo(method, new URL(path, 'https://cluster'));
const pick = (method: string, path: string) => {
  const i = info(method, path);
  return [i.verb, i.apiGroup, i.namespace, i.resource, i.subresource, i.name, i.isResourceRequest];
};

describe('RBAC: request attributes (requestinfo.go)', () => {
  const cases: Array<[string, string, unknown[]]> = [
    ['GET', '/api/v1/namespaces/alice/secrets', ['list', '', 'alice', 'secrets', '', '', true]],
    ['GET', '/api/v1/namespaces/alice/secrets?watch=true', ['watch', '', 'alice', 'secrets', '', '', true]],
    ['GET', '/api/v1/secrets?watch=1', ['watch', '', '', 'secrets', '', '', true]],
    ['GET', '/api/v1/namespaces/alice/secrets?fieldSelector=metadata.name%3Dtoken', ['list', '', 'alice', 'secrets', '', 'token', true]],
    ['GET', '/api/v1/namespaces/alice/pods/nb-0/log', ['get', '', 'alice', 'pods', 'log', 'nb-0', true]],
    ['POST', '/api/v1/namespaces/alice/pods/nb-0/exec', ['create', '', 'alice', 'pods', 'exec', 'nb-0', true]],
    ['POST', '/apis/batch/v1/namespaces/alice/jobs', ['create', 'batch', 'alice', 'jobs', '', '', true]],
    ['DELETE', '/apis/batch/v1/namespaces/alice/jobs', ['deletecollection', 'batch', 'alice', 'jobs', '', '', true]],
    ['DELETE', '/apis/batch/v1/namespaces/alice/jobs/j', ['delete', 'batch', 'alice', 'jobs', '', 'j', true]],
    ['PATCH', '/apis/kubeflow.org/v1/profiles/alice', ['patch', 'kubeflow.org', '', 'profiles', '', 'alice', true]],
    ['PUT', '/apis/apps/v1/namespaces/alice/statefulsets/s/scale', ['update', 'apps', 'alice', 'statefulsets', 'scale', 's', true]],
    // a namespace is its own namespace; status and finalize are its subresources
    ['GET', '/api/v1/namespaces/alice', ['get', '', 'alice', 'namespaces', '', 'alice', true]],
    ['PUT', '/api/v1/namespaces/alice/finalize', ['update', '', 'alice', 'namespaces', 'finalize', 'alice', true]],
    ['GET', '/api/v1/namespaces', ['list', '', '', 'namespaces', '', '', true]],
    // discovery and the rest are non-resource requests with the lowercased method
    ['GET', '/api', ['get', '', '', '', '', '', false]],
    ['GET', '/apis/kubeflow.org', ['get', '', '', '', '', '', false]],
    ['GET', '/apis/kubeflow.org/v1', ['get', '', '', '', '', '', false]],
    ['POST', '/version', ['post', '', '', '', '', '', false]],
  ];
  for (const [method, path, want] of cases) it(`${method} ${path}`, () => expect(pick(method, path)).to.deep.equal(want));
});

const attrs = (verb: string, resource: string, more: Partial<Attributes> = {}): Attributes => ({
  user: { username: 'u', groups: [] }, verb, isResourceRequest: true, path: '', apiGroup: '', namespace: 'ns', resource, subresource: '', name: '', ...more,
});

describe('RBAC: one rule against one request (rbac.go RuleAllows)', () => {
  it('matches subresources by their full name, or by */<subresource>, and * everything', () => {
    const logs: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] };
    expect(ruleAllows(attrs('get', 'pods', { subresource: 'log', name: 'p' }), logs)).to.equal(true);
    expect(ruleAllows(attrs('get', 'pods', { name: 'p' }), logs)).to.equal(false);
    expect(ruleAllows(attrs('get', 'pods', { subresource: 'log' }), { verbs: ['get'], apiGroups: [''], resources: ['pods'] })).to.equal(false);
    expect(ruleAllows(attrs('update', 'statefulsets', { apiGroup: 'apps', subresource: 'scale' }), { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] })).to.equal(true);
    expect(ruleAllows(attrs('create', 'pods', { subresource: 'exec' }), { verbs: ['*'], apiGroups: ['*'], resources: ['*'] })).to.equal(true);
  });

  it('limits by resourceNames: a list or create (no name) is not matched by a named rule', () => {
    const named: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'], resourceNames: ['token'] };
    expect(ruleAllows(attrs('get', 'secrets', { name: 'token' }), named)).to.equal(true);
    expect(ruleAllows(attrs('get', 'secrets', { name: 'other' }), named)).to.equal(false);
    expect(ruleAllows(attrs('list', 'secrets'), named)).to.equal(false);
  });

  it('matches non-resource URLs exactly or by a trailing * prefix', () => {
    const rule: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/api', '/apis/*'] };
    const path = (p: string) => ({ ...attrs('get', ''), isResourceRequest: false, path: p });
    expect(ruleAllows(path('/api'), rule)).to.equal(true);
    expect(ruleAllows(path('/api/v1'), rule)).to.equal(false);
    expect(ruleAllows(path('/apis/kubeflow.org/v1'), rule)).to.equal(true);
  });
});

describe('RBAC: coverage and the escalation message (policy_comparator.go, policy_compact.go)', () => {
  it('covers a subresource by */<subresource>, not by its parent resource', () => {
    expect(covers([{ verbs: ['get'], apiGroups: [''], resources: ['*/log'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }]).covered).to.equal(true);
    expect(covers([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }]).covered).to.equal(false);
  });

  it('names the missing rules compacted per resource, as CompactString prints them', () => {
    const { missing } = covers([{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }], [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets', 'nodes'] }]);
    expect(compactRules(missing).map(compactString).sort()).to.deep.equal(['{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}', '{APIGroups:[""], Resources:["secrets"], Verbs:["list"]}']);
  });

  it('words a refusal as forbiddenMessage does, for resources and paths', () => {
    expect(forbiddenMessage(attrs('create', 'pods', { subresource: 'exec', name: 'p' }))).to.equal('User "u" cannot create resource "pods/exec" in API group "" in the namespace "ns"');
    expect(forbiddenMessage(attrs('list', 'secrets', { namespace: '' }))).to.equal('User "u" cannot list resource "secrets" in API group "" at the cluster scope');
    expect(forbiddenMessage({ ...attrs('get', ''), isResourceRequest: false, path: '/metrics' })).to.equal('User "u" cannot get path "/metrics"');
  });
});

describe('RBAC: bootstrap edit, aggregated (bootstrappolicy, clusterroleaggregation)', () => {
  // the controller's fixed point: each aggregated role recomputed until none changes (view before edit does not matter)
  const roles = bootstrapClusterRoles() as Array<ReturnType<typeof bootstrapClusterRoles>[number] & { rules?: PolicyRule[] }>;
  for (let changed = true; changed;) {
    changed = false;
    for (const role of roles) {
      if (!(role as { aggregationRule?: unknown }).aggregationRule) continue;
      const next = aggregatedRules(role, roles);
      if (JSON.stringify(next) !== JSON.stringify(role.rules ?? [])) {
        role.rules = next;
        changed = true;
      }
    }
  }
  const rulesOf = (name: string) => roles.find((r) => r.metadata.name === name)!.rules ?? [];
  const allows = (name: string, a: Attributes) => rulesOf(name).some((r) => ruleAllows(a, r));

  it('edit grants what system:aggregate-to-edit and, through view, system:aggregate-to-view grant', () => {
    expect(allows('edit', attrs('get', 'secrets'))).to.equal(true);
    expect(allows('edit', attrs('list', 'pods'))).to.equal(true);
    expect(allows('edit', attrs('get', 'pods', { subresource: 'log', name: 'p' }))).to.equal(true);
    expect(allows('edit', attrs('create', 'pods', { subresource: 'exec', name: 'p' }))).to.equal(true);
    expect(allows('edit', attrs('create', 'jobs', { apiGroup: 'batch' }))).to.equal(true);
    expect(allows('edit', attrs('delete', 'jobs', { apiGroup: 'batch', name: 'j' }))).to.equal(true);
    expect(allows('edit', attrs('create', 'roles', { apiGroup: 'rbac.authorization.k8s.io' }))).to.equal(false);
    expect(allows('edit', attrs('create', 'resourcequotas'))).to.equal(false);
  });

  it('view reads pods but not secrets; admin adds roles and rolebindings', () => {
    expect(allows('view', attrs('list', 'pods'))).to.equal(true);
    expect(allows('view', attrs('get', 'secrets'))).to.equal(false);
    expect(allows('admin', attrs('create', 'rolebindings', { apiGroup: 'rbac.authorization.k8s.io' }))).to.equal(true);
    expect(allows('admin', attrs('get', 'secrets'))).to.equal(true);
  });
});
