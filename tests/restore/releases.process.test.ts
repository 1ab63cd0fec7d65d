// Blue/green across CKF releases on the release profiles: a backup of release N restored into a fresh release M, for
// every later M (N+1, and the skips N+2, N+3). The dry
// run asks the target (dryRun=All) and lists exactly what it refuses and drops, writing nothing; the real restore
// refuses a backup holding a kind the target serves in no version, and writes nothing; skip-unserved restores the
// rest and names what it left; every dropped field is named; a rerun with conflict-policy=update writes nothing.
// The CI release suite (tests/releases/real-crds.suite.ts) runs the same scenario on the real CRD files.
import { expect } from 'chai';
import { startScenario, type CrdSource, type Scenario } from './release-scenario.ts';
import { releaseStep } from './release-step.ts';
import { forwardPairs } from '../support/cluster/kubeflow/releases.ts';
import { upstreamFacts } from '../releases/upstream-facts.ts';

describe('blue/green across CKF releases (release profiles)', () => {
  const profiles: CrdSource = { kind: 'profiles' };
  for (const [from, to] of forwardPairs()) {
    upstreamFacts(profiles, from, to);
    releaseStep(profiles, from, to);
  }
});

describe('a kind whose archived version the target does not serve, but another (conversion None)', function () {
  this.timeout(180_000);
  // The kubeflow-profiles charm of CKF 1.8 and 1.9 applies its own AuthorizationPolicy CRD, serving v1beta1 only; a
  // backup from a cluster whose policies were listed at v1 (istio's CRD, as in 1.11) then needs the mapping.
  let s: Scenario;
  before(async () => {
    s = await startScenario({ kind: 'profiles' }, '1.11', '1.9', () => [], 1);
    const crdRef = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };
    const crd = s.b.cluster.get(crdRef, 'authorizationpolicies.security.istio.io')!;
    const spec = crd.spec as { versions: Array<{ name: string }> };
    s.b.cluster.update(crdRef, { ...crd, spec: { ...spec, versions: spec.versions.filter((v) => v.name === 'v1beta1') } });
  });
  after(async () => s?.stop());

  it('is restored through the served version, and the results name the mapping', async () => {
    const outcome = await s.restore();
    expect(outcome.mappings).to.deep.equal(['authorizationpolicies.security.istio.io v1 → v1beta1']);
    expect(outcome.unserved).to.deep.equal([]);
    expect(outcome.totals.failed, outcome.failures.join('\n')).to.equal(0);
    expect(outcome.byKind['authorizationpolicies.security.istio.io']?.created).to.be.greaterThan(0);
    expect(outcome.warnings).to.include('authorizationpolicies.security.istio.io v1 → v1beta1: the target does not serve the archived version, so these objects are restored through the served one (conversion None)');
    const stored = s.b.cluster.list({ group: 'security.istio.io', resource: 'authorizationpolicies' }, { namespace: s.namespace });
    expect(stored.map((o) => o.apiVersion)).to.include('security.istio.io/v1beta1');
  });
});
