import { expect } from 'chai';
import { backupStore } from '../support/backup-store.ts';
import { S3Client } from '@aws-sdk/client-s3';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore, type RestoreRequest } from '../../src/restore/engine.ts';
import { collectUserState, compareStates, describeDifferences, identityOf } from '../../src/restore/compare.ts';
import { RestoreInputError, RestoreRefusedError, RestoreStoppedError } from '../../src/restore/errors.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { isContributorObject } from '../../src/kubeflow/contributors.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { readItems } from '../../src/catalog/index.ts';
import { profileOwner, reconcileRequestAnnotation } from '../../src/kubeflow/profile-namespaces.ts';
import { restorable } from '../../src/restore/normalize.ts';
import { restoresStatus, suspendedForStatus } from '../../src/kubeflow/status-kinds.ts';
import { putForeignArchive } from './fixtures.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';
import { restoreActivity } from '../../src/restore/activity.ts';

const SEED = 5;
const PROFILES = 6;
const BUCKET = 'restores';

async function resource(kube: KubeClient, group: string, plural: string) {
  const found = await kube.findByResource(group, plural);
  if (!found) throw new Error(`${plural}.${group} not served`);
  return found;
}

describe('restore engine against the embedded cluster and s3rver', function () {
  this.timeout(120_000);
  let a: RunningCluster;
  let b: RunningCluster;
  let s3: S3ServerHandle;
  let kubeA: KubeClient;
  let kubeB: KubeClient;
  let store: ObjectStore;
  let backupId: string;
  let archived: number;

  const restore = (kube: KubeClient, overrides: Partial<RestoreRequest> = {}) =>
    runRestore(kube, backupStore(store), { backupId, waitTimeoutMs: 20_000, ...overrides });

  /**
   * How many archived objects of the backup get their status written back (one PATCH of the status each, however
   * soon their controller writes one), and how many of those are created suspended and resumed after it (one PATCH
   * each): src/kubeflow/status-kinds.ts.
   */
  const archivedStatuses = async () => {
    const read = await backupStore(store).readManifest(backupId);
    let statuses = 0;
    let resumes = 0;
    for await (const item of readItems(backupStore(store), backupId, { expected: read.state === 'present' ? read : null })) {
      if (!restoresStatus(item.object) || item.object.status === undefined) continue;
      statuses++;
      if (suspendedForStatus(item.object)) resumes++;
    }
    return { statuses, resumes };
  };

  before(async () => {
    [a, b, s3] = await Promise.all([startCluster({ profiles: PROFILES, seed: SEED, kubeflowWebhooks: { ready: true } }), startCluster({ seed: SEED }), startS3Server({ buckets: [BUCKET] })]);
    kubeA = await KubeClient.load({ kubeconfig: a.kubeconfigPath, concurrency: 8 });
    kubeB = await KubeClient.load({ kubeconfig: b.kubeconfigPath, concurrency: 8 });
    const client = new S3Client({
      endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    store = new ObjectStore({ client, bucket: BUCKET, prefix: 'kf' });
    const backup = await runBackup(kubeA, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
      encryptionKey: 'restore-test-passphrase',
    });
    backupId = backup.backupId;
    archived = backup.objects;
  });
  after(async () => {
    kubeA?.close();
    kubeB?.close();
    await Promise.all([a?.stop(), b?.stop(), s3?.stop()]);
  });

  it('round trip into a fresh cluster: every user-state object equal, nothing generated written, namespaces owned', async () => {
    const progress: string[] = [];
    const before = kubeB.requestCounts();
    const outcome = await restore(kubeB, { backupId: 'latest', trust: { encryptionKey: 'restore-test-passphrase' }, progress: (m) => { progress.push(m); } });
    const after = kubeB.requestCounts();
    // the counters the benches' timeline reads: each namespace counted once, none left running, nothing left in flight
    const { startedAt, preflightMs, ...counters } = restoreActivity;
    expect(counters).to.deep.equal({ phase: 'done', namespacesReady: PROFILES, namespacesInPipeline: 0, namespacesParked: 0, namespacesDone: PROFILES });
    // the preflight's time: from the restore's start to its end, within the restore's own
    expect(startedAt).to.be.greaterThan(0);
    expect(preflightMs).to.be.greaterThan(0).and.below(outcome.durationSeconds * 1000 + 100);
    expect(kubeB.inFlight).to.equal(0);
    expect(outcome.backupId).to.equal(backupId);
    expect(outcome.totals).to.deep.include({ created: archived, updated: 0, failed: 0 });
    // one create per archived object: the controllers made everything else; and one status write per Experiment and
    // training job, so that their controllers know what is already done
    expect(after.create - before.create).to.equal(archived);
    const { statuses, resumes } = await archivedStatuses();
    expect(resumes).to.be.greaterThan(0);
    expect(statuses).to.be.greaterThan(resumes);
    expect(after.update - before.update).to.equal(0);
    expect(after.patch - before.patch).to.equal(statuses + resumes);
    expect(after.delete - before.delete).to.equal(0);
    const differences = compareStates(await collectUserState(kubeA), await collectUserState(kubeB));
    expect(describeDifferences(differences)).to.deep.equal([]);
    const stateB = await collectUserState(kubeB);
    expect(stateB.filter(isContributorObject).length).to.be.greaterThan(PROFILES);
    const namespaces = await resource(kubeB, '', 'namespaces');
    for (const profile of stateB.filter((o) => o.kind === 'Profile')) {
      const ns = await kubeB.get(namespaces, profile.metadata.name!);
      expect(ns.metadata.annotations?.owner).to.equal((profile.spec as { owner: { name: string } }).owner.name);
    }
    expect(progress.some((m) => m.includes('verified'))).to.equal(true);
  });

  it('with volume data to fill, counts each namespace once though the fill splits its steps in two', async () => {
    // a backup whose every PVC holds data (the volume step stands in for the movers), restored into a fresh cluster
    const withVolumes = await runBackup(kubeA, backupStore(store), {
      kind: 'backup-state', includeVolumes: true, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
      encryptionKey: 'restore-test-passphrase',
      volumes: async (id, pvcs) => pvcs.map((p) => ({ namespace: p.namespace, pvc: p.name, key: backupKeys(id).volume(p.namespace, p.name), files: 1, bytes: 1 })),
    });
    const c = await startCluster({ seed: SEED });
    const kubeC = await KubeClient.load({ kubeconfig: c.kubeconfigPath, concurrency: 8 });
    try {
      const progress: string[] = [];
      let filled = 0;
      await restore(kubeC, {
        backupId: withVolumes.backupId, trust: { encryptionKey: 'restore-test-passphrase' }, progress: (m) => { progress.push(m); },
        volumes: async (_id, pvcs) => { filled += pvcs.length; return { restored: pvcs.length }; },
      });
      expect(filled, 'the PVCs were filled between the two phases').to.be.greaterThan(0);
      const namespaces = new Set((await collectUserState(kubeC)).filter((o) => o.kind === 'Profile').map((o) => o.metadata.name));
      expect(namespaces.size).to.equal(PROFILES);
      expect(progress.filter((m) => /^restored \d+ objects in \d+ namespace\(s\)$/.test(m)).at(-1)).to.match(new RegExp(`in ${PROFILES} namespace\\(s\\)$`));
      expect(restoreActivity.namespacesDone).to.equal(PROFILES);
    } finally {
      kubeC.close();
      await c.stop();
    }
  });

  it('a rerun of the same restore finds everything unchanged and writes nothing', async () => {
    const before = kubeB.requestCounts().writes;
    const outcome = await restore(kubeB, { trust: { encryptionKey: 'restore-test-passphrase' } });
    expect(kubeB.requestCounts().writes - before).to.equal(0);
    expect(outcome.totals).to.deep.include({ created: 0, updated: 0, unchanged: archived, failed: 0 });
  });

  it('a manifest changed after the backup was committed refuses the restore before any write', async () => {
    const keys = backupKeys(backupId);
    const original = await store.getBytes(keys.manifest);
    const edited = JSON.parse(original.toString());
    edited.description = 'edited after commit';
    await store.put(keys.manifest, JSON.stringify(edited, null, 1));
    const before = kubeB.requestCounts().writes;
    let error: unknown;
    try {
      await restore(kubeB, { trust: { encryptionKey: 'restore-test-passphrase' } });
    } catch (caught) {
      error = caught;
    } finally {
      await store.put(keys.manifest, original);
    }
    expect(error).to.be.instanceOf(RestoreRefusedError);
    expect((error as Error).message).to.match(/manifest was changed after the backup was committed/);
    expect(kubeB.requestCounts().writes).to.equal(before);
  });

  it('without the encryption key, sealed Secrets refuse the restore before any write', async () => {
    const before = kubeB.requestCounts().writes;
    let error: unknown;
    try {
      await restore(kubeB);
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).to.match(/sealed with key .*set encryption-key/);
    expect(kubeB.requestCounts().writes).to.equal(before);
  });

  it('rollback in place: a deleted notebook and contributor are created again, nothing else is written', async () => {
    const notebooks = await resource(kubeA, 'kubeflow.org', 'notebooks');
    const bindings = await resource(kubeA, 'rbac.authorization.k8s.io', 'rolebindings');
    const policies = await resource(kubeA, 'security.istio.io', 'authorizationpolicies');
    const state = await collectUserState(kubeA);
    const notebook = state.find((o) => o.kind === 'Notebook')!;
    const contributor = state.find((o) => o.kind === 'RoleBinding' && isContributorObject(o))!;
    await kubeA.delete(notebooks, notebook.metadata.name!, notebook.metadata.namespace);
    await kubeA.delete(bindings, contributor.metadata.name!, contributor.metadata.namespace);
    await kubeA.delete(policies, contributor.metadata.name!, contributor.metadata.namespace);
    const before = kubeA.requestCounts();
    const outcome = await restore(kubeA, { trust: { encryptionKey: 'restore-test-passphrase' } });
    const after = kubeA.requestCounts();
    expect(after.create - before.create).to.equal(3);
    expect(after.writes - before.writes).to.equal(3);
    expect(outcome.totals.created).to.equal(3);
    const created = outcome.plan.filter((p) => p.create > 0).map((p) => `${p.namespace}/${p.kind}:${p.create}`).sort();
    expect(created).to.deep.equal([
      `${contributor.metadata.namespace}/AuthorizationPolicy:1`,
      `${notebook.metadata.namespace}/Notebook:1`,
      `${contributor.metadata.namespace}/RoleBinding:1`,
    ].sort());
    const live = await collectUserState(kubeA);
    expect(live.map(identityOf)).to.include.members([identityOf(notebook), identityOf(contributor)]);
  });

  describe('conflict policies and dry-run on a changed ConfigMap', () => {
    let changed: KubeObject;
    before(async () => {
      const configmaps = await resource(kubeA, '', 'configmaps');
      const original = (await collectUserState(kubeA)).find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'pipeline-config')!;
      changed = await kubeA.replace(configmaps, { ...original, data: { 'config.yaml': 'edited after the backup\n' } });
    });

    it('dry-run writes nothing and plans the update with its reason', async () => {
      const before = kubeA.requestCounts().writes;
      const outcome = await restore(kubeA, { dryRun: true, conflictPolicy: 'update', trust: { encryptionKey: 'restore-test-passphrase' } });
      expect(kubeA.requestCounts().writes).to.equal(before);
      const entry = outcome.plan.find((p) => p.namespace === changed.metadata.namespace && p.kind === 'ConfigMap')!;
      expect(entry.update).to.equal(1);
      expect(entry.reasons.join(' ')).to.include('data.config.yaml');
      expect(outcome.dryRun).to.equal(true);
    });

    it('skip keeps the live object and says why', async () => {
      const before = kubeA.requestCounts().writes;
      const outcome = await restore(kubeA, { trust: { encryptionKey: 'restore-test-passphrase' }, namespaces: [changed.metadata.namespace!] });
      expect(kubeA.requestCounts().writes).to.equal(before);
      expect(outcome.byKind.configmaps?.skipped).to.equal(1);
      expect(outcome.plan.flatMap((p) => p.reasons).join(' ')).to.include('conflict-policy=skip');
    });

    it('fail stops before any write, naming the object', async () => {
      const before = kubeA.requestCounts().writes;
      let error: unknown;
      try {
        await restore(kubeA, { trust: { encryptionKey: 'restore-test-passphrase' }, conflictPolicy: 'fail' });
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(RestoreStoppedError);
      expect((error as Error).message).to.include(`ConfigMap/${changed.metadata.namespace}/pipeline-config`);
      expect(kubeA.requestCounts().writes).to.equal(before);
    });

    it('update puts the archived content back, and only there', async () => {
      const before = kubeA.requestCounts().writes;
      const outcome = await restore(kubeA, { trust: { encryptionKey: 'restore-test-passphrase' }, conflictPolicy: 'update', profiles: [changed.metadata.namespace!] });
      expect(kubeA.requestCounts().writes - before).to.equal(1);
      expect(outcome.totals.updated).to.equal(1);
      const configmaps = await resource(kubeA, '', 'configmaps');
      const live = await kubeA.get(configmaps, 'pipeline-config', changed.metadata.namespace);
      expect((live.data as Record<string, string>)['config.yaml']).not.to.equal('edited after the backup\n');
    });
  });

  it('a malicious archive is refused whole, listing every offender, and nothing is applied', async () => {
    const profile = { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'mallory' }, spec: { owner: { kind: 'User', name: 'mallory@example.com' } } };
    await putForeignArchive(store, 'evil-backup', [
      { path: 'resources/profiles.kubeflow.org/cluster/mallory.json', object: profile },
      {
        path: 'resources/rolebindings.rbac.authorization.k8s.io/namespaces/mallory/admin.json',
        object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'admin', namespace: 'mallory' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'mallory@example.com' }] },
      },
      { path: 'resources/configmaps/namespaces/kube-system/coredns.json', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: {} } },
      {
        path: 'resources/validatingwebhookconfigurations.admissionregistration.k8s.io/cluster/hook.json',
        object: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'hook' }, webhooks: [] },
      },
      { path: 'resources/configmaps/namespaces/mallory/../../../etc.json', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'etc', namespace: 'mallory' } } },
    ]);
    const before = kubeB.requestCounts().writes;
    let error: unknown;
    try {
      await restore(kubeB, { backupId: 'evil-backup' });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(RestoreRefusedError);
    const offenders = (error as RestoreRefusedError).offenders.join('\n');
    expect(offenders).to.include('cluster-admin');
    expect(offenders).to.include('ConfigMap/kube-system/coredns');
    expect(offenders).to.include('ValidatingWebhookConfiguration/hook');
    expect(offenders).to.include('escapes its folder');
    expect((error as RestoreRefusedError).offenders).to.have.length(4);
    expect((error as Error).message).to.include('nothing was restored');
    expect(kubeB.requestCounts().writes).to.equal(before);
  });

  it('objects in a namespace without a Profile in the archive refuse the restore: the first three named, the rest counted', async () => {
    const profile = { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'kept' }, spec: { owner: { kind: 'User', name: 'k@example.com' } } };
    const configMap = (namespace: string, name: string) => ({
      path: `resources/configmaps/namespaces/${namespace}/${name}.json`,
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { a: 'b' } },
    });
    await putForeignArchive(store, 'stray-namespace', [
      { path: 'resources/profiles.kubeflow.org/cluster/kept.json', object: profile },
      configMap('kept', 'fine'),
      ...Array.from({ length: 14 }, (_, i) => configMap('stray', `cm-${String(i).padStart(2, '0')}`)),
      configMap('lonely', 'only'),
    ]);
    const before = kubeB.requestCounts().writes;
    let error: unknown;
    try {
      await restore(kubeB, { backupId: 'stray-namespace' });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(RestoreRefusedError);
    const offenders = (error as RestoreRefusedError).offenders;
    const stray = offenders.filter((o) => o.includes('namespace stray'));
    expect(stray).to.deep.equal([
      ...[0, 1, 2].map((i) => `ConfigMap/stray/cm-0${i} (resources/configmaps/namespaces/stray/cm-0${i}.json): namespace stray has no Profile stray in this backup; only the profile controller makes profile namespaces, from their Profile`),
      '11 more objects in namespace stray, which has no Profile in this backup either',
    ]);
    expect(offenders.filter((o) => o.includes('namespace lonely'))).to.deep.equal([
      'ConfigMap/lonely/only (resources/configmaps/namespaces/lonely/only.json): namespace lonely has no Profile lonely in this backup; only the profile controller makes profile namespaces, from their Profile',
    ]);
    expect(offenders.join('\n')).not.to.include('namespace kept');
    expect(kubeB.requestCounts().writes).to.equal(before);
  });

  it('with skip-refused, the namespaces without a Profile are left out and every object in them counted as skipped', async () => {
    const outcome = await restore(kubeB, { backupId: 'stray-namespace', skipRefused: true });
    expect(outcome.totals).to.deep.include({ created: 2, skipped: 15, failed: 0 });
    expect(outcome.refused).to.have.length(5);
    expect(outcome.refused[4]).to.equal('ConfigMap/lonely/only (resources/configmaps/namespaces/lonely/only.json): namespace lonely has no Profile lonely in this backup; only the profile controller makes profile namespaces, from their Profile');
    expect(outcome.plan.find((p) => p.namespace === 'stray')).to.deep.include({ kind: 'ConfigMap', skip: 14, create: 0 });
    const namespaces = await resource(kubeB, '', 'namespaces');
    expect(await kubeB.tryGet(namespaces, 'stray')).to.equal(undefined);
  });

  describe('RoleBindings a profile owner may make, skip-refused and exclude-resources', () => {
    const namespace = 'rbac-user';
    const binding = (name: string, kind: string, role: string) => ({
      path: `resources/rolebindings.rbac.authorization.k8s.io/namespaces/${namespace}/${name}.json`,
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'colleague@example.com' }],
      },
    });
    const entries = [
      { path: `resources/profiles.kubeflow.org/cluster/${namespace}.json`, object: { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: namespace }, spec: { owner: { kind: 'User', name: 'owner@example.com' } } } },
      // an owner holds kubeflow-admin, which aggregates admin, edit and view: these are the owner's to give
      binding('colleague-admin', 'ClusterRole', 'admin'),
      binding('colleague-edit', 'ClusterRole', 'edit'),
      binding('colleague-view', 'ClusterRole', 'view'),
      binding('colleague-reader', 'Role', 'pod-reader'),
      {
        path: `resources/roles.rbac.authorization.k8s.io/namespaces/${namespace}/pod-reader.json`,
        object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'pod-reader', namespace }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
      },
      { path: `resources/configmaps/namespaces/${namespace}/settings.json`, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace }, data: { a: 'b' } } },
      binding('escalate', 'ClusterRole', 'cluster-admin'),
    ];
    const live = async (plural: string, group: string) =>
      (await kubeB.listAll(await resource(kubeB, group, plural), { namespace })).items.map((o) => o.metadata.name).sort();

    before(async () => {
      await putForeignArchive(store, 'rbac-shapes', entries);
    });

    it('refuses the archive by default, naming only the cluster-admin binding, and writes nothing', async () => {
      const before = kubeB.requestCounts().writes;
      const error = await restore(kubeB, { backupId: 'rbac-shapes' }).then(() => undefined, (caught: unknown) => caught);
      expect(error).to.be.instanceOf(RestoreRefusedError);
      expect((error as RestoreRefusedError).offenders).to.have.length(1);
      expect((error as RestoreRefusedError).offenders[0]).to.match(/^RoleBinding\/rbac-user\/escalate .*binds ClusterRole cluster-admin/);
      expect(kubeB.requestCounts().writes).to.equal(before);
    });

    it('with skip-refused and exclude-resources: restores admin, edit, view and Role bindings, leaves out and lists the rest', async () => {
      const outcome = await restore(kubeB, { backupId: 'rbac-shapes', skipRefused: true, excludeResources: ['configmaps'] });
      expect(outcome.refused).to.have.length(1);
      expect(outcome.refused[0]).to.include('RoleBinding/rbac-user/escalate');
      expect(outcome.warnings.join(' ')).to.include('skip-refused: 1 archived item(s)');
      expect(await live('rolebindings', 'rbac.authorization.k8s.io')).to.include.members(['colleague-admin', 'colleague-edit', 'colleague-view', 'colleague-reader']);
      expect(await live('rolebindings', 'rbac.authorization.k8s.io')).not.to.include('escalate');
      // exclude-resources applies to restore: the ConfigMap stays in the archive and out of the cluster
      expect(await live('configmaps', '')).not.to.include('settings');
      const reasons = outcome.plan.filter((p) => p.namespace === namespace).flatMap((p) => p.reasons).join('\n');
      expect(reasons).to.include('excluded by exclude-resources (configmaps)');
      expect(reasons).to.include('binds ClusterRole cluster-admin');
      expect(outcome.byKind['rolebindings.rbac.authorization.k8s.io']).to.deep.include({ created: 4, skipped: 1 });
    });

    it('a bad exclude-resources entry is one sentence, before anything is read or written', async () => {
      const before = kubeB.requestCounts().writes;
      const error = await restore(kubeB, { backupId: 'rbac-shapes', excludeResources: ['Not A Resource'] }).then(() => undefined, (caught: unknown) => caught);
      expect(error).to.be.instanceOf(RestoreInputError);
      expect((error as Error).message).to.equal('exclude-resources: "Not A Resource" is not a resource name (write e.g. secrets, notebooks.kubeflow.org or *). Nothing was restored.');
      expect(kubeB.requestCounts().writes).to.equal(before);
    });
  });

  it('a foreign archive restores with a warning, skipping generated objects with the reason', async () => {
    const profile = { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'foreign' }, spec: { owner: { kind: 'User', name: 'f@example.com' } } };
    await putForeignArchive(store, 'velero-foreign', [
      { path: 'resources/profiles.kubeflow.org/cluster/foreign.json', object: profile },
      { path: 'resources/namespaces/cluster/foreign.json', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'foreign' } } },
      { path: 'resources/configmaps/namespaces/foreign/notes.json', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'notes', namespace: 'foreign', uid: 'x', resourceVersion: '9' }, data: { a: 'b' } } },
      { path: 'resources/configmaps/namespaces/foreign/kube-root-ca.crt.json', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt', namespace: 'foreign' }, data: { 'ca.crt': 'x' } } },
    ]);
    const before = kubeB.requestCounts().create;
    const outcome = await restore(kubeB, { backupId: 'velero-foreign' });
    expect(outcome.warnings.join(' ')).to.include('nothing in it could be verified');
    expect(kubeB.requestCounts().create - before).to.equal(2);
    expect(outcome.totals).to.deep.include({ created: 2, skipped: 2 });
    expect(outcome.plan.flatMap((p) => p.reasons).join(' ')).to.include('kube-root-ca.crt is made by Kubernetes');
  });

  describe('into fresh clusters: namespaces restored as soon as each is made', () => {
    let fresh: RunningCluster | undefined;
    let kubeF: KubeClient | undefined;
    beforeEach(async () => {
      fresh = await startCluster({ seed: SEED });
      kubeF = await KubeClient.load({ kubeconfig: fresh.kubeconfigPath, concurrency: 8 });
    });
    afterEach(async () => {
      kubeF?.close();
      await fresh?.stop();
    });

    /** the archive's Profiles and ConfigMaps, as backed up */
    const archivedState = async () => {
      const read = await backupStore(store).readManifest(backupId);
      const out: KubeObject[] = [];
      for await (const item of readItems(backupStore(store), backupId, { expected: read.state === 'present' ? read : null })) out.push(item.object);
      return out;
    };

    it('lists no namespaced kind, and judges on 409 what a namespace made beforehand already held', async () => {
      const archive = await archivedState();
      const other = archive.find((o) => o.kind === 'ServiceAccount')!;
      const name = other.metadata.namespace!;
      const profile = archive.find((o) => o.kind === 'Profile' && o.metadata.name === name)!;
      const same = archive.find((o) => o.kind === 'ConfigMap' && o.metadata.namespace === name)!;
      // The namespace exists with the right owner (the profile controller adopts it) and holds one object as
      // archived and one that differs: the restore creates the Profile, so it sends CREATEs and meets two 409s.
      const namespaces = await resource(kubeF!, '', 'namespaces');
      await kubeF!.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { owner: profileOwner(profile)! } } });
      await kubeF!.create(await resource(kubeF!, '', 'configmaps'), restorable(same));
      const changed = restorable(other);
      changed.metadata.annotations = { note: 'made after the backup' };
      await kubeF!.create(await resource(kubeF!, '', 'serviceaccounts'), changed);
      const before = kubeF!.requestCounts();
      const outcome = await restore(kubeF!, { trust: { encryptionKey: 'restore-test-passphrase' } });
      const after = kubeF!.requestCounts();
      // one LIST of Profiles, one of ClusterRoles (which an owner may bind: src/kubeflow/bindable-roles.ts), the
      // namespace watch's first LIST and the PodDefault watch's (for the late access-ml-pipeline): nothing per kind or
      // per namespace
      expect(after.list - before.list).to.be.at.most(4);
      expect(outcome.totals).to.deep.include({ created: archived - 2, unchanged: 1, skipped: 1, failed: 0 });
      const { statuses, resumes } = await archivedStatuses();
      expect(after.update - before.update).to.equal(0);
      expect(after.patch - before.patch).to.equal(statuses + resumes);
      expect(after.delete - before.delete).to.equal(0);
      expect(outcome.plan.flatMap((p) => p.reasons).join(' ')).to.include(`ServiceAccount/${name}/${other.metadata.name} differs`);
      const differences = compareStates(await collectUserState(kubeA), await collectUserState(kubeF!));
      expect(differences.map((d) => d.object)).to.deep.equal([identityOf(other)]);
    });

    it('a namespace the profile controller refuses does not hold back the others: they are restored, it is named', async () => {
      const archive = await archivedState();
      const refused = archive.filter((o) => o.kind === 'Profile')[1]!.metadata.name!;
      const namespaces = await resource(kubeF!, '', 'namespaces');
      await kubeF!.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: refused, annotations: { owner: 'someone-else@example.com' } } });
      let error: unknown;
      try {
        await restore(kubeF!, { trust: { encryptionKey: 'restore-test-passphrase' }, waitTimeoutMs: 3000 });
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(RestoreStoppedError);
      expect((error as Error).message).to.include(refused).and.to.match(/nothing was restored into it/);
      const outside = (objects: KubeObject[]) => objects.filter((o) => o.metadata.namespace !== refused);
      const differences = compareStates(outside(await collectUserState(kubeA)), outside(await collectUserState(kubeF!)));
      expect(describeDifferences(differences)).to.deep.equal([]);
      const configmaps = await resource(kubeF!, '', 'configmaps');
      const inRefused = (await kubeF!.listAll(configmaps, { namespace: refused })).items.filter((o) => archive.some((a) => a.kind === 'ConfigMap' && a.metadata.namespace === refused && a.metadata.name === o.metadata.name));
      expect(inRefused).to.deep.equal([]);
    });

    it('a rerun after the user deletes or fixes a conflicting namespace restores it: the unchanged Profiles are nudged', async () => {
      const archive = await archivedState();
      const [deleted, fixed] = archive.filter((o) => o.kind === 'Profile').slice(2, 4);
      const names = [deleted!.metadata.name!, fixed!.metadata.name!];
      const namespaces = await resource(kubeF!, '', 'namespaces');
      const profiles = await resource(kubeF!, 'kubeflow.org', 'profiles');
      for (const name of names) {
        await kubeF!.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { owner: 'someone-else@example.com' } } });
      }
      const first = await restore(kubeF!, { profiles: names, trust: { encryptionKey: 'restore-test-passphrase' }, waitTimeoutMs: 1500 }).then(() => undefined, (caught: unknown) => caught);
      expect(first).to.be.instanceOf(RestoreStoppedError);
      // the message comes from the namespaces, not from the Profiles: the real controller's condition never reaches them
      expect((first as Error).message).to.include(`${names[0]} (the namespace exists with owner annotation "someone-else@example.com"`);
      for (const name of names) expect((await kubeF!.get(profiles, name)).status).to.equal(undefined);

      // the user deletes one conflicting namespace and gives the other the Profile owner's annotation
      await kubeF!.delete(namespaces, names[0]!);
      await kubeF!.waitFor(namespaces, names[0]!, undefined, (o) => o === undefined, { timeoutMs: 10_000 });
      const conflicting = await kubeF!.get(namespaces, names[1]!);
      await kubeF!.replace(namespaces, { ...conflicting, metadata: { ...conflicting.metadata, annotations: { owner: profileOwner(fixed!)! } } });

      const rerun = await restore(kubeF!, { profiles: names, trust: { encryptionKey: 'restore-test-passphrase' }, waitTimeoutMs: 20_000 });
      expect(rerun.totals.failed).to.equal(0);
      expect(rerun.byKind['profiles.kubeflow.org']).to.deep.include({ unchanged: 2 });
      for (const name of names) {
        expect((await kubeF!.get(profiles, name)).metadata.annotations?.[reconcileRequestAnnotation]).to.be.a('string');
        // the profile controller reconciled each again: its own objects are there
        await kubeF!.waitFor(await resource(kubeF!, '', 'serviceaccounts'), 'default-editor', name, (o) => o !== undefined, { timeoutMs: 10_000 });
      }
      const inThem = (objects: KubeObject[]) => objects.filter((o) => names.includes(o.metadata.namespace ?? o.metadata.name!));
      const differences = compareStates(inThem(await collectUserState(kubeA)), inThem(await collectUserState(kubeF!)));
      expect(describeDifferences(differences)).to.deep.equal([]);
    });
  });

  describe('finished work stays finished: Experiments and training jobs get their status back', () => {
    let fresh: RunningCluster;
    let kubeF: KubeClient;
    let namespace: string;
    let outcome: Awaited<ReturnType<typeof runRestore>>;
    const experimentsRef = { group: 'kubeflow.org', resource: 'experiments' };
    const pytorchjobsRef = { group: 'kubeflow.org', resource: 'pytorchjobs' };
    const finished = (kind: string) => ({
      conditions: [
        { type: 'Created', status: 'True', reason: `${kind}Created` },
        { type: 'Running', status: 'False', reason: `${kind}Running` },
        { type: 'Succeeded', status: 'True', reason: kind === 'Experiment' ? 'ExperimentGoalReached' : `${kind}Succeeded` },
      ],
    });
    // what Katib's validator admits (kubeflow/katib validator.go): an objective, a parameter with its type, a trial
    // template whose parameters the Job uses; both clusters run Katib's and the training operator's webhooks
    const trialTemplate = {
      primaryContainerName: 'training', trialParameters: [{ name: 'learningRate', reference: 'lr' }],
      trialSpec: { apiVersion: 'batch/v1', kind: 'Job', spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training', image: 'docker.io/kubeflowkatib/mxnet-mnist:v0.18.0', command: ['python3', 'mnist.py', '--lr=${trialParameters.learningRate}'] }] } } } },
    };
    const parameters = [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.1' } }];
    const objective = { type: 'maximize', goal: 0.9, objectiveMetricName: 'accuracy' };
    const experiment = (name: string): KubeObject => ({
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name, namespace },
      spec: { parallelTrialCount: 2, maxTrialCount: 4, objective, algorithm: { algorithmName: 'random' }, parameters, trialTemplate },
    });
    const job = (name: string): KubeObject => ({
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name, namespace },
      // requests set, as a profile's ResourceQuota on cpu and memory makes the API server require of every Pod
      spec: { pytorchReplicaSpecs: { Master: { replicas: 1, template: { spec: { containers: [{ name: 'pytorch', image: 'docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727', resources: { requests: { cpu: '1', memory: '2Gi' } } }] } } } } },
    });
    const mxjobsRef = { group: 'kubeflow.org', resource: 'mxjobs' };
    const openEnded = { parallelTrialCount: 2, objective, algorithm: { algorithmName: 'random' }, parameters, trialTemplate };
    const mxjob = (name: string): KubeObject => ({
      apiVersion: 'kubeflow.org/v1', kind: 'MXJob', metadata: { name, namespace },
      spec: { jobMode: 'MXTrain', mxReplicaSpecs: { Worker: { replicas: 1, template: { spec: { containers: [{ name: 'mxnet', image: 'docker.io/kubeflow/mxnet-gpu:latest', resources: { requests: { cpu: '1', memory: '1Gi' } } }] } } } } },
    });
    const trialsIn = (cluster: RunningCluster, name: string) => cluster.api.list(refs.trials, { namespace, labelSelector: `katib.kubeflow.org/experiment=${name}` });
    const trialsOf = (name: string) => trialsIn(fresh, name);
    const podsOf = (name: string) => fresh.api.list(refs.pods, { namespace, labelSelector: `training.kubeflow.org/job-name=${name}` });
    const finishedIn = (object: KubeObject | undefined) => ((object?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [])
      .some((c) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
    async function until<T>(what: string, ready: () => T | false | undefined): Promise<T> {
      for (const deadline = Date.now() + 10_000; ; await new Promise((resolve) => setTimeout(resolve, 10))) {
        const value = ready();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      }
    }

    before(async () => {
      namespace = (await collectUserState(kubeA)).find((o) => o.kind === 'Profile')!.metadata.name!;
      // in the source, one Experiment and one PyTorchJob ran to the end, the others are still running
      for (const name of ['tuned', 'tuning']) a.api.create(experimentsRef, experiment(name));
      for (const name of ['trained', 'training']) a.api.create(pytorchjobsRef, job(name));
      const succeed = async (ref: typeof experimentsRef, name: string, kind: string, extra: object) => {
        for (;;) {
          const live = a.api.get(ref, name, namespace)!;
          try {
            a.api.updateStatus(ref, { ...live, status: { ...finished(kind), ...extra } });
            return;
          } catch { await new Promise((resolve) => setTimeout(resolve, 5)); } // the controller wrote meanwhile
        }
      };
      await succeed(experimentsRef, 'tuned', 'Experiment', { trials: 4, trialsSucceeded: 4, currentOptimalTrial: { parameterAssignments: [{ name: 'lr', value: '0.042' }] } });
      await succeed(pytorchjobsRef, 'trained', 'PyTorchJob', { replicaStatuses: { Master: { succeeded: 1 } } });
      // an Experiment without maxTrialCount that ends when a Trial reaches its goal (Katib restarts such an
      // Experiment on every reconcile, and finds it complete again only by recounting its Trials)
      a.api.create(experimentsRef, { ...experiment('explored'), spec: { ...openEnded } });
      const [best] = await until('trials of explored', () => { const t = trialsIn(a, 'explored'); return t.length === 2 && t; });
      a.api.updateStatus(refs.trials, { ...best!, status: { conditions: [{ type: 'Succeeded', status: 'True' }], observation: { metrics: [{ name: 'accuracy', latest: '0.97' }] } } });
      await until('explored to succeed', () => finishedIn(a.api.get(experimentsRef, 'explored', namespace)));
      // an MXJob, which training-operator 1.8 (Charmed Kubeflow 1.9) still serves and reconciles
      a.api.create(mxjobsRef, mxjob('mxdone'));
      await succeed(mxjobsRef, 'mxdone', 'MXJob', { replicaStatuses: { Worker: { succeeded: 1 } } });
      const backup = await runBackup(kubeA, backupStore(store), {
        kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', namespaces: [namespace],
        profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'], encryptionKey: 'restore-test-passphrase',
      });
      fresh = await startCluster({ seed: SEED, kubeflowWebhooks: { ready: true } });
      kubeF = await KubeClient.load({ kubeconfig: fresh.kubeconfigPath, concurrency: 8 });
      outcome = await runRestore(kubeF, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000, trust: { encryptionKey: 'restore-test-passphrase' } });
    });
    after(async () => {
      kubeF?.close();
      await fresh?.stop();
    });

    it('a finished Experiment and PyTorchJob start nothing on the target; the unfinished ones start again', async () => {
      expect(outcome.totals.failed).to.equal(0);
      // the same controllers start the unfinished ones: once they have, the finished ones have had their turn too
      await until('trials of the unfinished Experiment', () => trialsOf('tuning').length === 2);
      await until('the pod of the unfinished PyTorchJob', () => podsOf('training').length === 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(trialsOf('tuned')).to.deep.equal([]);
      expect(podsOf('trained')).to.deep.equal([]);
      const tuned = fresh.api.get(experimentsRef, 'tuned', namespace)!;
      expect(tuned.status).to.deep.include({ trials: 4, trialsSucceeded: 4 });
      expect((tuned.status as { conditions: Array<{ type: string; status: string }> }).conditions).to.deep.include({ type: 'Succeeded', status: 'True', reason: 'ExperimentGoalReached' });
      const trained = fresh.api.get(pytorchjobsRef, 'trained', namespace)!;
      expect((trained.status as { replicaStatuses: unknown }).replicaStatuses).to.deep.equal({ Master: { succeeded: 1 } });
      // created suspended until its status was written, then given back its own spec
      expect(trained.spec).to.deep.equal(job('trained').spec);
    });

    it('a finished Experiment without maxTrialCount and a finished MXJob stay finished, and the results say why the Experiment changed', async () => {
      await until('trials of the unfinished Experiment', () => trialsOf('tuning').length === 2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(trialsOf('explored')).to.deep.equal([]);
      expect(podsOf('mxdone')).to.deep.equal([]);
      const explored = fresh.api.get(experimentsRef, 'explored', namespace)!;
      expect(finishedIn(explored)).to.equal(true);
      const archived = a.api.get(experimentsRef, 'explored', namespace)!;
      expect(explored.status).to.deep.equal(archived.status);
      // the trials it ran: Katib does not restart an Experiment with a maxTrialCount it has not raised
      expect((explored.spec as { maxTrialCount?: number }).maxTrialCount).to.equal(2);
      expect(outcome.plan.flatMap((e) => e.reasons).some((r) => r.includes('Experiment/' + namespace + '/explored') && r.includes('maxTrialCount 2'))).to.equal(true);
      const mxdone = fresh.api.get(mxjobsRef, 'mxdone', namespace)!;
      expect(finishedIn(mxdone)).to.equal(true);
      expect(mxdone.spec).to.deep.equal(mxjob('mxdone').spec);
      expect(describeDifferences(compareStates(await collectUserState(kubeA), await collectUserState(kubeF))).filter((d) => d.includes(`/${namespace}/`))).to.deep.equal([]);
    });

    it('a restore that stopped anywhere between a suspended create and its resume is finished by the rerun', async () => {
      // the states an earlier restore leaves when it stops: created suspended; created suspended with its status
      // written; an Experiment created pinned without its status
      const archivedJob = restorable(a.api.get(pytorchjobsRef, 'trained', namespace)!);
      const archivedStatus = a.api.get(pytorchjobsRef, 'trained', namespace)!.status;
      const suspended = suspendedForStatus(archivedJob)!.create;
      const remake = async (ref: typeof pytorchjobsRef, name: string, object: KubeObject, status?: unknown) => {
        fresh.api.delete(ref, name, namespace);
        await until(`${name} to go`, () => !fresh.api.get(ref, name, namespace));
        const made = fresh.api.create(ref, object);
        if (status) fresh.api.updateStatus(ref, { ...made, status });
      };
      await remake(pytorchjobsRef, 'trained', suspended);
      await remake(mxjobsRef, 'mxdone', suspendedForStatus(restorable(a.api.get(mxjobsRef, 'mxdone', namespace)!))!.create, a.api.get(mxjobsRef, 'mxdone', namespace)!.status);
      const explored = restorable(a.api.get(experimentsRef, 'explored', namespace)!);
      await remake(experimentsRef, 'explored', { ...explored, spec: { ...(explored.spec as object), maxTrialCount: 2 } });
      const rerun = await runRestore(kubeF, backupStore(store), { backupId: 'latest', waitTimeoutMs: 20_000, trust: { encryptionKey: 'restore-test-passphrase' }, namespaces: [namespace] });
      expect(rerun.totals.failed).to.equal(0);
      const reasons = rerun.plan.flatMap((e) => e.reasons);
      expect(reasons.filter((r) => r.includes('earlier restore'))).to.have.length(3);
      const trained = fresh.api.get(pytorchjobsRef, 'trained', namespace)!;
      expect(trained.spec).to.deep.equal(archivedJob.spec);
      expect(trained.status).to.deep.equal(archivedStatus);
      expect(fresh.api.get(mxjobsRef, 'mxdone', namespace)!.spec).to.deep.equal(mxjob('mxdone').spec);
      expect(finishedIn(fresh.api.get(experimentsRef, 'explored', namespace))).to.equal(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(podsOf('trained')).to.deep.equal([]);
      expect(podsOf('mxdone')).to.deep.equal([]);
      // and the next rerun has nothing left to do
      const again = await runRestore(kubeF, backupStore(store), { backupId: 'latest', waitTimeoutMs: 20_000, trust: { encryptionKey: 'restore-test-passphrase' }, namespaces: [namespace] });
      expect(again.totals).to.deep.include({ created: 0, updated: 0, failed: 0 });
    });
  });

  describe('targets that cannot take the backup', () => {
    let c: RunningCluster;
    let kubeC: KubeClient;
    before(async () => {
      c = await startCluster({ seed: SEED });
      kubeC = await KubeClient.load({ kubeconfig: c.kubeconfigPath });
    });
    after(async () => {
      kubeC?.close();
      await c?.stop();
    });

    it('a namespace the profile controller refuses fails after the timeout, naming it and the reason', async () => {
      const profile = (await collectUserState(kubeA)).find((o) => o.kind === 'Profile')!;
      const name = profile.metadata.name!;
      const namespaces = await resource(kubeC, '', 'namespaces');
      await kubeC.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { owner: 'someone-else@example.com' } } });
      let error: unknown;
      try {
        await runRestore(kubeC, backupStore(store), { backupId, profiles: [name], waitTimeoutMs: 1500, trust: { encryptionKey: 'restore-test-passphrase' }, protectedNamespaces: [] });
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(RestoreStoppedError);
      expect((error as Error).message).to.include(name);
      expect((error as Error).message).to.match(/not owned|someone-else/);
    });
    it('a target lacking a CRD is refused before any write, naming the kind', async () => {
      const crds = await resource(kubeC, 'apiextensions.k8s.io', 'customresourcedefinitions');
      await kubeC.delete(crds, 'poddefaults.kubeflow.org');
      await kubeC.waitFor(crds, 'poddefaults.kubeflow.org', undefined, (o) => o === undefined, { timeoutMs: 10_000 });
      kubeC.invalidateDiscovery();
      const before = kubeC.requestCounts().writes;
      let error: unknown;
      try {
        await restore(kubeC, { trust: { encryptionKey: 'restore-test-passphrase' } });
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(RestoreRefusedError);
      expect((error as Error).message).to.include('poddefaults.kubeflow.org/v1alpha1');
      expect(kubeC.requestCounts().writes).to.equal(before);
    });

  });
});

describe('restore engine: ownerReferences between restored objects', function () {
  this.timeout(120_000);

  it('points a restored dependent at its restored owner’s new uid, and drops a reference to an owner not in the backup', async () => {
    const [source, target, s3] = await Promise.all([startCluster({ profiles: 1, seed: 11 }), startCluster({ seed: 11 }), startS3Server({ buckets: [BUCKET] })]);
    const kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath });
    const kubeTarget = await KubeClient.load({ kubeconfig: target.kubeconfigPath });
    try {
      const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
      const store = new ObjectStore({ client, bucket: BUCKET, prefix: 'owners' });
      const profiles = await resource(kubeSource, 'kubeflow.org', 'profiles');
      const namespace = (await kubeSource.listAll(profiles)).items[0]!.metadata.name!;
      const secrets = await resource(kubeSource, '', 'secrets');
      const configmaps = await resource(kubeSource, '', 'configmaps');
      const owner = await kubeSource.create(secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'owner-secret', namespace }, stringData: { k: 'v' } });
      // a user's own (non-controller) references: one to an owner that is backed up, one to an owner that is not
      const stranger = await kubeSource.create(configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'not-backed-up', namespace: 'kubeflow' } });
      await kubeSource.create(configmaps, {
        apiVersion: 'v1', kind: 'ConfigMap',
        metadata: {
          name: 'owned-cm', namespace,
          ownerReferences: [
            { apiVersion: 'v1', kind: 'Secret', name: 'owner-secret', uid: owner.metadata.uid! },
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'not-backed-up', uid: stranger.metadata.uid! },
          ],
        },
        data: { a: 'b' },
      });
      const backup = await runBackup(kubeSource, backupStore(store), {
        kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
        profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
      });
      await runRestore(kubeTarget, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000 });
      const restoredOwner = await kubeTarget.get(secrets, 'owner-secret', namespace);
      const restored = await kubeTarget.get(configmaps, 'owned-cm', namespace);
      expect(restoredOwner.metadata.uid).to.not.equal(owner.metadata.uid);
      expect(restored.metadata.ownerReferences).to.deep.equal([{ apiVersion: 'v1', kind: 'Secret', name: 'owner-secret', uid: restoredOwner.metadata.uid }]);
    } finally {
      kubeSource.close();
      kubeTarget.close();
      await Promise.all([source.stop(), target.stop(), s3.stop()]);
    }
  });
});
