// The blue/green scenario of one release step (from → to, adjacent or skipping releases), as mocha tests: run on the
// release profiles (tests/restore/releases.process.test.ts) and, in CI, on the real CRD files (tests/releases/real-crds.suite.ts).
// What the target must do comes from RELEASE_CHANGES (upstream facts, checked against the real CRD files by the suite).
import { expect } from 'chai';
import { RestoreRefusedError } from '../../src/restore/errors.ts';
import type { Release } from '../support/cluster/kubeflow/releases.ts';
import { changesBetween, expectedDrops, expectedUnserved, startScenario, stepObjects, type CrdSource, type Scenario } from './release-scenario.ts';

/** the value at a dotted path with [i] indexes, or undefined */
function at(object: unknown, path: string): unknown {
  let value: unknown = object;
  for (const part of path.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

export function releaseStep(source: CrdSource, from: Release, to: Release): void {
  describe(`blue/green ${from} → ${to} (${source.kind === 'files' ? 'real CRD files' : 'release profiles'})`, function () {
    this.timeout(180_000);
    let s: Scenario;
    const unserved = expectedUnserved(from, to);
    before(async () => { s = await startScenario(source, from, to, stepObjects(from, to)); });
    after(async () => s?.stop());

    it('the dry run lists exactly the refusals and the drops, and writes nothing', async () => {
      const before = s.kubeB.requestCounts();
      const outcome = await s.restore({ dryRun: true });
      const after = s.kubeB.requestCounts();
      expect(after.writes - before.writes, 'writes').to.equal(0);
      expect(after.dryRuns - before.dryRuns, 'every object asked with dryRun=All').to.be.greaterThan(0);
      expect([...outcome.unserved].sort()).to.deep.equal(unserved);
      expect([...outcome.dropped].sort()).to.deep.equal(expectedDrops(from, to, s.namespace, true));
      expect(outcome.totals.failed, outcome.failures.join('\n')).to.equal(unserved.length);
      expect(outcome.failures.every((f) => f.includes('is not served by the target'))).to.equal(true);
      expect(outcome.mappings).to.deep.equal([]);
    });

    it('the real restore refuses a backup with a kind the target does not serve, and writes nothing', async function () {
      if (unserved.length === 0) {
        const outcome = await s.restore({ dryRun: true });
        expect(outcome.unserved, 'no kind goes in this step: nothing to refuse').to.deep.equal([]);
        return;
      }
      const before = s.kubeB.requestCounts().writes;
      const error = await s.restore().then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(RestoreRefusedError);
      for (const kind of unserved) expect((error as Error).message).to.contain(kind);
      expect((error as Error).message).to.contain('The target cluster does not serve ');
      expect((error as Error).message).to.contain('Nothing was restored.');
      expect(s.kubeB.requestCounts().writes).to.equal(before);
    });

    it('with skip-unserved it restores the rest, names what it left and every dropped field', async () => {
      const outcome = await s.restore({ skipUnserved: true });
      expect(outcome.totals.failed, outcome.failures.join('\n')).to.equal(0);
      expect(outcome.totals.created).to.be.greaterThan(0);
      expect(outcome.totals.skipped).to.be.at.least(unserved.length);
      expect([...outcome.unserved].sort()).to.deep.equal(unserved);
      expect([...outcome.dropped].sort()).to.deep.equal(expectedDrops(from, to, s.namespace, false));
      for (const drop of expectedDrops(from, to, s.namespace, false)) expect(outcome.warnings).to.include(drop);
      for (const kind of unserved) expect(outcome.warnings.some((w) => w.startsWith('skip-unserved:') && w.includes(kind)), kind).to.equal(true);
    });

    it('on the target: the objects of served kinds are there without the dropped fields, the unserved ones are not', async () => {
      const objects = stepObjects(from, to)(s.namespace);
      for (const object of objects) {
        const group = object.apiVersion.split('/')[0]!;
        const def = s.b.cluster.resourceByKind(group, object.kind);
        if (changesBetween(from, to).some((c) => 'unserved' in c.change && c.change.unserved.kind === object.kind && c.change.unserved.crd.endsWith(`.${group}`))) {
          expect(def, `${object.kind}: the target serves no such kind`).to.equal(undefined);
          continue;
        }
        const stored = s.b.cluster.get(def!, object.metadata.name!, s.namespace);
        expect(stored, `${object.kind} ${s.namespace}/${object.metadata.name} restored`).not.to.equal(undefined);
        for (const c of changesBetween(from, to)) {
          if (!('dropped' in c.change) || c.change.dropped.object !== object.metadata.name) continue;
          expect(at(object, c.change.dropped.path), `the backup held ${c.change.dropped.path}`).not.to.equal(undefined);
          expect(at(stored, c.change.dropped.path), `${c.change.dropped.path} on the target`).to.equal(undefined);
        }
        expect(at(stored, 'spec.predictor.model.storageUri') ?? 'n/a').to.equal(at(object, 'spec.predictor.model.storageUri') ?? 'n/a');
      }
    });

    it('a rerun with conflict-policy=update converges: 0 writes, the dropped field still named', async () => {
      const before = s.kubeB.requestCounts().writes;
      const outcome = await s.restore({ skipUnserved: true, conflictPolicy: 'update' });
      expect(s.kubeB.requestCounts().writes - before, 'writes').to.equal(0);
      expect(outcome.totals).to.deep.include({ created: 0, updated: 0, failed: 0 });
      expect([...outcome.dropped].sort()).to.deep.equal(expectedDrops(from, to, s.namespace, false));
    });
  });
}
