import { expect } from 'chai';
import { startCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ensureGuard, removeGuard } from '../../src/guard/install.ts';
import { CRDS, NAMESPACES, PROFILES } from '../../src/guard/kube-port.ts';
import { migrateStoredVersions } from '../../src/guard/migrate.ts';
import { DEFAULT_PROTECTED_CRD_GROUPS } from '../../src/guard/policy.ts';
import type { GuardOptions } from '../../src/guard/policy.ts';
import { preUpgradeCheck, preflightActionResults } from '../../src/guard/preflight.ts';
import type { PreflightInputs } from '../../src/guard/preflight.ts';
import { parseDuration } from '../../src/guard/duration.ts';
import { charmWording } from '../../src/charm/remedy-wording.ts';
import { cliWording } from '../../src/cli/remedy-wording.ts';

const guard: GuardOptions = { protectCrds: true, protectedCrdGroups: DEFAULT_PROTECTED_CRD_GROUPS, protectProfiles: false };
const now = new Date('2026-11-30T12:00:00Z');
const hoursAgo = (hours: number) => new Date(now.getTime() - hours * 3_600_000);
const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };

function lateCrd(storage: string, current?: KubeObject): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: current ? { ...current.metadata } : { name: 'lates.kubeflow.org', labels: { 'app.juju.is/created-by': 'late-operator' } },
    spec: {
      group: 'kubeflow.org',
      names: { plural: 'lates', singular: 'late', kind: 'Late', listKind: 'LateList' },
      scope: 'Namespaced',
      versions: ['v1alpha1', 'v1'].map((name) => ({ name, served: true, storage: name === storage, schema })),
    },
  };
}

describe('pre-upgrade-check against the embedded cluster', () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: KubeClient;

  function inputs(overrides: Partial<PreflightInputs> = {}): PreflightInputs {
    return {
      kube: client,
      guard,
      maxBackupAgeMs: parseDuration('24h'),
      checkS3: async () => {},
      newestCompleteBackup: async () => ({ id: 'kf-20261130-110000-a1b2c3', completedAt: hoursAgo(1) }),
      now: () => now,
      // pre-upgrade-check's words; the CLI's check is asserted in its own case below
      wording: charmWording,
      ...overrides,
    };
  }

  async function expectOnly(overrides: Partial<PreflightInputs>, reason: string | RegExp): Promise<void> {
    const result = await preUpgradeCheck(inputs(overrides));
    expect(result.verdict).to.equal('no-go');
    expect(result.reasons).to.have.length(1);
    if (typeof reason === 'string') expect(result.reasons[0]).to.equal(reason);
    else expect(result.reasons[0]).to.match(reason);
  }

  before(async () => {
    cluster = await startCluster({});
    client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
    await ensureGuard(client, guard);
    await client.create(PROFILES, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'alice' }, spec: { owner: { kind: 'User', name: 'alice@example.com' } } });
    await client.waitFor(NAMESPACES, 'alice', undefined, (ns) => (ns?.status as { phase?: string } | undefined)?.phase === 'Active', { timeoutMs: 10_000 });
  });

  after(async () => {
    client?.close();
    await cluster?.stop();
  });

  it('says go when every condition holds, with per-CRD findings as action-set keys', async () => {
    const result = await preUpgradeCheck(inputs());
    expect(result.reasons).to.deep.equal([]);
    expect(result.verdict).to.equal('go');
    const notebooks = result.crds.find((crd) => crd.name === 'notebooks.kubeflow.org');
    expect(notebooks).to.deep.include({ storageVersion: 'v1', storedVersions: ['v1'], established: true, owner: 'jupyter-controller', problems: [] });
    expect(result.crds.every((crd) => DEFAULT_PROTECTED_CRD_GROUPS.includes(crd.group))).to.equal(true);
    const keys = preflightActionResults(result);
    expect(keys.verdict).to.equal('go');
    expect(keys['reason-count']).to.equal('0');
    for (const key of Object.keys(keys)) for (const part of key.split('.')) expect(part).to.match(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/);
  });

  it('says no-go when the guard is not active', async () => {
    await removeGuard(client);
    try {
      await expectOnly({}, /^The CRD guard is absent \(.*\): run juju config kubeflow-upgrader protect-crds=true and wait for active\.$/);
      await expectOnly({ guard: { ...guard, protectCrds: false } }, 'The CRD guard is off (protect-crds=false): run juju config kubeflow-upgrader protect-crds=true and wait for active before refreshing.');
    } finally {
      await ensureGuard(client, guard);
    }
  });

  it('says no-go when S3 is not reachable', async () => {
    await expectOnly(
      { checkS3: async () => Promise.reject(new Error('bucket kubeflow-backups does not exist at http://127.0.0.1:9/.')) },
      'The backup store is not reachable: bucket kubeflow-backups does not exist at http://127.0.0.1:9/.',
    );
  });

  it('says no-go when the newest complete backup is older than max-backup-age, or there is none', async () => {
    await expectOnly(
      { newestCompleteBackup: async () => ({ id: 'kf-20261129-060000-0f0f0f', completedAt: hoursAgo(30) }) },
      'The newest complete backup kf-20261129-060000-0f0f0f is 1d6h old, older than max-backup-age (1d0h): run backup-state first.',
    );
    await expectOnly({ newestCompleteBackup: async () => undefined }, 'There is no complete backup: run backup-state first.');
  });

  it('words the same reasons in the CLI\'s flags and commands for `kubeflow-upgrader check`', async () => {
    const cli = (overrides: Partial<PreflightInputs>) => inputs({ wording: cliWording, ...overrides });
    await expectOnly(
      cli({ newestCompleteBackup: async () => ({ id: 'kf-20261129-060000-0f0f0f', completedAt: hoursAgo(30) }) }),
      'The newest complete backup kf-20261129-060000-0f0f0f is 1d6h old, older than --max-backup-age (1d0h): run kubeflow-upgrader backup first.',
    );
    await expectOnly(cli({ newestCompleteBackup: async () => undefined }), 'There is no complete backup: run kubeflow-upgrader backup first.');
    const id = 'kf-20261130-110000-a1b2c3';
    const unauthenticated = await preUpgradeCheck(cli({ newestCompleteBackup: async () => ({ id, completedAt: hoursAgo(1), authentication: 'not-authenticated' }) }));
    expect(unauthenticated.warnings).to.deep.equal([
      `The newest complete backup ${id} is not authenticated (it carries no HMAC): pass --encryption-key-file and run kubeflow-upgrader backup for one that is; restoring this one with a key needs its backup-id and --allow-unauthenticated.`,
    ]);
    await removeGuard(client);
    try {
      await expectOnly(cli({}), /^The CRD guard is absent \(.*\): set protect-crds=true on the kubeflow-upgrader charm and wait for active, or pass --no-guard\.$/);
    } finally {
      await ensureGuard(client, guard);
    }
  });

  it('warns, without a no-go, when the newest backup is not authenticated, and says why for each case', async () => {
    const id = 'kf-20261130-110000-a1b2c3';
    const warningsFor = async (authentication: 'authenticated' | 'not-authenticated' | 'hmac-mismatch' | 'hmac-unchecked') => {
      const result = await preUpgradeCheck(inputs({ newestCompleteBackup: async () => ({ id, completedAt: hoursAgo(1), authentication }) }));
      expect(result.verdict).to.equal('go');
      return result;
    };
    expect((await warningsFor('authenticated')).warnings).to.deep.equal([]);
    expect((await warningsFor('not-authenticated')).warnings).to.deep.equal([
      `The newest complete backup ${id} is not authenticated (it carries no HMAC): set encryption-key and run backup-state for one that is; restoring this one with a key needs its backup-id and allow-unauthenticated=true.`,
    ]);
    expect((await warningsFor('hmac-mismatch')).warnings[0]).to.match(/is not authenticated: its HMAC does not match .*restore-state will refuse it\.$/);
    const unchecked = await warningsFor('hmac-unchecked');
    expect(unchecked.warnings[0]).to.match(/is not authenticated: no encryption-key is set to check its HMAC/);
    expect(preflightActionResults(unchecked)['warnings.0']).to.equal(unchecked.warnings[0]);
  });

  it('says no-go when a protected CRD is not Established', async () => {
    const crd = await client.get(CRDS, 'tensorboards.tensorboard.kubeflow.org');
    const status = crd.status as { conditions: Array<{ type: string; status: string; reason?: string }> };
    const established = status.conditions.find((c) => c.type === 'Established');
    if (!established) throw new Error('the embedded cluster did not establish the Tensorboard CRD');
    established.status = 'False';
    established.reason = 'Installing';
    await client.replaceStatus(CRDS, crd);
    try {
      await expectOnly({}, 'CRD tensorboards.tensorboard.kubeflow.org is not Established: find out why before refreshing tensorboard-controller.');
    } finally {
      const again = await client.get(CRDS, 'tensorboards.tensorboard.kubeflow.org');
      const conditions = (again.status as typeof status).conditions;
      for (const condition of conditions) if (condition.type === 'Established') condition.status = 'True';
      await client.replaceStatus(CRDS, again);
    }
  });

  it('says no-go on a storedVersions hazard, naming the charm to refresh only after migrating', async () => {
    await client.create(CRDS, lateCrd('v1alpha1'));
    await client.replace(CRDS, lateCrd('v1', await client.get(CRDS, 'lates.kubeflow.org')));
    await expectOnly(
      {},
      'CRD lates.kubeflow.org still has objects stored as v1alpha1 (storage version v1): run migrate-stored-versions before refreshing late-operator.',
    );
    const result = await preUpgradeCheck(inputs());
    expect(preflightActionResults(result)['reasons.0']).to.include('run migrate-stored-versions before refreshing late-operator');
    await migrateStoredVersions(client, { crd: 'lates.kubeflow.org', protectedGroups: DEFAULT_PROTECTED_CRD_GROUPS });
    expect((await preUpgradeCheck(inputs())).verdict).to.equal('go');
  });

  it("says no-go when a Profile's namespace is not Active", async () => {
    const namespace = await client.get(NAMESPACES, 'alice');
    await client.replaceStatus(NAMESPACES, { ...namespace, status: { phase: 'Terminating' } });
    try {
      await expectOnly({}, 'Profile alice: namespace alice is Terminating, not Active: resolve it before refreshing.');
    } finally {
      const again = await client.get(NAMESPACES, 'alice');
      await client.replaceStatus(NAMESPACES, { ...again, status: { phase: 'Active' } });
    }
  });
});
