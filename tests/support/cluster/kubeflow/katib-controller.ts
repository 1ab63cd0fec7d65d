// The Katib controller, simulated after kubeflow/katib v0.18.0 pkg/controller.v1beta1/experiment/
// experiment_controller.go: an Experiment gets a Suggestion of the same name and Trials (named <experiment>-<8
// characters>, as Katib names them), all controlled by the Experiment. What a restore must get right, as upstream has it:
// - an Experiment whose status has a Succeeded or Failed condition that is True is complete (experiments/v1beta1
//   util.go IsCompleted): it gets no new Trial, unless Katib restarts it (status_util.go
//   IsCompletedExperimentRestartable: succeeded for reaching maxTrialCount, resumePolicy LongRunning or FromVolume,
//   and maxTrialCount raised above status.trials; or no maxTrialCount and some trials already run);
// - a new Experiment's first reconcile only marks it Created; Trials come on the next one;
// - Trials are added up to parallelTrialCount, and never beyond maxTrialCount minus the trials already completed
//   (ReconcileTrials), counted from the status.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, ensure, keyOf, reconciler, splitKey } from './reconciler.ts';

const experimentLabel = 'katib.kubeflow.org/experiment';

interface ExperimentSpec {
  parallelTrialCount?: number;
  maxTrialCount?: number;
  resumePolicy?: string;
  algorithm?: unknown;
  parameters?: Array<{ name: string; feasibleSpace?: { min?: string; max?: string } }>;
  trialTemplate?: { trialSpec?: unknown };
}

interface Condition {
  type: string;
  status?: string;
  reason?: string;
}

interface ExperimentStatus {
  conditions?: Condition[];
  trials?: number;
  trialsRunning?: number;
  trialsPending?: number;
  trialsSucceeded?: number;
  trialsFailed?: number;
  trialsKilled?: number;
  trialsEarlyStopped?: number;
}

function trialSuffix(uid: string, index: number): string {
  const hash = createHash('sha256').update(`${uid}/${index}`).digest();
  return Array.from(hash.subarray(0, 8), (b) => 'bcdfghjklmnpqrstvwxz2456789'[b % 27]).join('');
}

const holds = (status: ExperimentStatus, type: string) => (status.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** katib experiments/v1beta1 util.go IsCompleted */
export function isExperimentComplete(experiment: KubeObject): boolean {
  const status = (experiment.status ?? {}) as ExperimentStatus;
  return holds(status, 'Succeeded') || holds(status, 'Failed');
}

function restarts(spec: ExperimentSpec, status: ExperimentStatus): boolean {
  const restartable = (status.conditions ?? []).some((c) => c.type === 'Succeeded' && c.status === 'True' && c.reason === 'ExperimentMaxTrialsReached')
    && (spec.resumePolicy === 'LongRunning' || spec.resumePolicy === 'FromVolume');
  return (restartable && spec.maxTrialCount !== undefined && spec.maxTrialCount > (status.trials ?? 0))
    || (spec.maxTrialCount === undefined && (status.trials ?? 0) !== 0);
}

function reconcileExperiment(api: InProcessApi, key: string): void {
  const { namespace, name } = splitKey(key);
  const experiment = api.get(refs.experiments, name, namespace);
  if (!experiment || experiment.metadata.deletionTimestamp) return;
  const ns = namespace!;
  const spec = (experiment.spec ?? {}) as ExperimentSpec;
  const status = structuredClone((experiment.status ?? {}) as ExperimentStatus);
  if (isExperimentComplete(experiment) && !restarts(spec, status) && !(status.trialsRunning ?? 0)) return;
  if (!holds(status, 'Created')) {
    status.conditions = [...(status.conditions ?? []), { type: 'Created', status: 'True', reason: 'ExperimentCreated' }];
    api.updateStatus(refs.experiments, { ...experiment, status });
    return;
  }
  const owner = [controllerReference(experiment)];
  const parallel = spec.parallelTrialCount ?? 3;
  const completed = (status.trialsSucceeded ?? 0) + (status.trialsFailed ?? 0) + (status.trialsKilled ?? 0) + (status.trialsEarlyStopped ?? 0);
  const existing = api.list(refs.trials, { namespace: ns, labelSelector: `${experimentLabel}=${name}` });
  const required = spec.maxTrialCount === undefined ? parallel : Math.max(0, Math.min(parallel, spec.maxTrialCount - completed));
  ensure(api, refs.suggestions, {
    apiVersion: 'kubeflow.org/v1beta1', kind: 'Suggestion',
    metadata: { name, namespace: ns, labels: { [experimentLabel]: name }, ownerReferences: owner },
    spec: { algorithm: spec.algorithm ?? { algorithmName: 'random' }, requests: completed + required },
  });
  for (let index = existing.length; index < required; index++) {
    api.create(refs.trials, {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial',
      metadata: { name: `${name}-${trialSuffix(experiment.metadata.uid!, completed + index)}`, namespace: ns, labels: { [experimentLabel]: name }, ownerReferences: owner },
      spec: {
        parameterAssignments: (spec.parameters ?? []).map((p) => ({ name: p.name, value: p.feasibleSpace?.min ?? '0' })),
        runSpec: spec.trialTemplate?.trialSpec ?? {},
      },
    });
  }
  const running = Math.max(existing.length, required);
  const next: ExperimentStatus = {
    ...status,
    conditions: [...(status.conditions ?? []).filter((c) => c.type !== 'Running'), { type: 'Running', status: 'True', reason: 'ExperimentRunning' }],
    trials: completed + running, trialsRunning: running,
  };
  if (JSON.stringify(experiment.status) !== JSON.stringify(next)) api.updateStatus(refs.experiments, { ...experiment, status: next });
}

export function katibController() {
  const byExperiment = controllerOwnerKeys('Experiment');
  return reconciler({
    name: 'katib-controller',
    delayMs: 10,
    watches: [
      { ref: refs.experiments, keys: (o) => [keyOf(o)] },
      { ref: refs.suggestions, keys: (o, type) => (type === 'DELETED' ? byExperiment(o) : []) },
      { ref: refs.trials, keys: (o, type) => (type === 'DELETED' ? byExperiment(o) : []) },
    ],
    reconcile: reconcileExperiment,
  });
}
