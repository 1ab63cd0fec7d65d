// Every backup is restorable: random clusters go through the real backup engine and then the real restore engine
// into an empty cluster, and the restore must succeed with every object the backup took, every time. The clusters
// are the embedded API server with its simulated controllers (a pair per generated case, started in milliseconds);
// the bucket is in memory, since only the engines and the cluster are under test here. Generated: contributor e-mails
// with non-ASCII letters and punctuation at either end, object names with dots and (RBAC) with ':', every shape of
// RoleBinding an owner may or may not make, namespaces without a Profile, namespaces that existed before their
// Profile for someone else, Profiles whose owner was edited after their namespace was made, and empty namespaces;
// and in profile namespaces Services (ClusterIP, headless, NodePort), batch Jobs (running, finished), PVCs, token
// Secrets, training jobs and Katib Experiments (finished or not, with or without maxTrialCount).
//
// The oracle for "nothing lost" is written from shared/reference/kubeflow.md and the upstream sources, never from the
// product's rules (nothing of src/kubeflow is imported here): it is what the generator made as a user, every field the
// user set, on the target; minus what a profile owner cannot bind (a RoleBinding to a ClusterRole outside the
// kubeflow-admin aggregation: kubernetes pkg/registry/rbac/escalation_check.go). And finished work stays finished:
// no Pod for a finished training job (training-operator pkg/controller.v1/common/job.go), no Trial for a finished
// Experiment (katib experiment_controller.go).
import { expect } from 'chai';
import fc from 'fast-check';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore } from '../../src/restore/engine.ts';
import { kfamBindingName } from '../support/cluster/kubeflow/kfam.ts';

const RUNS = 100;
type ContributorRole = 'edit' | 'view';
/** system namespaces no Profile may claim (kubeflow.md; the Kubernetes and Charmed Kubeflow namespaces) */
const systemNamespaces = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease', 'kubeflow', 'istio-system', 'knative-serving', 'cert-manager']);
const SELECTOR_LABEL = { 'app.kubernetes.io/part-of': 'kubeflow-profile' };

type Situation = 'fresh' | 'conflict' | 'owner-edited';
type BindingShape = 'admin' | 'edit' | 'view' | 'kubeflow-edit' | 'kubeflow-pipelines-edit' | 'role' | 'cluster-admin';
type ServiceShape = 'cluster-ip' | 'headless' | 'node-port';
const trainingKinds = ['PyTorchJob', 'TFJob', 'MXJob', 'XGBoostJob'] as const;
type TrainingKind = typeof trainingKinds[number];
/** ClusterRoles a profile owner holds through kubeflow-admin, so may bind (kubeflow/manifests common/kubeflow-roles) */
const ownerMayBind = new Set<BindingShape>(['admin', 'edit', 'view', 'kubeflow-edit', 'kubeflow-pipelines-edit', 'role']);

interface ProfileCase {
  name: string;
  owner: string;
  situation: Situation;
  editedOwner: string;
  contributors: Array<{ email: string; role: ContributorRole }>;
  bindings: Array<{ name: string; shape: BindingShape }>;
  configMaps: string[];
  services: Array<{ name: string; shape: ServiceShape }>;
  jobs: Array<{ name: string; finished: boolean }>;
  pvcs: string[];
  tokenSecret: boolean;
  training: Array<{ name: string; kind: TrainingKind; finished: boolean }>;
  experiment: { bounded: boolean; finished: boolean } | undefined;
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
const namespaceName = dnsLabel.filter((name) => !systemNamespaces.has(name) && !name.startsWith('kube-'));
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
    fc.record({ name: rbacName, shape: fc.constantFrom<BindingShape>('admin', 'edit', 'view', 'kubeflow-edit', 'kubeflow-pipelines-edit', 'role', 'cluster-admin') }),
    { maxLength: 3, selector: (b) => b.name },
  ),
  configMaps: fc.uniqueArray(dottedName, { maxLength: 3 }),
  services: fc.uniqueArray(fc.record({ name: dnsLabel, shape: fc.constantFrom<ServiceShape>('cluster-ip', 'headless', 'node-port') }), { maxLength: 2, selector: (x) => x.name }),
  jobs: fc.uniqueArray(fc.record({ name: dnsLabel, finished: fc.boolean() }), { maxLength: 2, selector: (x) => x.name }),
  pvcs: fc.uniqueArray(dottedName, { maxLength: 2 }),
  tokenSecret: fc.boolean(),
  training: fc.uniqueArray(fc.record({ name: dnsLabel, kind: fc.constantFrom(...trainingKinds), finished: fc.boolean() }), { maxLength: 2, selector: (x) => `${x.kind}/${x.name}` }),
  experiment: fc.option(fc.record({ bounded: fc.boolean(), finished: fc.boolean() }), { nil: undefined, freq: 2 }),
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
    const name = kfamBindingName(user, role);
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
  for (const { name, shape } of p.services) {
    const ports = [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }];
    const spec = shape === 'headless' ? { clusterIP: 'None', ports, selector: { app: name } } : { type: shape === 'node-port' ? 'NodePort' : 'ClusterIP', ports, selector: { app: name } };
    out.push({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec });
  }
  for (const { name } of p.jobs) {
    out.push({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace }, spec: { backoffLimit: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['true'] }] } } } });
  }
  for (const name of p.pvcs) {
    out.push({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  }
  if (p.tokenSecret) {
    // since Kubernetes 1.24 a user makes these; the token controller fills them (kubeflow.md)
    out.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'editor-token', namespace, annotations: { 'kubernetes.io/service-account.name': 'default-editor' } }, type: 'kubernetes.io/service-account-token' });
  }
  for (const { name, kind } of p.training) {
    // what the training operator's validators admit (kubeflow/training-operator pkg/webhooks): a container named after
    // the kind's default, and an XGBoostJob with its one Master
    const { field, container } = {
      PyTorchJob: { field: 'pytorchReplicaSpecs', container: 'pytorch' }, TFJob: { field: 'tfReplicaSpecs', container: 'tensorflow' },
      MXJob: { field: 'mxReplicaSpecs', container: 'mxnet' }, XGBoostJob: { field: 'xgbReplicaSpecs', container: 'xgboost' },
    }[kind];
    const replicas = (count: number) => ({ replicas: count, template: { spec: { containers: [{ name: container, image: 'docker.io/kubeflow/trainer:v1' }] } } });
    out.push({ apiVersion: 'kubeflow.org/v1', kind, metadata: { name, namespace }, spec: { [field]: { ...(kind === 'XGBoostJob' ? { Master: replicas(1) } : {}), Worker: replicas(1) } } });
  }
  if (p.experiment) out.push(experimentObject(namespace, p.experiment.bounded));
  return out;
}

const EXPERIMENT = 'search';

function experimentObject(namespace: string, bounded: boolean): KubeObject {
  return {
    apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: EXPERIMENT, namespace },
    spec: {
      objective: { type: 'maximize', goal: 0.9, objectiveMetricName: 'accuracy' }, algorithm: { algorithmName: 'random' },
      parallelTrialCount: 2, ...(bounded ? { maxTrialCount: 4 } : {}),
      parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.1' } }],
      // Katib's validator requires a trial template whose parameters the trial uses (kubeflow/katib validator.go)
      trialTemplate: {
        primaryContainerName: 'training', trialParameters: [{ name: 'learningRate', reference: 'lr' }],
        trialSpec: { apiVersion: 'batch/v1', kind: 'Job', spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training', image: 'docker.io/kubeflowkatib/mxnet-mnist:v0.18.0', command: ['python3', 'mnist.py', '--lr=${trialParameters.learningRate}'] }] } } } },
      },
    },
  };
}

const succeeded = (conditions: Array<{ type: string; status: string; reason?: string }>) => ({ conditions });

/** updates the status as the controllers would have, retrying while a controller writes meanwhile */
async function writeStatus(source: RunningCluster, ref: { group: string; resource: string }, name: string, namespace: string, status: (live: KubeObject) => unknown): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const live = source.api.get(ref, name, namespace)!;
    try {
      source.api.updateStatus(ref, { ...live, status: status(live) });
      return;
    } catch (error) {
      if (attempt > 50) throw error;
      await tick(3);
    }
  }
}

/** runs the finished work of a profile to its end on the source, the way it ends there */
async function finish(source: RunningCluster, p: ProfileCase): Promise<void> {
  const namespace = p.name;
  for (const { name, finished } of p.jobs) {
    // the Job controller's own record of a Job that ran (kubernetes pkg/controller/job)
    if (finished) await writeStatus(source, { group: 'batch', resource: 'jobs' }, name, namespace, () => ({ succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] }));
  }
  for (const { name, kind, finished } of p.training) {
    if (!finished) continue;
    const ref = { group: 'kubeflow.org', resource: `${kind.toLowerCase()}s` };
    await writeStatus(source, ref, name, namespace, () => succeeded([{ type: 'Created', status: 'True' }, { type: 'Succeeded', status: 'True', reason: `${kind}Succeeded` }]));
  }
  if (p.experiment?.finished) {
    // one Trial reaches the goal: Katib marks the Experiment Succeeded from its Trials (and keeps it so on restarts)
    const trials = () => source.api.list(refs.trials, { namespace, labelSelector: `katib.kubeflow.org/experiment=${EXPERIMENT}` });
    await until('trials', () => trials().length > 0);
    const [trial] = trials();
    await writeStatus(source, refs.trials, trial!.metadata.name!, namespace, () => ({ conditions: [{ type: 'Succeeded', status: 'True' }], observation: { metrics: [{ name: 'accuracy', latest: '0.95' }] } }));
    await until('the Experiment to succeed', () => isFinished(source.api.get(refs.experiments, EXPERIMENT, namespace)));
  }
}

function isFinished(object: KubeObject | undefined): boolean {
  return ((object?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [])
    .some((c) => (c.type === 'Succeeded' || c.type === 'Failed' || c.type === 'Complete') && c.status === 'True');
}

/** the paths where `live` lacks what `wanted` sets: every field the user set must be there, equal (arrays item by item) */
function missingFields(wanted: unknown, live: unknown, path = ''): string[] {
  if (wanted === null || typeof wanted !== 'object') return wanted === live ? [] : [path];
  if (Array.isArray(wanted)) {
    if (!Array.isArray(live) || live.length !== wanted.length) return [path];
    return wanted.flatMap((item, index) => missingFields(item, live[index], `${path}[${index}]`));
  }
  if (live === null || typeof live !== 'object') return [path];
  return Object.entries(wanted).flatMap(([key, value]) => missingFields(value, (live as Record<string, unknown>)[key], path ? `${path}.${key}` : key));
}

const resourceOf = (object: KubeObject) => {
  const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
  const kind = object.kind.toLowerCase();
  return { group, resource: kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : `${kind}s` };
};

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
  for (const p of made) await finish(source, p);
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
      // both run Katib's, KServe's and the training operator's admission webhooks, as a Charmed Kubeflow cluster does
      const [source, target] = await Promise.all([startCluster({ kubeflowWebhooks: { ready: true } }), startCluster({ kubeflowWebhooks: { ready: true } })]);
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

        // Nothing a user made is missing or different on the target: each object the generator made in a profile
        // namespace the profile controller made, every field as the user set it (the target may hold more: server
        // defaults, a ClusterIP of its own, a maxTrialCount that keeps a finished Experiment finished), except the
        // RoleBindings no owner could have made. A finished batch Job may instead be named as not run again.
        const skippedReasons = restore.plan.flatMap((entry) => entry.reasons);
        const lost: string[] = [];
        for (const p of c.profiles.filter((p) => p.situation !== 'conflict')) {
          for (const wanted of profileObjects(p)) {
            const there = target.api.get(resourceOf(wanted), wanted.metadata.name!, p.name);
            const id = `${wanted.kind}/${p.name}/${wanted.metadata.name}`;
            const binding = wanted.kind === 'RoleBinding' ? p.bindings.find((b) => b.name === wanted.metadata.name) : undefined;
            if (binding && !ownerMayBind.has(binding.shape)) {
              if (there) lost.push(`${id}: restored, but no owner may bind ${binding.shape}`);
              continue;
            }
            if (!there) {
              const finishedJob = wanted.kind === 'Job' && p.jobs.find((j) => j.name === wanted.metadata.name)?.finished;
              if (!(finishedJob && skippedReasons.some((r) => r.includes(id)))) lost.push(`${id}: missing`);
              continue;
            }
            // the API serves an object at its storage version (AuthorizationPolicy v1beta1 comes back as v1): the same object
            const { apiVersion: _version, ...fieldsSet } = wanted;
            const fields = missingFields(fieldsSet, there);
            if (fields.length) lost.push(`${id}: different ${fields.join(', ')}`);
          }
        }
        expect(lost.join('\n')).to.equal('');

        // Finished work stays finished on the target: no Pod for a finished training job, no Trial for a finished
        // Experiment, once the controllers had time to start the unfinished ones.
        await tick(60);
        const rerun: string[] = [];
        for (const p of c.profiles.filter((p) => p.situation !== 'conflict')) {
          for (const { name, kind, finished } of p.training) {
            if (finished && target.api.list(refs.pods, { namespace: p.name, labelSelector: `training.kubeflow.org/job-name=${name}` }).length) rerun.push(`${kind}/${p.name}/${name}`);
          }
          if (p.experiment?.finished) {
            if (target.api.list(refs.trials, { namespace: p.name, labelSelector: `katib.kubeflow.org/experiment=${EXPERIMENT}` }).length) rerun.push(`Experiment/${p.name}/${EXPERIMENT}: new Trials`);
            if (!isFinished(target.api.get(refs.experiments, EXPERIMENT, p.name))) rerun.push(`Experiment/${p.name}/${EXPERIMENT}: not finished`);
          }
        }
        expect(rerun.join('\n')).to.equal('');
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
