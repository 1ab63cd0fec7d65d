// Crash consistency of the restore: the real dispatch of restore-state into a fresh cluster is SIGKILLed while
// Profiles are being created and while a namespaced kind (Secrets, Notebooks) is being created — each moment found
// from outside the product, by a CREATE held at the API server with its latency fault — and the same restore is
// rerun. It converges: the user state equals the source's, no object exists twice and the counts match, and a second
// rerun writes nothing. The held CREATE lands after the kill (the server acted, the killed client never saw it),
// while the rerun runs.
import { expect } from 'chai';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { collectUserState, compareStates, describeDifferences, identityOf } from '../../src/restore/compare.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { startDispatch } from './killable-dispatch.ts';
import { backupRequest, kubeAt, storeAt } from './support.ts';
import { backupStore } from '../support/backup-store.ts';

const BUCKET = 'restore-crash';
const SEED = 11;

function counts(objects: readonly KubeObject[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of objects) out[o.kind] = (out[o.kind] ?? 0) + 1;
  return out;
}

describe('reliability: SIGKILL during restore-state, then rerun: converges, no duplicates, then no writes', function () {
  this.timeout(60_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let source: RunningCluster;
  let sourceState: KubeObject[];
  let objects: number;
  const targets: RunningCluster[] = [];

  before(async () => {
    [charmDir, s3, source] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 3, seed: SEED })]);
    const kube = await kubeAt(source.kubeconfigPath);
    try {
      objects = (await runBackup(kube, backupStore(storeAt(s3.endpoint, BUCKET, 'kf')), backupRequest())).objects;
      sourceState = await collectUserState(kube);
    } finally {
      kube.close();
    }
  });
  after(async () => {
    await Promise.all([s3?.stop(), source?.stop(), ...targets.map((t) => t.stop())]);
  });

  function state(): FakeJujuState {
    const relation = s3Relation(track1Data({ endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, BUCKET, { path: 'kf' }));
    return emptyState({ relations: [relation], actionParams: { 'backup-id': 'latest' }, config: { 'restore-wait-timeout': 30 } });
  }

  async function userState(target: RunningCluster): Promise<KubeObject[]> {
    const kube = await kubeAt(target.kubeconfigPath);
    try {
      return await collectUserState(kube);
    } finally {
      kube.close();
    }
  }

  /** The resourceVersion of every user object once two readings a second apart agree (at most 20 s). */
  async function quietVersions(target: RunningCluster): Promise<Map<string, string | undefined>> {
    const read = async () => new Map((await userState(target)).map((o) => [identityOf(o), o.metadata.resourceVersion]));
    let last = await read();
    for (let attempt = 0; attempt < 20; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const now = await read();
      if ([...now].every(([id, version]) => last.get(id) === version) && now.size === last.size) return now;
      last = now;
    }
    throw new Error('the cluster did not settle within 20 s after the rerun');
  }

  for (const [point, plural] of [['while Profiles are being created', '/profiles'], ['while Secrets are being created', '/secrets'], ['while Notebooks are being created', '/notebooks']] as const) {
    it(`killed ${point}: the rerun converges with no duplicates, and a second rerun writes nothing`, async () => {
      const target = await startCluster({ seed: SEED });
      targets.push(target);
      const event = { event: 'actions/restore-state' as const, env: { KUBECONFIG: target.kubeconfigPath } };
      // Every CREATE of this kind is held by the API server: the kill lands while the restore is writing them.
      target.faults.latencyMs = 2_000;
      target.faults.only({ method: 'POST', pathIncludes: plural }).setRate('latency', 1);
      const running = startDispatch(charmDir, state(), event);
      try {
        const ended = await Promise.race([
          (async () => {
            while (target.faults.injected.latency === 0) await new Promise((r) => setTimeout(r, 10));
            return false;
          })(),
          running.finished.then(() => true),
        ]);
        expect(ended, 'the restore ended before the chosen moment').to.equal(false);
        await running.kill();
        expect(running.state().actionResults.created, 'a killed run reported a result').to.equal(undefined);
      } finally {
        running.cleanup();
        target.faults.clear();
      }

      const rerun = await runDispatch(charmDir, state(), event);
      expect(rerun.state.actionFailure, rerun.stderr).to.equal(undefined);
      expect(rerun.exitCode).to.equal(0);
      expect(rerun.state.actionResults).to.include({ failed: '0' });

      const restored = await userState(target);
      expect(describeDifferences(compareStates(sourceState, restored))).to.deep.equal([]);
      // No object twice: identities are unique, no user object was named by the server, and the counts match.
      const ids = restored.map(identityOf);
      expect(new Set(ids).size).to.equal(ids.length);
      const generated = (list: readonly KubeObject[]) => list.filter((o) => o.metadata.generateName !== undefined).map(identityOf).sort();
      expect(generated(restored)).to.deep.equal(generated(sourceState));
      expect(counts(restored)).to.deep.equal(counts(sourceState));
      expect(restored).to.have.length(sourceState.length);

      // A second rerun finds everything in place: it reports no writes and no object's resourceVersion moved. The
      // simulated controllers go on after a restore (Katib starts an unfinished Experiment's Trials once its Suggestion
      // is up), so the versions are taken once the cluster is quiet: a move after that is the rerun's.
      const versions = await quietVersions(target);
      const again = await runDispatch(charmDir, state(), event);
      expect(again.state.actionFailure, again.stderr).to.equal(undefined);
      expect(again.state.actionResults).to.include({ created: '0', updated: '0', failed: '0', unchanged: String(objects) });
      const after = await userState(target);
      expect(new Map(after.map((o) => [identityOf(o), o.metadata.resourceVersion]))).to.deep.equal(versions);
      await target.stop();
      targets.splice(targets.indexOf(target), 1);
    });
  }
});
