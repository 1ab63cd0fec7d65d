// Blue/green across CKF releases on the release profiles: a backup of release N restored into a fresh N+1. The dry
// run asks the target (dryRun=All) and lists exactly what it refuses and drops, writing nothing; the real restore
// refuses a backup holding a kind the target serves in no version, and writes nothing; skip-unserved restores the
// rest and names what it left; every dropped field is named; a rerun with conflict-policy=update writes nothing.
// The CI release suite (tests/releases/real-crds.test.ts) runs the same scenario on the real CRD files.
import { expect } from 'chai';
import { RestoreRefusedError } from '../../src/restore/errors.ts';
import type { Release } from '../support/cluster/kubeflow/releases.ts';
import { expectedDrops, expectedUnserved, startScenario, stepObjects, type CrdSource, type Scenario } from './release-scenario.ts';

export function releaseStep(source: CrdSource, from: Release, to: Release): void {
  describe(`blue/green ${from} → ${to} (${source.kind === 'files' ? 'real CRD files' : 'release profiles'})`, function () {
    this.timeout(180_000);
    let s: Scenario;
    before(async () => { s = await startScenario(source, from, to, stepObjects(from)); });
    after(async () => s?.stop());

    it('the dry run lists exactly the refusals and the drops, and writes nothing', async () => {
      const before = s.kubeB.requestCounts();
      const outcome = await s.restore({ dryRun: true });
      const after = s.kubeB.requestCounts();
      expect(after.writes - before.writes, 'writes').to.equal(0);
      expect(after.dryRuns - before.dryRuns, 'every object asked with dryRun=All').to.be.greaterThan(0);
      expect(outcome.unserved).to.deep.equal(expectedUnserved(from));
      expect(outcome.dropped).to.deep.equal(expectedDrops(from, s.namespace, true));
      const unserved = expectedUnserved(from).length;
      expect(outcome.totals.failed, outcome.failures.join('\n')).to.equal(unserved);
      expect(outcome.failures.every((f) => f.includes('is not served by the target'))).to.equal(true);
      expect(outcome.mappings).to.deep.equal([]);
    });

    it('the real restore refuses a backup with a kind the target does not serve, and writes nothing', async function () {
      if (expectedUnserved(from).length === 0) {
        const outcome = await s.restore({ dryRun: true });
        expect(outcome.unserved, 'no kind goes in this step: nothing to refuse').to.deep.equal([]);
        return;
      }
      const before = s.kubeB.requestCounts().writes;
      const error = await s.restore().then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(RestoreRefusedError);
      expect((error as Error).message).to.contain(`The target cluster does not serve ${expectedUnserved(from)[0]}`);
      expect((error as Error).message).to.contain('Nothing was restored.');
      expect(s.kubeB.requestCounts().writes).to.equal(before);
    });

    it('with skip-unserved it restores the rest, names what it left and every dropped field', async () => {
      const outcome = await s.restore({ skipUnserved: true });
      expect(outcome.totals.failed, outcome.failures.join('\n')).to.equal(0);
      expect(outcome.totals.created).to.be.greaterThan(0);
      expect(outcome.totals.skipped).to.be.at.least(expectedUnserved(from).length);
      expect(outcome.unserved).to.deep.equal(expectedUnserved(from));
      expect(outcome.dropped).to.deep.equal(expectedDrops(from, s.namespace, false));
      for (const drop of expectedDrops(from, s.namespace, false)) expect(outcome.warnings).to.include(drop);
      if (expectedUnserved(from).length) expect(outcome.warnings.some((w) => w.startsWith('skip-unserved:') && w.includes(expectedUnserved(from)[0]!))).to.equal(true);
    });

    it('a rerun with conflict-policy=update converges: 0 writes, the dropped field still named', async () => {
      const before = s.kubeB.requestCounts().writes;
      const outcome = await s.restore({ skipUnserved: true, conflictPolicy: 'update' });
      expect(s.kubeB.requestCounts().writes - before, 'writes').to.equal(0);
      expect(outcome.totals).to.deep.include({ created: 0, updated: 0, failed: 0 });
      expect(outcome.dropped).to.deep.equal(expectedDrops(from, s.namespace, false));
    });
  });
}

describe('blue/green across CKF releases (release profiles)', () => {
  const profiles: CrdSource = { kind: 'profiles' };
  releaseStep(profiles, '1.8', '1.9');
  releaseStep(profiles, '1.9', '1.10');
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
