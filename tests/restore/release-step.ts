// The blue/green scenario of one release step, as mocha tests: run on the release profiles (tests/restore/releases.process.test.ts)
// and, in CI, on the real CRD files (tests/releases/real-crds.suite.ts).
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
