// The CRD guard and the upgrade actions: the charm's hooks and actions run in process (runEvent, over the same fake
// hook tools' rules as the real ./dispatch), KUBECONFIG pointing at the embedded cluster (whose admission evaluates
// the policy's CEL), s3-integrator data pointing at s3rver. What is checked is the charm's decisions and the guard it
// leaves in the cluster, not packing; tests/reliability/secret-hygiene.process.test.ts runs these hooks through ./dispatch.
import { expect } from 'chai';
import { unitStatus, type DispatchEvent } from '../support/juju/hook-context.ts';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { S3_RELATION_ID, s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState, type FakeRelation } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { CRDS, POLICIES } from '../../src/guard/kube-port.ts';
import { CRD_GUARD_NAME } from '../../src/guard/policy.ts';

const BUCKET = 'kubeflow-backups';

async function refusal(action: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await action;
  } catch (error) {
    return error as { status: number; message: string };
  }
  throw new Error('expected the API server to refuse the request');
}

describe('CRD guard and upgrade actions (the charm in process)', function () {
  this.timeout(120_000);
  let s3: S3ServerHandle;
  let cluster: RunningCluster;
  let client: KubeClient;

  before(async () => {
    [s3, cluster] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 2, seed: 11 })]);
    client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
  });
  after(async () => {
    client?.close();
    await Promise.all([s3?.stop(), cluster?.stop()]);
  });

  function state(overrides: Partial<FakeJujuState> = {}): FakeJujuState {
    return emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))], ...overrides });
  }
  function dispatch(event: string, start: FakeJujuState): Promise<EventOutcome> {
    return runEvent(start, { event, env: { KUBECONFIG: cluster.kubeconfigPath } });
  }
  const policy = () => client.tryGet(POLICIES, CRD_GUARD_NAME);

  it('install guards the CRDs: deleting notebooks.kubeflow.org is refused and the status says so; upgrade-charm keeps it', async () => {
    const installed = await dispatch('install', state());
    expect(installed.exitCode, installed.stderr).to.equal(0);
    expect(await policy()).to.not.equal(undefined);
    const refused = await refusal(client.delete(CRDS, 'notebooks.kubeflow.org'));
    expect(refused.status).to.equal(403);
    expect(refused.message).to.include('kubeflow-upgrader refused to delete CustomResourceDefinition notebooks.kubeflow.org');
    expect(await client.tryGet(CRDS, 'notebooks.kubeflow.org')).to.not.equal(undefined);
    expect(unitStatus(installed.state)).to.include({ status: 'active' });
    expect(unitStatus(installed.state)?.message).to.include('CRDs guarded');

    const upgraded = await dispatch('upgrade-charm', state());
    expect(upgraded.exitCode, upgraded.stderr).to.equal(0);
    expect(await policy()).to.not.equal(undefined);
    expect(unitStatus(upgraded.state)?.message).to.include('CRDs guarded');
  });

  it('a unit that is not the leader leaves the guard alone and reports what it sees', async () => {
    const follower = await dispatch('update-status', state({ leader: false, config: { 'protect-crds': false } }));
    expect(follower.exitCode).to.equal(0);
    expect(await policy()).to.not.equal(undefined);
    expect(unitStatus(follower.state)?.message).to.include('CRD guard off');
  });

  it('only the hooks that own the guard write it: the status of other hooks reports a missing guard, update-status puts it back', async () => {
    await dispatch('install', state());
    await client.delete(POLICIES, CRD_GUARD_NAME);
    // each hook with what Juju gives it: the secret that changed, the relation that broke
    const kfpDb: FakeRelation = { id: 'kfp-db:9', endpoint: 'kfp-db', remoteApp: 'kfp-db', remoteUnits: [], localAppData: {}, localUnitData: {}, remoteAppData: {}, remoteUnitsData: {} };
    const secret = 'secret:d4lv0ac0000000000001';
    const guardMissing = /CRD guard (absent|drifted)|is missing/;
    const hooks: Array<{ event: DispatchEvent; start: FakeJujuState; status: RegExp }> = [
      { event: { event: 'secret-changed', secret: { id: secret } }, start: state({ secrets: { [secret]: { revisions: [{ key: 'value' }, { key: 'newer' }], tracked: 1 } } }), status: guardMissing },
      // the S3 relation going away outranks the guard in the status
      { event: { event: 's3-credentials-relation-broken', relation: S3_RELATION_ID }, start: state(), status: /relate to s3-integrator/ },
      { event: { event: 'kfp-db-relation-broken', relation: kfpDb.id }, start: state({ relations: [...state().relations, kfpDb] }), status: guardMissing },
    ];
    for (const { event: hook, start, status } of hooks) {
      const event = hook.event;
      const looked = await runEvent(start, { ...hook, env: { KUBECONFIG: cluster.kubeconfigPath } });
      expect(looked.exitCode, `${event}: ${looked.stderr}`).to.equal(0);
      expect(await policy(), event).to.equal(undefined);
      expect(unitStatus(looked.state)?.message, event).to.match(status);
    }
    const updated = await dispatch('update-status', state());
    expect(updated.exitCode, updated.stderr).to.equal(0);
    expect(await policy()).to.not.equal(undefined);
    expect(unitStatus(updated.state)?.message).to.include('CRDs guarded');
  });

  it('protect-crds=false lifts the guard, true puts it back, and the remove hook lifts it', async () => {
    const off = await dispatch('config-changed', state({ config: { 'protect-crds': false } }));
    expect(off.exitCode, off.stderr).to.equal(0);
    expect(await policy()).to.equal(undefined);
    expect(unitStatus(off.state)?.message).to.include('CRD guard off (protect-crds=false)');

    await dispatch('config-changed', state());
    expect(await policy()).to.not.equal(undefined);

    const removed = await dispatch('remove', state());
    expect(removed.exitCode, removed.stderr).to.equal(0);
    expect(await policy()).to.equal(undefined);
  });

  it('a bad protected-crd-groups blocks the unit in one sentence and does not crash the hook', async () => {
    const bad = await dispatch('config-changed', state({ config: { 'protected-crd-groups': 'kubeflow.org,Not A Group' } }));
    expect(bad.exitCode).to.equal(0);
    expect(unitStatus(bad.state)).to.deep.equal({ status: 'blocked', message: 'protected-crd-groups entry "Not A Group" is not an API group name (like kubeflow.org)' });
    expect(bad.stderr).not.to.match(/\n\s+at /);
  });

  it('pre-upgrade-check says no-go with its reasons, then go once guarded and backed up; the status shows the backup age', async () => {
    await dispatch('config-changed', state({ config: { 'protect-crds': false } }));
    const noGo = await dispatch('actions/pre-upgrade-check', state({ actionParams: {}, config: { 'protect-crds': false } }));
    expect(noGo.exitCode, noGo.stderr).to.equal(0);
    const results = noGo.state.actionResults;
    expect(results.verdict).to.equal('no-go');
    const reasons = Object.entries(results).filter(([key]) => key.startsWith('reasons.')).map(([, value]) => value);
    expect(reasons).to.include('The CRD guard is off (protect-crds=false): run juju config kubeflow-upgrader protect-crds=true and wait for active before refreshing.');
    expect(reasons).to.include('There is no complete backup: run backup-state first.');
    expect(results['crds.0.name']).to.be.a('string');

    await dispatch('config-changed', state());
    const backup = await dispatch('actions/backup-state', state({ actionParams: { 'include-volumes': false, 'include-control-plane': false } }));
    expect(backup.exitCode, backup.state.actionFailure).to.equal(0);
    expect(backup.state.unitState['last-backup']).to.include(backup.state.actionResults['backup-id']);

    const go = await dispatch('actions/pre-upgrade-check', state({ actionParams: {} }));
    expect(go.state.actionResults, JSON.stringify(go.state.actionResults)).to.include({ verdict: 'go', 'reason-count': '0' });

    // The remembered backup: update-status does not need to list S3 for it.
    const status = await dispatch('update-status', state({ unitState: backup.state.unitState }));
    expect(unitStatus(status.state)?.message).to.match(/last backup \d+s ago/);
  });

  it('migrate-stored-versions migrates every protected CRD, reports migrated and crds, and a rerun changes nothing', async () => {
    const first = await dispatch('actions/migrate-stored-versions', state({ actionParams: { crd: 'all' } }));
    expect(first.exitCode, first.state.actionFailure).to.equal(0);
    expect(first.state.actionResults.migrated).to.match(/^\d+$/);
    expect(first.state.actionResults['crds.0.name']).to.match(/\./);
    expect(first.state.unitState['migrate-stored-versions-checkpoint'] ?? '').to.equal('');

    const again = await dispatch('actions/migrate-stored-versions', state({ actionParams: { crd: 'all' } }));
    expect(again.state.actionResults.migrated).to.equal('0');
    expect(again.state.actionResults.summary).to.match(/^Nothing to migrate/);
  });

  it('migrate-stored-versions of an unknown CRD fails in one sentence', async () => {
    const unknown = await dispatch('actions/migrate-stored-versions', state({ actionParams: { crd: 'nothings.example.com' } }));
    expect(unknown.exitCode).to.not.equal(0);
    expect(unknown.state.actionFailure).to.equal('CustomResourceDefinition nothings.example.com does not exist; give a CRD name or "all".');
  });
});
