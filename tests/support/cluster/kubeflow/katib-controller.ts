// The Katib controller, simulated after kubeflow/katib v0.18.0 pkg/controller.v1beta1/experiment/
// experiment_controller.go: an Experiment gets a Suggestion of the same name and Trials (named <experiment>-<8
// characters>, as Katib names them), all controlled by the Experiment. What a restore must get right, as upstream has it:
// - an Experiment whose status has a Succeeded or Failed condition that is True is complete (experiments/v1beta1
//   util.go IsCompleted): it gets no new Trial, unless Katib restarts it (status_util.go
//   IsCompletedExperimentRestartable: succeeded for reaching maxTrialCount, resumePolicy LongRunning or FromVolume,
//   and maxTrialCount raised above status.trials; or no maxTrialCount and some trials already run);
// - a new Experiment's first reconcile only marks it Created; Trials come once its Suggestion gives assignments,
//   which takes its algorithm service's startup (SUGGESTION_STARTUP_MS);
// - Trials are added up to parallelTrialCount, and never beyond maxTrialCount minus the trials already completed
//   (ReconcileTrials), counted from the status.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, ensure, keyOf, reconciler, splitKey } from './reconciler.ts';

const experimentLabel = 'katib.kubeflow.org/experiment';

interface ExperimentSpec {
  objective?: { type?: string; goal?: number; objectiveMetricName?: string };
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

/**
 * The restart branch of Reconcile: a completed Experiment restarts when it is restartable (IsCompletedExperimentRestartable)
 * and its maxTrialCount was raised above status.trials, or when it has no maxTrialCount and status.trials is not 0.
 */
function restarts(spec: ExperimentSpec, status: ExperimentStatus): boolean {
  const restartable = (status.conditions ?? []).some((c) => c.type === 'Succeeded' && c.status === 'True' && c.reason === 'ExperimentMaxTrialsReached')
    && (spec.resumePolicy === 'LongRunning' || spec.resumePolicy === 'FromVolume');
  return (restartable && spec.maxTrialCount !== undefined && spec.maxTrialCount > (status.trials ?? 0))
    || (spec.maxTrialCount === undefined && (status.trials ?? 0) !== 0);
}

const isTrue = (trial: KubeObject, type: string) => holds((trial.status ?? {}) as ExperimentStatus, type);

/** a Trial's latest value of a metric (trials/v1beta1 Observation: metrics of name, min, max, latest) */
function latestMetric(trial: KubeObject, metric: string | undefined): number | undefined {
  const metrics = (trial.status as { observation?: { metrics?: Array<{ name: string; latest?: string }> } } | undefined)?.observation?.metrics ?? [];
  const value = Number(metrics.find((m) => m.name === metric)?.latest);
  return Number.isFinite(value) ? value : undefined;
}

/** isObjectiveGoalReached: some Trial's objective metric reached spec.objective.goal in the objective's direction */
function goalReached(spec: ExperimentSpec, trials: readonly KubeObject[]): boolean {
  const { goal, objectiveMetricName, type } = spec.objective ?? {};
  if (goal === undefined) return false;
  return trials.some((t) => {
    const value = latestMetric(t, objectiveMetricName);
    return value !== undefined && (type === 'minimize' ? value <= goal : value >= goal);
  });
}

const conditionOrder = ['Created', 'Running', 'Restarting', 'Succeeded', 'Failed'];
const ordered = (conditions: Condition[]) => [...conditions].sort((a, b) => conditionOrder.indexOf(a.type) - conditionOrder.indexOf(b.type));

/**
 * util.UpdateExperimentStatus, run only when the Experiment has Trials: the counts are recounted from the Trials
 * (a Trial with no finished condition counts as running here; this simulation has no Trial controller), and
 * updateExperimentStatusCondition marks it Succeeded on reaching the objective's goal (ExperimentGoalReached) or
 * maxTrialCount (ExperimentMaxTrialsReached), which ends a restart (MarkExperimentStatusSucceeded).
 */
function recount(spec: ExperimentSpec, status: ExperimentStatus, trials: readonly KubeObject[]): ExperimentStatus {
  const succeeded = trials.filter((t) => isTrue(t, 'Succeeded')).length;
  const failed = trials.filter((t) => isTrue(t, 'Failed')).length;
  const next: ExperimentStatus = {
    ...status,
    trials: trials.length, trialsSucceeded: succeeded, trialsFailed: failed,
    trialsRunning: trials.length - succeeded - failed, trialsPending: 0, trialsKilled: 0, trialsEarlyStopped: 0,
  };
  const reason = goalReached(spec, trials) ? 'ExperimentGoalReached'
    : spec.maxTrialCount !== undefined && succeeded + failed >= spec.maxTrialCount ? 'ExperimentMaxTrialsReached' : undefined;
  const conditions = status.conditions ?? [];
  if (reason && !holds(status, 'Succeeded')) {
    // MarkExperimentStatusSucceeded: Running turns False, Succeeded comes (and ends a restart here)
    next.conditions = ordered([...conditions.filter((c) => !['Running', 'Restarting', 'Succeeded'].includes(c.type)), { type: 'Running', status: 'False', reason: 'ExperimentRunning' }, { type: 'Succeeded', status: 'True', reason }]);
  } else if (!holds(status, 'Succeeded') && !holds(status, 'Failed')) {
    // MarkExperimentStatusRunning; a complete Experiment keeps its conditions
    next.conditions = ordered([...conditions.filter((c) => c.type !== 'Running'), { type: 'Running', status: 'True', reason: 'ExperimentRunning' }]);
  }
  return next;
}

/**
 * How long a new Suggestion takes to give its first assignments. Upstream, ReconcileSuggestions creates Trials only from
 * suggestion.status.suggestions, which the suggestion controller fills once the algorithm's own Deployment and Service
 * are up and answer its gRPC call (pkg/controller.v1beta1/suggestion/suggestion_controller.go): seconds after a new
 * Experiment, never within the first reconciles. Shorter here, so tests stay quick.
 */
export const SUGGESTION_STARTUP_MS = 500;

function reconcileExperiment(api: InProcessApi, key: string, suggestionsSeen: Map<string, number>): number | void {
  const { namespace, name } = splitKey(key);
  const experiment = api.get(refs.experiments, name, namespace);
  if (!experiment || experiment.metadata.deletionTimestamp) return;
  const ns = namespace!;
  const spec = (experiment.spec ?? {}) as ExperimentSpec;
  let status = structuredClone((experiment.status ?? {}) as ExperimentStatus);
  const write = (next: ExperimentStatus) => {
    if (JSON.stringify(experiment.status ?? {}) !== JSON.stringify(next)) api.updateStatus(refs.experiments, { ...experiment, status: next });
  };
  if (isExperimentComplete(experiment)) {
    if (restarts(spec, status)) {
      // MarkExperimentStatusRestarting: the Succeeded and Failed conditions go, Restarting comes
      status = { ...status, conditions: ordered([...(status.conditions ?? []).filter((c) => !['Succeeded', 'Failed', 'Restarting'].includes(c.type)), { type: 'Restarting', status: 'True', reason: 'ExperimentRestarting' }]) };
    } else if (!(status.trialsRunning ?? 0)) {
      return; // complete, no running trials: the reconcile stops
    }
  }
  if (!holds(status, 'Created')) {
    write({ ...status, conditions: ordered([...(status.conditions ?? []), { type: 'Created', status: 'True', reason: 'ExperimentCreated' }]) });
    return;
  }
  // ReconcileExperiment: the status is recounted from the Trials when there are any; a restored Experiment has none
  const existing = api.list(refs.trials, { namespace: ns, labelSelector: `${experimentLabel}=${name}` });
  if (existing.length > 0) status = recount(spec, status, existing);
  if (holds(status, 'Succeeded') || holds(status, 'Failed')) {
    write(status);
    return;
  }
  // ReconcileTrials: fill the active trials up to parallelTrialCount, never beyond maxTrialCount minus the completed
  const parallel = spec.parallelTrialCount ?? 3;
  const active = (status.trialsPending ?? 0) + (status.trialsRunning ?? 0);
  const completed = (status.trialsSucceeded ?? 0) + (status.trialsFailed ?? 0) + (status.trialsKilled ?? 0) + (status.trialsEarlyStopped ?? 0);
  const required = spec.maxTrialCount === undefined ? parallel : Math.min(parallel, spec.maxTrialCount - completed);
  const add = Math.max(0, required - active);
  const owner = [controllerReference(experiment)];
  if (add > 0) {
    // ReconcileSuggestions: the Suggestion is asked for every Trial so far plus the new ones
    ensure(api, refs.suggestions, {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Suggestion',
      metadata: { name, namespace: ns, labels: { [experimentLabel]: name }, ownerReferences: owner },
      spec: { algorithm: spec.algorithm ?? { algorithmName: 'random' }, requests: existing.length + add },
    });
    // no assignments until the Suggestion's service is up: nothing to create yet, look again then
    const suggestion = api.get(refs.suggestions, name, ns)!;
    const seen = suggestionsSeen.get(suggestion.metadata.uid!) ?? Date.now();
    suggestionsSeen.set(suggestion.metadata.uid!, seen);
    const waiting = seen + SUGGESTION_STARTUP_MS - Date.now();
    if (waiting > 0) {
      write(status);
      return waiting;
    }
    const made: KubeObject[] = [];
    for (let index = 0; index < add; index++) {
      made.push(api.create(refs.trials, {
        apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial',
        metadata: { name: `${name}-${trialSuffix(experiment.metadata.uid!, existing.length + index)}`, namespace: ns, labels: { [experimentLabel]: name }, ownerReferences: owner },
        spec: {
          parameterAssignments: (spec.parameters ?? []).map((p) => ({ name: p.name, value: p.feasibleSpace?.min ?? '0' })),
          runSpec: spec.trialTemplate?.trialSpec ?? {},
        },
      }));
    }
    // upstream recounts on the reconcile the new Trials cause; this one recounts at once
    status = recount(spec, status, [...existing, ...made]);
  }
  write(status);
}

export function katibController() {
  const byExperiment = controllerOwnerKeys('Experiment');
  /** Suggestion uid → when this controller first asked it for assignments */
  const suggestionsSeen = new Map<string, number>();
  return reconciler({
    name: 'katib-controller',
    delayMs: 10,
    watches: [
      { ref: refs.experiments, keys: (o) => [keyOf(o)] },
      { ref: refs.suggestions, keys: (o, type) => (type === 'DELETED' ? byExperiment(o) : []) },
      // the controller watches the Trials it owns (experiment_controller.go add: EnqueueRequestForOwner)
      { ref: refs.trials, keys: (o) => byExperiment(o) },
    ],
    reconcile: (api, key) => reconcileExperiment(api, key, suggestionsSeen),
  });
}
