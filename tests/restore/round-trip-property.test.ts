// Every backup is restorable: random clusters go through the real backup engine and then the real restore engine
// into an empty cluster, and the restore must succeed with every object the backup took, every time. The clusters
// are the embedded API server with its simulated controllers (a pair per generated case, started in milliseconds);
// the bucket is in memory, since only the engines and the cluster are under test here. Generated: contributor e-mails
// with non-ASCII letters and punctuation at either end, object names with dots and (RBAC) with ':', every shape of
// RoleBinding an owner may or may not make, namespaces without a Profile, namespaces that existed before their
// Profile for someone else, Profiles whose owner was edited after their namespace was made, and empty namespaces.
import { expect } from 'chai';
import fc from 'fast-check';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore } from '../../src/restore/engine.ts';
import { collectUserState, comparable, identityOf, unmetFields } from '../../src/restore/compare.ts';
import { contributorBindingName, type ContributorRole } from '../../src/kubeflow/contributors.ts';
import { reservedNamespaces } from '../../src/kubeflow/profile-namespaces.ts';
import {  } from '../../src/archive/index.ts';

const RUNS = 200;
const SELECTOR_LABEL = { 'app.kubernetes.io/part-of': 'kubeflow-profile' };

type Situation = 'fresh' | 'conflict' | 'owner-edited';
type BindingShape = 'admin' | 'edit' | 'view' | 'kubeflow-edit' | 'role' | 'cluster-admin';

interface ProfileCase {
  name: string;
  owner: string;
  situation: Situation;
  editedOwner: string;
  contributors: Array<{ email: string; role: ContributorRole }>;
  bindings: Array<{ name: string; shape: BindingShape }>;
  configMaps: string[];
}

interface OrphanCase {
  name: string;
  labelled: boolean;
  owner: string | undefined;
  configMaps: string[];
}

interface ClusterCase {
  profiles: ProfileCase[];
  orphans: OrphanCase[];
}

// Contributor e-mails: ASCII and non-ASCII letters, with punctuation KFAM folds away at either end.
const edgePunctuation = fc.constantFrom('', '', '.', '-', '_', '+', '..', '-_');
const localWord = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/),
  fc.constantFrom('jürgen', 'zoë', 'ólafur', 'renée', 'søren', '李雷', 'O\'Neil', 'Ünïcode', '😀eve', 'Mixed.Case'),
);
const domain = fc.constantFrom('example.com', 'ex-ample.org', 'exämple.de', 'x.io');
const email = fc.tuple(edgePunctuation, localWord, edgePunctuation, domain).map(([lead, word, trail, at]) => `${lead}${word}${trail}@${at}`);

const dnsLabel = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/);
// object names with dots: DNS subdomains of one to three labels
const dottedName = fc.array(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,5}[a-z0-9])?$/), { minLength: 1, maxLength: 3 }).map((labels) => labels.join('.'));
const namespaceName = dnsLabel.filter((name) => !reservedNamespaces.has(name) && !name.startsWith('kube-'));
// RBAC names are path segments: ':' is allowed, as in system:image-pullers, and mixed with dots
const colonName = fc.array(fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,5}[a-z0-9])?$/), { minLength: 2, maxLength: 3 }).map((parts) => parts.join(':'));
const rbacName = fc.oneof(dottedName, colonName);

const profileCase = (name: string): fc.Arbitrary<ProfileCase> => fc.record({
  name: fc.constant(name),
  owner: email,
  situation: fc.constantFrom<Situation>('fresh', 'fresh', 'fresh', 'conflict', 'owner-edited'),
  editedOwner: email,
  contributors: fc.array(fc.record({ email, role: fc.constantFrom<ContributorRole>('edit', 'view') }), { maxLength: 3 }),
  bindings: fc.uniqueArray(
    fc.record({ name: rbacName, shape: fc.constantFrom<BindingShape>('admin', 'edit', 'view', 'kubeflow-edit', 'role', 'cluster-admin') }),
    { maxLength: 3, selector: (b) => b.name },
  ),
  configMaps: fc.uniqueArray(dottedName, { maxLength: 3 }),
});

const orphanCase = (name: string): fc.Arbitrary<OrphanCase> => fc.record({
  name: fc.constant(name),
  labelled: fc.boolean(),
  owner: fc.option(email, { nil: undefined }),
  configMaps: fc.uniqueArray(dottedName, { maxLength: 2 }),
});

const clusterCase: fc.Arbitrary<ClusterCase> = fc.uniqueArray(namespaceName, { minLength: 1, maxLength: 6 })
  .chain((names) => {
    const profiles = Math.max(1, Math.ceil(names.length * 0.7));
    return fc.record({
      profiles: fc.tuple(...names.slice(0, profiles).map(profileCase)),
      orphans: fc.tuple(...names.slice(profiles).map(orphanCase)),
    });
  });

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function configMap(namespace: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { 'settings.json': `{"namespace":"${namespace}"}` } };
}

function profileObjects(p: ProfileCase): KubeObject[] {
  const namespace = p.name;
  const rbac = 'rbac.authorization.k8s.io';
  const out: KubeObject[] = [];
  const seenContributors = new Set<string>();
  for (const { email: user, role } of p.contributors) {
    const name = contributorBindingName(user, role);
    // two addresses KFAM names alike are one contributor: KFAM itself could not create the second
    if (seenContributors.has(name)) continue;
    seenContributors.add(name);
    const annotations = { user, role };
    out.push({
      apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name, namespace, annotations },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: `kubeflow-${role}` }, subjects: [{ apiGroup: rbac, kind: 'User', name: user }],
    }, {
      apiVersion: 'security.istio.io/v1beta1', kind: 'AuthorizationPolicy', metadata: { name, namespace, annotations },
      spec: { rules: [{ when: [{ key: 'request.headers[kubeflow-userid]', values: [user] }] }] },
    });
  }
  for (const { name, shape } of p.bindings) {
    if (seenContributors.has(name)) continue;
    if (shape === 'role') {
      out.push({ apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name, namespace }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] });
    }
    out.push({
      apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name, namespace },
      roleRef: { apiGroup: rbac, kind: shape === 'role' ? 'Role' : 'ClusterRole', name: shape === 'role' ? name : shape },
      subjects: [{ apiGroup: rbac, kind: 'User', name: p.owner }],
    });
  }
  for (const name of p.configMaps) out.push(configMap(namespace, name));
  return out;
}

function create(source: RunningCluster, object: KubeObject): void {
  const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
  source.cluster.create(source.cluster.resourceByKind(group, object.kind)!, object);
}

async function until(what: string, ready: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !ready(); await tick(2)) {
    if (Date.now() > deadline) throw new Error(`the source cluster never got ready: ${what}`);
  }
}

function namespaceOwner(source: RunningCluster, name: string): string | undefined {
  const ns = source.api.get(refs.namespaces, name);
  return (ns?.status as { phase?: string } | undefined)?.phase === 'Active' ? ns?.metadata.annotations?.owner : undefined;
}

/** builds the case in the source cluster the way users and the profile controller would have */
async function populate(source: RunningCluster, c: ClusterCase): Promise<void> {
  for (const orphan of c.orphans) {
    create(source, {
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: orphan.name, ...(orphan.labelled ? { labels: SELECTOR_LABEL } : {}), ...(orphan.owner ? { annotations: { owner: orphan.owner } } : {}) },
    });
    for (const name of orphan.configMaps) create(source, configMap(orphan.name, name));
  }
  for (const p of c.profiles.filter((p) => p.situation === 'conflict')) {
    // a namespace that existed before its Profile, for someone else: the profile controller refuses it
    create(source, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: p.name, labels: SELECTOR_LABEL, annotations: { owner: `not-${p.owner}` } } });
    create(source, configMap(p.name, 'belongs-to-someone-else'));
  }
  for (const p of c.profiles) {
    create(source, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: p.name }, spec: { owner: { kind: 'User', name: p.owner } } });
  }
  const made = c.profiles.filter((p) => p.situation !== 'conflict');
  await until('profile namespaces', () => made.every((p) => namespaceOwner(source, p.name) === p.owner));
  for (const p of made) for (const object of profileObjects(p)) create(source, object);
  for (const p of c.profiles.filter((p) => p.situation === 'owner-edited' && p.editedOwner !== p.owner)) {
    // spec.owner edited after the namespace was made: the controller now refuses the namespace it made itself
    const profile = source.api.get(refs.profiles, p.name)!;
    source.api.update(refs.profiles, { ...profile, spec: { ...(profile.spec as object), owner: { kind: 'User', name: p.editedOwner } } });
  }
}

/** the namespaces the case means to be left out: look-alikes without their Profile, and namespaces refused to it */
function expectedLeftOut(c: ClusterCase): string[] {
  return [
    ...c.orphans.filter((o) => o.labelled || o.owner !== undefined).map((o) => o.name),
    ...c.profiles.filter((p) => p.situation === 'conflict').map((p) => p.name),
  ].sort();
}

describe('round trip property: every backup restores into an empty cluster', function () {
  this.timeout(600_000);

  it(`${RUNS} generated clusters: backup, then restore into an empty cluster — no refusal, no failure, no lost object`, async () => {
    await fc.assert(fc.asyncProperty(clusterCase, async (c) => {
      const [source, target] = await Promise.all([startCluster(), startCluster()]);
      const [kubeSource, kubeTarget] = await Promise.all([
        KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: 4 }),
        KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 }),
      ]);
      try {
        await populate(source, c);
        const store = new MemoryBackupStore();
        const backup = await runBackup(kubeSource, store, {
          kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'property',
          profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: [],
        });
        // every namespace left out is named with its reason, in the outcome and in the manifest
        expect(backup.leftOutNamespaces.map((l) => l.namespace)).to.deep.equal(expectedLeftOut(c));
        const manifest = await store.readManifest(backup.backupId);
        expect(manifest.state === 'present' && manifest.manifest.extras.leftOutNamespaces).to.deep.equal(backup.leftOutNamespaces);

        const restore = await runRestore(kubeTarget, store, { backupId: backup.backupId, waitTimeoutMs: 10_000 });
        expect(restore.failures).to.deep.equal([]);
        expect(restore.refused).to.deep.equal([]);
        expect(restore.totals.failed).to.equal(0);

        // Nothing the source held as user state is missing or different on the target. The target may hold more
        // than the source in an object (a controller's defaults, the profile-finalizer on a Profile whose namespace
        // the source's controller refused and so never finalized): that is not a loss.
        const [sourceState, targetState] = await Promise.all([collectUserState(kubeSource), collectUserState(kubeTarget)]);
        const restored = new Map(targetState.map((o) => [identityOf(o), comparable(o)]));
        const lost = sourceState.flatMap((o) => {
          const there = restored.get(identityOf(o));
          if (!there) return [`${identityOf(o)}: missing`];
          const fields = unmetFields(comparable(o), there);
          return fields.length ? [`${identityOf(o)}: different ${fields.join(', ')}`] : [];
        });
        expect(lost).to.deep.equal([]);
        expect(targetState.length).to.equal(sourceState.length);
        const restoredProfiles = target.api.list(refs.profiles).map((p) => p.metadata.name).sort();
        expect(restoredProfiles).to.deep.equal(c.profiles.map((p) => p.name).sort());
      } finally {
        kubeSource.close();
        kubeTarget.close();
        await Promise.all([source.stop(), target.stop()]);
      }
    }), { numRuns: RUNS });
  });
});
