import { expect } from 'chai';
import type { KubeObject } from '../../../../src/kube/types.ts';
import { kubeflowControllers } from './controllers.ts';
import { kubeflowCrds } from './crds.ts';
import { defaultNamespaceLabels, profileFinalizer, profileNamespaceLabels } from './profile-controller.ts';
import { completedLabel, workflowsRef } from './argo-controller.ts';
import { refs } from './refs.ts';
import type { Cluster } from '../cluster.ts';
import { inProcessCluster } from '../in-process.ts';
import type { InProcessApi, ResourceRef } from '../contract.ts';

async function eventually<T>(probe: () => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function profile(name: string, owner: string, hard?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name },
    spec: { owner: { kind: 'User', name: owner }, ...(hard ? { resourceQuotaSpec: { hard } } : {}) },
  };
}

const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();

/**
 * The profile controller's API, counting its reads of each Profile: every reconcile starts by reading the Profile it
 * is about (profile-controller.ts reconcileProfile, as upstream's Reconcile starts with r.Get of the Profile), so the
 * count is how many times the controller has looked at it, whether or not it wrote anything.
 */
function countingProfileReads(api: Cluster) {
  const counts = new Map<string, number>();
  const waiters = new Set<() => void>();
  const noted = (ref: ResourceRef, name: string) => {
    if (ref.group !== refs.profiles.group || ref.resource !== refs.profiles.resource) return;
    counts.set(name, (counts.get(name) ?? 0) + 1);
    for (const wake of [...waiters]) wake();
  };
  const counted: InProcessApi = new Proxy(api, {
    get(target, property) {
      if (property === 'get' || property === 'read') {
        return (ref: ResourceRef, name: string, namespace?: string) => {
          const out = property === 'get' ? target.get(ref, name, namespace) : target.read(ref, name, namespace);
          noted(ref, name);
          return out;
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    api: counted,
    count: (name: string) => counts.get(name) ?? 0,
    /** resolves once the controller has read the Profile `times` times, after that reconcile has run to its end */
    atLeast: (name: string, times: number) => new Promise<void>((resolve) => {
      const check = () => {
        if ((counts.get(name) ?? 0) < times) return;
        waiters.delete(check);
        // the read is the reconcile's first step and the reconcile is synchronous: a microtask later it is over
        queueMicrotask(resolve);
      };
      waiters.add(check);
      check();
    }),
  };
}

describe('simulated Kubeflow controllers', () => {
  let api: Cluster;
  let stops: Array<() => void>;
  let profileReconciles: ReturnType<typeof countingProfileReads>;
  /** the probe's first truthy answer, asked now and after every change in the cluster: a sign, not a poll */
  const until = <T>(probe: () => T | undefined | false | null): Promise<T> => new Promise<T>((resolve) => {
    const first = probe();
    if (first) return resolve(first);
    const unsubscribe = api.subscribe(() => {
      const value = probe();
      if (!value) return;
      unsubscribe();
      resolve(value);
    });
  });

  beforeEach(() => {
    const cluster = inProcessCluster();
    api = cluster.api;
    profileReconciles = countingProfileReads(api);
    stops = [cluster.stop, ...kubeflowControllers().map((controller) => controller.start(controller.name === 'profile-controller' ? profileReconciles.api : api))];
  });
  afterEach(() => stops.forEach((stop) => stop()));

  it('writes CRDs with names, scope, one storage version and permissive schemas', () => {
    const crds = kubeflowCrds();
    const byName = new Map(crds.map((crd) => [crd.metadata.name, crd.spec as Record<string, any>]));
    expect(byName.get('profiles.kubeflow.org')?.scope).to.equal('Cluster');
    expect(byName.get('notebooks.kubeflow.org')?.versions.map((v: any) => v.name)).to.deep.equal(['v1', 'v1beta1', 'v1alpha1']);
    expect(byName.get('inferenceservices.serving.kserve.io')?.names.shortNames).to.deep.equal(['isvc']);
    for (const crd of crds) {
      const spec = crd.spec as Record<string, any>;
      expect(spec.versions.filter((v: any) => v.storage), crd.metadata.name).to.have.length(1);
      expect(spec.versions[0].schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields']).to.equal(true);
      expect(crd.metadata.name).to.equal(`${spec.names.plural}.${spec.group}`);
    }
    expect(byName.has('authorizationpolicies.security.istio.io')).to.equal(true);
    expect(byName.has('workflows.argoproj.io')).to.equal(true);
  });

  it('gives a Profile its namespace, service accounts, bindings, policy, quota and finalizer, all owned by it', async () => {
    const created = api.create(refs.profiles, profile('alice', 'alice@example.com', { cpu: '8' }));
    const namespace = await eventually(() => api.get(refs.namespaces, 'alice'), 'namespace alice');
    expect(namespace.metadata.annotations?.owner).to.equal('alice@example.com');
    expect(namespace.metadata.labels).to.include(profileNamespaceLabels);
    await eventually(() => api.get(refs.resourceQuotas, 'kf-resource-quota', 'alice'), 'quota');
    const owned = [
      namespace,
      ...api.list(refs.serviceAccounts, { namespace: 'alice' }).filter((o) => o.metadata.name !== 'default'),
      ...api.list(refs.roleBindings, { namespace: 'alice' }),
      api.get(refs.authorizationPolicies, 'ns-owner-access-istio', 'alice')!,
      api.get(refs.resourceQuotas, 'kf-resource-quota', 'alice')!,
    ];
    expect(names(api.list(refs.roleBindings, { namespace: 'alice' }))).to.deep.equal(['default-editor', 'default-viewer', 'namespaceAdmin']);
    for (const object of owned) {
      expect(object.metadata.ownerReferences, `${object.kind}/${object.metadata.name}`).to.deep.include({
        apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: 'alice', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true,
      });
    }
    const admin = api.get(refs.roleBindings, 'namespaceAdmin', 'alice')!;
    expect(admin.metadata.annotations).to.deep.equal({ user: 'alice@example.com', role: 'admin' });
    expect((admin.roleRef as { name: string }).name).to.equal('kubeflow-admin');
    expect(api.get(refs.profiles, 'alice')!.metadata.finalizers).to.deep.equal([profileFinalizer]);
  });

  // The three behaviours of kubeflow/kubeflow v1.10.0 components/profile-controller/controllers/profile_controller.go
  // that a restore meets on a real cluster.
  it('refuses a namespace that exists with another owner, and the refusal condition never shows (Update drops status)', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bob', annotations: { owner: 'mallory@example.com' } } });
    const created = api.create(refs.profiles, profile('bob', 'bob@example.com'));
    // the sign that the refusal has happened: the controller has read the Profile (its reconcile runs to the end
    // before this test goes on)
    await profileReconciles.atLeast('bob', 1);
    const bob = api.get(refs.profiles, 'bob')!;
    expect(bob.status).to.equal(undefined);
    // nothing was written at all: a no-op Update is no write, so nothing requeues it either
    expect(bob.metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
    expect(api.get(refs.roleBindings, 'namespaceAdmin', 'bob')).to.equal(undefined);
    expect(api.get(refs.namespaces, 'bob')!.metadata.annotations?.owner).to.equal('mallory@example.com');
  });

  it('reacts only to namespaces it owns: deleting or fixing a conflicting namespace wakes no Profile, a change to the Profile does', async () => {
    for (const name of ['dave', 'erin']) {
      api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { owner: 'mallory@example.com' } } });
      api.create(refs.profiles, profile(name, `${name}@example.com`));
    }
    // The refusal writes nothing, so no write can tell that it has happened; the controller reading the Profile can:
    // each one's first reconcile is the sign (no sleep, no guess at how long a loaded machine takes).
    await profileReconciles.atLeast('dave', 1);
    await profileReconciles.atLeast('erin', 1);
    api.delete(refs.namespaces, 'dave');
    // a namespace goes through Terminating until the namespace controller has emptied it and removed its finalizer
    // (kubernetes pkg/controller/namespace): its disappearance is the sign the deletion is done
    await until(() => api.get(refs.namespaces, 'dave') === undefined);
    const erin = api.get(refs.namespaces, 'erin')!;
    api.update(refs.namespaces, { ...erin, metadata: { ...erin.metadata, annotations: { owner: 'erin@example.com' } } });
    // A Profile created after the namespace events is reconciled after whatever they enqueued (events reach the
    // controller in resourceVersion order, into one queue with one delay): its first reconcile is the sign that the
    // namespace events have had every effect they will have.
    api.create(refs.profiles, profile('yan', 'yan@example.com'));
    await profileReconciles.atLeast('yan', 1);
    // no Profile woke: looked at once each, for the refusal, and nothing made
    expect(profileReconciles.count('dave')).to.equal(1);
    expect(profileReconciles.count('erin')).to.equal(1);
    expect(api.get(refs.namespaces, 'dave')).to.equal(undefined);
    expect(api.get(refs.serviceAccounts, 'default-editor', 'erin')).to.equal(undefined);
    // what a rerun of the restore does: a change to each Profile the controller must look at again
    for (const name of ['dave', 'erin']) api.mergePatch(refs.profiles, name, undefined, { metadata: { annotations: { 'kubeflow-upgrader/reconcile-requested-at': 'now' } } });
    const dave = await until(() => api.get(refs.namespaces, 'dave'));
    expect(dave.metadata.annotations?.owner).to.equal('dave@example.com');
    await until(() => api.get(refs.serviceAccounts, 'default-editor', 'erin'));
  });

  it('adopts an existing namespace of the right owner as it is: only missing label keys are added, no ownerReference', async () => {
    api.create(refs.namespaces, {
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: 'frank', annotations: { owner: 'frank@example.com' }, labels: { 'pod-security.kubernetes.io/enforce': 'baseline', team: 'ml' } },
    });
    api.create(refs.profiles, profile('frank', 'frank@example.com'));
    await eventually(() => api.get(refs.serviceAccounts, 'default-editor', 'frank'), 'frank reconciled');
    const namespace = api.get(refs.namespaces, 'frank')!;
    // the default labels of the charm, not istio-injection (set only on a namespace the controller creates)
    // (and the name label the API server puts on every namespace: kubernetes/kubernetes pkg/registry/core/namespace/strategy.go)
    expect(namespace.metadata.labels).to.deep.equal({ ...defaultNamespaceLabels, 'pod-security.kubernetes.io/enforce': 'baseline', team: 'ml', 'kubernetes.io/metadata.name': 'frank' });
    expect(namespace.metadata.ownerReferences).to.equal(undefined);
  });

  it('adds the KFP objects, default service account and root CA config maps to a profile namespace', async () => {
    api.create(refs.profiles, profile('carol', 'carol@example.com'));
    await eventually(() => api.get(refs.secrets, 'mlpipeline-minio-artifact', 'carol'), 'kfp secret');
    await eventually(() => api.get(refs.configMaps, 'istio-ca-root-cert', 'carol'), 'istio CA');
    const namespace = api.get(refs.namespaces, 'carol')!;
    // kfp-launcher only with the charm's default_pipeline_root, which is unset by default (sync.py)
    expect(api.get(refs.configMaps, 'kfp-launcher', 'carol')).to.equal(undefined);
    for (const [ref, name] of [[refs.configMaps, 'metadata-grpc-configmap'], [refs.deployments, 'ml-pipeline-ui-artifact'], [refs.podDefaults, 'access-ml-pipeline'], [refs.authorizationPolicies, 'ns-owner-access-istio-charmed']] as const) {
      const object = await eventually(() => api.get(ref, name, 'carol'), name);
      expect(object.metadata.ownerReferences?.[0]).to.include({ kind: 'Namespace', uid: namespace.metadata.uid, controller: true });
    }
    expect(api.get(refs.serviceAccounts, 'default', 'carol')!.metadata.ownerReferences).to.equal(undefined);
    expect(api.get(refs.configMaps, 'kube-root-ca.crt', 'carol')).to.not.equal(undefined);
  });

  it('turns a Notebook into a StatefulSet, Service, VirtualService and pod, and reports it ready', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dave' } });
    const notebook = api.create(refs.notebooks, {
      apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'nb', namespace: 'dave' },
      spec: { template: { spec: { containers: [{ name: 'nb', image: 'kubeflownotebookswg/jupyter-scipy:v1.10.0' }] } } },
    });
    const pod = await eventually(() => api.get(refs.pods, 'nb-0', 'dave'), 'notebook pod');
    const statefulSet = api.get(refs.statefulSets, 'nb', 'dave')!;
    expect(statefulSet.metadata.ownerReferences?.[0]).to.include({ kind: 'Notebook', uid: notebook.metadata.uid, controller: true });
    expect(pod.metadata.ownerReferences?.[0]).to.include({ kind: 'StatefulSet', uid: statefulSet.metadata.uid, controller: true });
    expect(api.get(refs.services, 'nb', 'dave')).to.not.equal(undefined);
    expect(api.get(refs.virtualServices, 'notebook-dave-nb', 'dave')).to.not.equal(undefined);
    await eventually(() => (api.get(refs.notebooks, 'nb', 'dave')!.status as any)?.readyReplicas === 1, 'notebook status');
  });

  it('serves an InferenceService and runs a Katib Experiment through owned children', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'erin' } });
    api.create(refs.inferenceServices, {
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'sklearn-iris', namespace: 'erin' },
      spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://kfserving-examples/models/sklearn/1.0/model' } } },
    });
    api.create(refs.experiments, {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'random', namespace: 'erin' },
      spec: { parallelTrialCount: 2, maxTrialCount: 6, algorithm: { algorithmName: 'random' }, parameters: [{ name: 'lr', feasibleSpace: { min: '0.01', max: '0.1' } }] },
    });
    await eventually(() => api.get(refs.virtualServices, 'sklearn-iris', 'erin'), 'isvc virtual service');
    expect(api.get(refs.deployments, 'sklearn-iris-predictor', 'erin')!.metadata.ownerReferences?.[0]?.kind).to.equal('InferenceService');
    const trials = await eventually(() => { const t = api.list(refs.trials, { namespace: 'erin' }); return t.length === 2 && t; }, 'two trials');
    for (const trial of trials) expect(trial.metadata.name).to.match(/^random-[a-z0-9]{8}$/);
    expect(api.get(refs.suggestions, 'random', 'erin')!.metadata.ownerReferences?.[0]?.kind).to.equal('Experiment');
  });

  // katib v0.18.0 experiment_controller.go and training-operator v1.9.0 common/job.go decide from the status alone
  it('starts no Trial for a complete Experiment and no Pod for a finished job; starts the unfinished ones', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gina' } });
    const experiment = (name: string, status?: unknown): KubeObject => ({
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name, namespace: 'gina' },
      spec: { parallelTrialCount: 2, maxTrialCount: 6, algorithm: { algorithmName: 'random' } }, ...(status ? { status } : {}),
    });
    const job = (name: string, status?: unknown): KubeObject => ({
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name, namespace: 'gina' },
      spec: { pytorchReplicaSpecs: { Master: { replicas: 1, template: { spec: { containers: [{ name: 'pytorch', image: 'pytorch' }] } } }, Worker: { replicas: 2, template: { spec: { containers: [{ name: 'pytorch', image: 'pytorch' }] } } } } },
      ...(status ? { status } : {}),
    });
    const succeeded = (reason: string) => ({ conditions: [{ type: 'Created', status: 'True' }, { type: 'Succeeded', status: 'True', reason }] });
    // The API server drops a status sent with create where the kind has a status subresource: a restore writes the
    // archived status right after the object, through /status, before the controller's queue reconciles it.
    const restore = (ref: { group: string; resource: string }, object: KubeObject) => {
      const { status, ...rest } = object;
      const created = api.create(ref, rest as KubeObject);
      if (status) api.updateStatus(ref, { ...created, status });
    };
    restore(refs.experiments, experiment('done', { ...succeeded('ExperimentGoalReached'), trials: 6, trialsSucceeded: 6 }));
    restore(refs.experiments, experiment('half', { conditions: [{ type: 'Created', status: 'True' }, { type: 'Running', status: 'True' }], trials: 4, trialsSucceeded: 4 }));
    restore(refs.experiments, experiment('new'));
    const pytorchjobs = { group: 'kubeflow.org', resource: 'pytorchjobs' };
    restore(pytorchjobs, job('trained', succeeded('PyTorchJobSucceeded')));
    restore(pytorchjobs, job('training'));
    const trialsOf = (name: string) => api.list(refs.trials, { namespace: 'gina', labelSelector: `katib.kubeflow.org/experiment=${name}` });
    await eventually(() => trialsOf('new').length === 2, 'trials of the new Experiment');
    // 6 allowed, 4 already completed: two more, whatever parallelTrialCount would allow
    await eventually(() => trialsOf('half').length === 2, 'trials of the unfinished Experiment');
    const podsOf = (name: string) => api.list(refs.pods, { namespace: 'gina', labelSelector: `training.kubeflow.org/job-name=${name}` });
    const pods = await eventually(() => { const p = podsOf('training'); return p.length === 3 && p; }, 'pods of the unfinished job');
    expect(names(pods)).to.deep.equal(['training-master-0', 'training-worker-0', 'training-worker-1']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(trialsOf('done')).to.deep.equal([]);
    expect(api.get(refs.suggestions, 'done', 'gina')).to.equal(undefined);
    expect(podsOf('trained')).to.deep.equal([]);
    expect((api.get(refs.experiments, 'done', 'gina')!.status as { conditions: unknown[] }).conditions).to.have.length(2);
  });

  // katib v0.18.0 experiment_controller.go, the restart branch: no maxTrialCount and status.trials not 0 restarts a
  // complete Experiment; the recount from its Trials ends the restart only where the Trials are
  it('restarts a finished Experiment without maxTrialCount that has no Trials; keeps one with Trials, or with a maxTrialCount, finished', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'hana' } });
    const spec = { parallelTrialCount: 2, objective: { type: 'maximize', goal: 0.9, objectiveMetricName: 'accuracy' }, algorithm: { algorithmName: 'random' } };
    const goalReached = { conditions: [{ type: 'Created', status: 'True' }, { type: 'Succeeded', status: 'True', reason: 'ExperimentGoalReached' }], trials: 3, trialsSucceeded: 3 };
    const trialsOf = (name: string) => api.list(refs.trials, { namespace: 'hana', labelSelector: `katib.kubeflow.org/experiment=${name}` });
    // on its own cluster: it runs, one Trial reaches the goal, and it stays Succeeded through every restart
    api.create(refs.experiments, { apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'home', namespace: 'hana' }, spec });
    const [first] = await eventually(() => { const t = trialsOf('home'); return t.length === 2 && t; }, 'trials of home');
    api.updateStatus(refs.trials, { ...first!, status: { conditions: [{ type: 'Succeeded', status: 'True' }], observation: { metrics: [{ name: 'accuracy', latest: '0.95' }] } } });
    await eventually(() => (api.get(refs.experiments, 'home', 'hana')!.status as { conditions?: Array<{ type: string; status: string }> }).conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True'), 'home succeeded');
    // restored without its Trials: created, then its status written, as a restore does (the API server drops a status
    // sent with create): restarted, new Trials
    const restored = (name: string, experimentSpec: Record<string, unknown>) => {
      const made = api.create(refs.experiments, { apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name, namespace: 'hana' }, spec: experimentSpec });
      api.updateStatus(refs.experiments, { ...made, status: goalReached });
    };
    restored('moved', spec);
    await eventually(() => trialsOf('moved').length === 2, 'trials of the restarted Experiment');
    // the same with a maxTrialCount (what a restore pins): finished for good
    restored('pinned', { ...spec, maxTrialCount: 3 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(trialsOf('home')).to.have.length(2);
    expect(trialsOf('pinned')).to.deep.equal([]);
    expect(api.get(refs.experiments, 'pinned', 'hana')!.status).to.deep.equal(goalReached);
  });

  // argo-workflows controller.go tweakWorkflowlist and operator.go operate
  it('runs a Workflow with no phase from the start; never touches one labelled completed, whatever its status', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ines' } });
    const workflow = (name: string, labels?: Record<string, string>, status?: unknown): KubeObject => ({
      apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow', metadata: { name, namespace: 'ines', ...(labels ? { labels } : {}) },
      spec: { entrypoint: 'train', templates: [{ name: 'train', container: { image: 'python:3.11' } }] }, ...(status ? { status } : {}),
    });
    const podsOf = (name: string) => api.list(refs.pods, { namespace: 'ines', labelSelector: `workflows.argoproj.io/workflow=${name}` });
    // a finished Workflow restored without its status and labels, and one restored with its completed label only
    api.create(workflowsRef, workflow('rerun'));
    api.create(workflowsRef, workflow('left-alone', { [completedLabel]: 'true' }));
    api.create(workflowsRef, workflow('done', { [completedLabel]: 'true' }, { phase: 'Succeeded' }));
    await eventually(() => podsOf('rerun').length === 1, 'the pod of the Workflow started again');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(podsOf('left-alone')).to.deep.equal([]);
    expect(podsOf('done')).to.deep.equal([]);
    expect(api.get(workflowsRef, 'left-alone', 'ines')!.status).to.equal(undefined);
  });

  it('lays out the Juju model workloads with images in the kubeflow namespace', async () => {
    const set = await eventually(() => api.get(refs.statefulSets, 'kfp-api', 'kubeflow'), 'kfp-api statefulset');
    expect(set.metadata.labels?.['app.kubernetes.io/name']).to.equal('kfp-api');
    const images = (set.spec as any).template.spec.containers.map((c: any) => c.image);
    expect(images).to.include('charmedkubeflow/api-server:2.5.0');
    await eventually(() => api.get(refs.serviceAccounts, 'default', 'kubeflow'), 'default SA in kubeflow');
  });

  it('releases the finalizer of a deleted Profile', async () => {
    api.create(refs.profiles, profile('frank', 'frank@example.com'));
    await eventually(() => api.get(refs.profiles, 'frank')?.metadata.finalizers?.length, 'finalizer');
    api.delete(refs.profiles, 'frank');
    await eventually(() => !api.get(refs.profiles, 'frank'), 'profile gone');
  });
});
