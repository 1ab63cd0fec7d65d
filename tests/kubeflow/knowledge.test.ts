import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { contributorBindingName, isContributorObject } from '../../src/kubeflow/contributors.ts';
import { matchesLabelSelector, parseLabelSelector } from '../../src/kubeflow/label-selector.ts';
import { findProfileNamespaces, judgeProfileNamespaces } from '../../src/kubeflow/profile-namespaces.ts';
import { asRestoredForStatus, awaitsResume, finishedExperimentPin, restoresStatus, statusKindsServed, statusToWrite, suspendedForStatus } from '../../src/kubeflow/status-kinds.ts';
import { filteredOutReason, parseResourceFilter } from '../../src/kubeflow/resource-filters.ts';
import { stripServerFields, stripServerMetadata } from '../../src/kubeflow/strip.ts';

const obj = (apiVersion: string, kind: string, name: string, namespace?: string, extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, ...extra });

describe('kubeflow knowledge', () => {
  // Vectors worked out by hand from getBindingName (kubeflow/kubeflow v1.10.0 components/access-management/kfam/
  // bindings.go): replace runs of [^a-zA-Z0-9] in the user name with '-', join 'User', name, 'ClusterRole', role with
  // '-', lower-case, and replace runs of [^a-zA-Z0-9] with '-' once more.
  const kfamVectors: Array<[user: string, role: 'edit' | 'view', name: string]> = [
    ['alice@example.com', 'edit', 'user-alice-example-com-clusterrole-edit'],
    ['Jane.O_Neil+ml@Example.CO.uk', 'view', 'user-jane-o-neil-ml-example-co-uk-clusterrole-view'],
    // leading and trailing punctuation: the first pass leaves '-' at the ends, the second folds it into the joins
    ['-bob-@x.io', 'view', 'user-bob-x-io-clusterrole-view'],
    ['.carol.', 'edit', 'user-carol-clusterrole-edit'],
    ['__dave@x.io__', 'edit', 'user-dave-x-io-clusterrole-edit'],
    ['a--b@x.io', 'view', 'user-a-b-x-io-clusterrole-view'],
    // non-ASCII letters are not [a-zA-Z0-9]: each run becomes one '-'
    ['Ünïcode@exämple.org', 'edit', 'user-n-code-ex-mple-org-clusterrole-edit'],
    ['U\u0308ber@x.io', 'edit', 'user-u-ber-x-io-clusterrole-edit'],
    ['😀eve😀@x.io', 'view', 'user-eve-x-io-clusterrole-view'],
    ['李雷@example.cn', 'edit', 'user-example-cn-clusterrole-edit'],
    ['MiXeD@Case.IO', 'view', 'user-mixed-case-io-clusterrole-view'],
    ['', 'edit', 'user-clusterrole-edit'],
  ];
  for (const [user, role, name] of kfamVectors) {
    it(`names the contributor ${JSON.stringify(user)} (${role}) ${name}, as KFAM's getBindingName does`, () => {
      expect(contributorBindingName(user, role)).to.equal(name);
    });
  }

  it('recognises a contributor by its KFAM name and annotations', () => {
    const binding = obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'user-bob-x-io-clusterrole-view', 'ns');
    binding.metadata.annotations = { user: 'bob@x.io', role: 'view' };
    expect(isContributorObject(binding)).to.equal(true);
    expect(isContributorObject({ ...binding, metadata: { ...binding.metadata, name: 'other' } })).to.equal(false);
  });

  it('parses and matches label selectors, and rejects bad ones in one sentence', () => {
    const selector = parseLabelSelector('app.kubernetes.io/part-of=kubeflow-profile,tier in (a, b),!legacy,env!=prod');
    expect(matchesLabelSelector(selector, { 'app.kubernetes.io/part-of': 'kubeflow-profile', tier: 'b' })).to.equal(true);
    expect(matchesLabelSelector(selector, { 'app.kubernetes.io/part-of': 'kubeflow-profile', tier: 'c' })).to.equal(false);
    expect(matchesLabelSelector(selector, { 'app.kubernetes.io/part-of': 'kubeflow-profile', tier: 'a', legacy: '' })).to.equal(false);
    expect(() => parseLabelSelector('bad key!=x y')).to.throw(/^The label selector "bad key!=x y" has an invalid/);
  });

  it('takes a namespace only with its Profile, and names every look-alike it leaves out with the reason', () => {
    const profile = (name: string, owner: string) => ({ ...obj('kubeflow.org/v1', 'Profile', name), spec: { owner: { kind: 'User', name: owner } } });
    const profiles = [profile('alice', 'a@x'), profile('bob', 'b@x'), profile('carol', 'new@x'), profile('kubeflow', 'k@x')];
    profiles.forEach((p, i) => { p.metadata.uid = `uid-${i}`; });
    const ns = (name: string, owner?: string, labels?: Record<string, string>, controller?: KubeObject) => ({
      apiVersion: 'v1', kind: 'Namespace',
      metadata: {
        name, ...(owner ? { annotations: { owner } } : {}), ...(labels ? { labels } : {}),
        ...(controller ? { ownerReferences: [{ apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: controller.metadata.name!, uid: controller.metadata.uid!, controller: true }] } : {}),
      },
    });
    const { taken, leftOut } = judgeProfileNamespaces([
      ns('alice', 'a@x'),
      // existed before Profile bob, for someone else: the profile controller refuses it
      ns('bob', 'mallory@x'),
      // made by Profile carol for its first owner; spec.owner was edited since (the controller now refuses it here)
      ns('carol', 'old@x', undefined, profiles[2]),
      // looks like a profile namespace, but no Profile could make it again
      ns('orphan', 'o@x', { 'app.kubernetes.io/part-of': 'kubeflow-profile' }),
      ns('labelled', undefined, { 'app.kubernetes.io/part-of': 'kubeflow-profile' }),
      ns('kubeflow', 'k@x'),
      ns('default'),
    ], profiles);
    expect([...taken.keys()]).to.deep.equal(['alice', 'carol']);
    expect(taken.get('alice')).to.equal('profile namespace of Profile/alice (owner a@x)');
    expect(taken.get('carol')).to.match(/made for an earlier owner \(annotation "old@x", Profile owner "new@x"\)/);
    expect(leftOut.map((l) => l.namespace)).to.deep.equal(['bob', 'kubeflow', 'labelled', 'orphan']);
    expect(leftOut.find((l) => l.namespace === 'bob')!.reason).to.equal(
      'namespace bob was not made by Profile/bob and its owner annotation "mallory@x", not "b@x": the profile controller refuses it, so it holds no state of that Profile');
    expect(leftOut.find((l) => l.namespace === 'orphan')!.reason).to.equal(
      'namespace orphan has no Profile orphan; only the profile controller makes profile namespaces, from their Profile, so a restore could not recreate it');
    expect(leftOut.find((l) => l.namespace === 'kubeflow')!.reason).to.match(/a Profile named kubeflow would claim a system namespace, which a restore refuses/);
    expect(() => findProfileNamespaces([], [], 'a=(b')).to.throw(/label selector/);
  });

  it('reads include-resources and exclude-resources; exclusion wins', () => {
    const filter = parseResourceFilter('notebooks.kubeflow.org,Secret,configmaps', 'secrets');
    const secret = { group: '', resource: 'secrets', kind: 'Secret' };
    expect(filteredOutReason(filter, secret)).to.equal('excluded by exclude-resources (secrets)');
    expect(filteredOutReason(filter, { group: 'kubeflow.org', resource: 'notebooks', kind: 'Notebook' })).to.equal(undefined);
    expect(filteredOutReason(filter, { group: 'other.io', resource: 'notebooks', kind: 'Notebook' })).to.match(/^not in include-resources/);
    expect(filteredOutReason(parseResourceFilter('', ''), secret)).to.equal(undefined);
    expect(() => parseResourceFilter('note books', undefined)).to.throw('include-resources: "note books" is not a resource name');
  });

  it('restores the status of Katib Experiments and training jobs, and creates training jobs suspended until it is written', () => {
    // derived from what is served (discovery), not a list: training-operator 1.8 serves MXJob, 1.9 JAXJob instead
    const served = [
      { group: 'kubeflow.org', version: 'v1', kind: 'Profile' }, { group: 'kubeflow.org', version: 'v1', kind: 'Notebook' },
      { group: 'kubeflow.org', version: 'v1beta1', kind: 'Experiment' }, { group: 'kubeflow.org', version: 'v1beta1', kind: 'Trial' },
      { group: 'kubeflow.org', version: 'v1', kind: 'PyTorchJob' }, { group: 'kubeflow.org', version: 'v1', kind: 'MXJob' },
      { group: 'kubeflow.org', version: 'v1beta1', kind: 'ScheduledWorkflow' }, { group: 'batch', version: 'v1', kind: 'Job' },
      { group: 'example.com', version: 'v1', kind: 'PyTorchJob' },
    ];
    expect(statusKindsServed(served).map((k) => k.kind)).to.deep.equal(['Experiment', 'PyTorchJob', 'MXJob']);
    expect(restoresStatus(obj('kubeflow.org/v1', 'MXJob', 'm', 'a'))).to.equal(true);
    expect(restoresStatus(obj('kubeflow.org/v1', 'Profile', 'p'))).to.equal(false);
    expect(restoresStatus(obj('kubeflow.org/v1beta1', 'Experiment', 'e', 'a'))).to.equal(true);
    expect(restoresStatus(obj('kubeflow.org/v1', 'Notebook', 'n', 'a'))).to.equal(false);
    expect(restoresStatus(obj('example.com/v1', 'PyTorchJob', 'p', 'a'))).to.equal(false);
    expect(suspendedForStatus(obj('kubeflow.org/v1beta1', 'Experiment', 'e', 'a'))).to.equal(undefined);
    const bare = obj('kubeflow.org/v1', 'TFJob', 't', 'a', { spec: { tfReplicaSpecs: {} } });
    expect(suspendedForStatus(bare)).to.deep.equal({
      create: { ...bare, spec: { tfReplicaSpecs: {}, runPolicy: { suspend: true } } },
      resume: { spec: { runPolicy: null } },
    });
    expect(bare.spec).to.deep.equal({ tfReplicaSpecs: {} });
    const withPolicy = obj('kubeflow.org/v1', 'PyTorchJob', 'p', 'a', { spec: { runPolicy: { cleanPodPolicy: 'None' } } });
    expect(suspendedForStatus(withPolicy)?.resume).to.deep.equal({ spec: { runPolicy: { suspend: null } } });
    expect(suspendedForStatus(obj('kubeflow.org/v1', 'MPIJob', 'm', 'a', { spec: { runPolicy: { suspend: false } } }))?.resume).to.deep.equal({ spec: { runPolicy: { suspend: false } } });
    expect(suspendedForStatus(obj('kubeflow.org/v1', 'PaddleJob', 'p', 'a', { spec: { runPolicy: { suspend: true } } }))).to.equal(undefined);
  });

  it('a finished Experiment without maxTrialCount is pinned to the trials it ran, within what Katib\'s webhook accepts', () => {
    const succeeded = (trials: number) => ({ trials, conditions: [{ type: 'Created', status: 'True' }, { type: 'Succeeded', status: 'True', reason: 'ExperimentGoalReached' }] });
    const experiment = (spec: Record<string, unknown>) => obj('kubeflow.org/v1beta1', 'Experiment', 'e', 'a', { spec });
    expect(finishedExperimentPin(experiment({ parallelTrialCount: 2 }), succeeded(7))).to.equal(7);
    expect(finishedExperimentPin(experiment({ parallelTrialCount: 4, maxFailedTrialCount: 5 }), succeeded(2)), 'never below maxFailedTrialCount').to.equal(5);
    expect(finishedExperimentPin(experiment({}), succeeded(1)), 'parallelTrialCount defaults to 3').to.equal(3);
    expect(finishedExperimentPin(experiment({ maxTrialCount: 9 }), succeeded(4)), 'has its own').to.equal(undefined);
    expect(finishedExperimentPin(experiment({}), succeeded(0)), 'Katib restarts it only with trials').to.equal(undefined);
    expect(finishedExperimentPin(experiment({}), { trials: 3, conditions: [{ type: 'Running', status: 'True' }] }), 'unfinished').to.equal(undefined);
    expect(finishedExperimentPin(obj('kubeflow.org/v1', 'PyTorchJob', 'p', 'a'), succeeded(3))).to.equal(undefined);
    const finished: KubeObject = { ...experiment({ parallelTrialCount: 2 }), status: succeeded(6) };
    expect(asRestoredForStatus(finished).spec).to.deep.equal({ parallelTrialCount: 2, maxTrialCount: 6 });
    expect(finished.spec).to.deep.equal({ parallelTrialCount: 2 });
  });

  it('an unfinished Experiment is restored without the Trials it had in flight; a finished one as archived', () => {
    const experiment = obj('kubeflow.org/v1beta1', 'Experiment', 'e', 'a', { spec: {} });
    const running = { conditions: [{ type: 'Running', status: 'True' }], trials: 5, trialsSucceeded: 3, trialsRunning: 1, trialsPending: 1, runningTrialList: ['e-a'], pendingTrialList: ['e-b'], succeededTrialList: ['e-c'] };
    expect(statusToWrite(experiment, running)).to.deep.equal({ conditions: [{ type: 'Running', status: 'True' }], trials: 3, trialsSucceeded: 3, succeededTrialList: ['e-c'] });
    const done = { ...running, conditions: [{ type: 'Succeeded', status: 'True' }] };
    expect(statusToWrite(experiment, done)).to.equal(done);
    const job = { conditions: [{ type: 'Running', status: 'True' }], replicaStatuses: {} };
    expect(statusToWrite(obj('kubeflow.org/v1', 'TFJob', 't', 'a'), job)).to.equal(job);
  });

  it('a training job still suspended by the restore awaits its resume; one the user suspended does not', () => {
    const job = obj('kubeflow.org/v1', 'PyTorchJob', 'p', 'a', { spec: { runPolicy: { cleanPodPolicy: 'None' } } });
    expect(awaitsResume(job, suspendedForStatus(job)!.create)).to.equal(true);
    expect(awaitsResume(job, job)).to.equal(false);
    const userSuspended = obj('kubeflow.org/v1', 'PyTorchJob', 'p', 'a', { spec: { runPolicy: { suspend: true } } });
    expect(awaitsResume(userSuspended, userSuspended)).to.equal(false);
  });

  it('strips what the server owns without touching the input', () => {
    const original: KubeObject = {
      apiVersion: 'kubeflow.org/v1', kind: 'Notebook',
      metadata: {
        name: 'nb', namespace: 'alice', uid: 'u', resourceVersion: '7', generation: 2, creationTimestamp: 't', managedFields: [{}],
        deletionTimestamp: 't', deletionGracePeriodSeconds: 30, selfLink: '/x', labels: { a: 'b' }, finalizers: ['f'],
        ownerReferences: [
          { apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: 'alice', uid: 'p', controller: true },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'c' },
        ],
      },
      spec: { x: 1 }, status: { readyReplicas: 1 },
    };
    const before = structuredClone(original);
    expect(stripServerFields(original)).to.deep.equal({
      apiVersion: 'kubeflow.org/v1', kind: 'Notebook',
      metadata: { name: 'nb', namespace: 'alice', labels: { a: 'b' }, finalizers: ['f'], ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'c' }] },
      spec: { x: 1 },
    });
    expect(original).to.deep.equal(before);
  });

  it('strips metadata into a copy that shares nothing with the input, however deep a field nests', () => {
    const metadata = {
      name: 'nb', uid: 'u', labels: { a: 'b' }, finalizers: ['f'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'c' }],
      odd: { deeper: { still: ['x'] } },
    } as KubeObject['metadata'];
    const before = structuredClone(metadata);
    const copy = stripServerMetadata(metadata) as Record<string, any>;
    expect(copy).to.deep.equal({ name: 'nb', labels: { a: 'b' }, finalizers: ['f'], ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'c' }], odd: { deeper: { still: ['x'] } } });
    copy.labels.a = 'changed';
    copy.finalizers.push('g');
    copy.ownerReferences[0].name = 'changed';
    copy.odd.deeper.still.push('y');
    expect(metadata).to.deep.equal(before);
  });
});
