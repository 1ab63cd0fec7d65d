// Kinds whose status a restore writes back after the object: their controllers decide from the status whether the
// work is done, so an object restored without it is work to do again. Velero has --status-include-resources for the
// same reason. Katib's Experiment is named in the kinds table (known-kinds.ts); the training operator's jobs are
// recognised by shape, not listed, so a kind one release serves and another does not (MXJob: served and reconciled by
// training-operator 1.7 and 1.8, which Charmed Kubeflow 1.8 and 1.9 ship, gone in 1.9) is covered wherever a backup
// found it.
//
// Writing the status back is not always enough, so each kind also has a guard the restore applies when creating it:
// - training jobs are created suspended and resumed once their status is written (see `suspendedForStatus`);
// - a finished Experiment without spec.maxTrialCount is created with a maxTrialCount of the trials it ran (see
//   `finishedExperimentPin`), because Katib restarts such an Experiment whatever its status says.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';
import { knownKinds } from './known-kinds.ts';

export interface StatusKind {
  group: string;
  kind: string;
  /** the upstream code that decides from the status, and what it decides */
  why: string;
  /**
   * Created suspended (`spec.runPolicy.suspend`) and resumed once the status is written: the training operator
   * starts pods on its first reconcile of a job without status, which can come before the status write; a
   * suspended job gets no pods (job.go, IsJobSuspended), and a finished one none either once resumed. Katib needs no
   * such guard: its first reconcile of a new Experiment only marks it Created, and its first Trial waits for the
   * Suggestion's own Deployment to answer.
   */
  suspendUntilStatus?: boolean;
}

/**
 * kubeflow/training-operator pkg/apis/kubeflow.org/v1 (v1.7-v1.9): every kind it serves is a `<Framework>Job` of
 * kubeflow.org/v1 whose spec embeds RunPolicy (with `suspend`) and whose status is the common JobStatus, read by
 * pkg/controller.v1/common/job.go ReconcileJobs (pkg/util/status.go IsFinished: Succeeded or Failed is finished).
 * No other kubeflow.org/v1 kind ends in Job (Profile, Notebook; Katib's kinds are v1beta1).
 */
const TRAINING_JOB: Omit<StatusKind, 'kind'> = {
  group: 'kubeflow.org',
  why: 'training-operator v1.9.0 pkg/controller.v1/common/job.go ReconcileJobs: a job whose status has Succeeded or Failed is finished and gets no pods',
  suspendUntilStatus: true,
};

export function isTrainingOperatorJob(apiVersion: string, kind: string): boolean {
  return apiVersion === 'kubeflow.org/v1' && /^[A-Z][A-Za-z0-9]*Job$/.test(kind);
}

/** the kinds named in the kinds table (known-kinds.ts) with a status entry: Katib's Experiment */
const namedStatusKinds: readonly StatusKind[] = knownKinds.flatMap((k) => (k.status ? [{ group: k.group, kind: k.kind, ...k.status }] : []));
const byGroupKind = new Map(namedStatusKinds.map((k) => [`${k.group}/${k.kind}`, k]));

/**
 * The kinds among those a cluster serves (discovery) whose status a restore writes back: the named ones and every
 * training-operator job kind, in the order given.
 */
export function statusKindsServed(served: ReadonlyArray<{ group: string; version: string; kind: string }>): StatusKind[] {
  const out = new Map<string, StatusKind>();
  for (const r of served) {
    const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
    const found = byGroupKind.get(`${r.group}/${r.kind}`) ?? (isTrainingOperatorJob(apiVersion, r.kind) ? { ...TRAINING_JOB, kind: r.kind } : undefined);
    if (found) out.set(`${r.group}/${r.kind}`, found);
  }
  return [...out.values()];
}

function statusKindOf(object: KubeObject): StatusKind | undefined {
  return byGroupKind.get(`${groupOf(object.apiVersion)}/${object.kind}`)
    ?? (isTrainingOperatorJob(object.apiVersion, object.kind) ? { ...TRAINING_JOB, kind: object.kind } : undefined);
}

/** true for a kind created suspended until its status is written (StatusKind.suspendUntilStatus) */
export function suspendsUntilStatus(object: KubeObject): boolean {
  return statusKindOf(object)?.suspendUntilStatus === true;
}

/** true when a restore writes this object's archived status back after creating it */
export function restoresStatus(object: KubeObject): boolean {
  return statusKindOf(object) !== undefined;
}

/**
 * For a kind created suspended until its status is written: the object to create (suspended) and the merge patch
 * that gives it back its own spec.runPolicy afterwards. Undefined when the kind needs no guard or the object is
 * suspended already.
 */
export function suspendedForStatus(object: KubeObject): { create: KubeObject; resume: unknown } | undefined {
  if (!statusKindOf(object)?.suspendUntilStatus) return undefined;
  const spec = (object.spec ?? {}) as { runPolicy?: Record<string, unknown> };
  if (spec.runPolicy?.suspend === true) return undefined;
  const create = { ...object, spec: { ...spec, runPolicy: { ...(spec.runPolicy ?? {}), suspend: true } } };
  // merge patch: null removes what the archived object did not have
  const resume = { spec: { runPolicy: spec.runPolicy === undefined ? null : { suspend: spec.runPolicy.suspend ?? null } } };
  return { create, resume };
}

/**
 * True when `live` is `archived` as the restore creates it suspended, not yet resumed: an earlier restore stopped
 * between the create and the resume (a crash, a lost answer), and a rerun must finish the job, not call it unchanged.
 */
export function awaitsResume(archived: KubeObject, live: KubeObject): boolean {
  if (!suspendedForStatus(archived)) return false;
  return (live.spec as { runPolicy?: { suspend?: unknown } } | undefined)?.runPolicy?.suspend === true;
}

interface ExperimentFields {
  spec?: { maxTrialCount?: number; parallelTrialCount?: number; maxFailedTrialCount?: number };
  status?: { trials?: number; conditions?: Array<{ type?: string; status?: string }> };
}

/**
 * A status that says the work is done: a Succeeded or Failed condition that is True (katib
 * pkg/apis/controller/experiments/v1beta1 util.go IsCompleted; training-operator pkg/util/status.go IsFinished).
 */
export function isFinishedStatus(status: unknown): boolean {
  return isFinishedExperiment(status as ExperimentFields['status']);
}

function isFinishedExperiment(status: ExperimentFields['status']): boolean {
  return (status?.conditions ?? []).some((c) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
}

/**
 * The spec.maxTrialCount a finished Experiment without one is restored with, or undefined when it needs none.
 *
 * katib v0.17/v0.18 pkg/controller.v1beta1/experiment/experiment_controller.go Reconcile: a completed Experiment is
 * restarted (its Succeeded/Failed condition removed, MarkExperimentStatusRestarting) when it has no maxTrialCount and
 * status.trials is not 0. On its own cluster that is harmless: ReconcileExperiment recounts the status from its Trials
 * (util.UpdateExperimentStatus) and finds it complete again. A restore does not bring the Trials back (they are
 * Katib's output), so the recount finds none and ReconcileTrials starts new ones. With a maxTrialCount the restart
 * needs IsCompletedExperimentRestartable (Succeeded for reaching maxTrialCount, which an Experiment without one never
 * is) and a maxTrialCount above status.trials, so a finished Experiment stays finished.
 *
 * The count is the trials it ran, raised where Katib's validating webhook demands
 * (pkg/webhook/v1beta1/experiment/validator/validator.go: parallelTrialCount and maxFailedTrialCount at most
 * maxTrialCount, maxTrialCount above 0); parallelTrialCount defaults to 3 (experiment_defaults.go).
 */
export function finishedExperimentPin(object: KubeObject, status: unknown): number | undefined {
  if (groupOf(object.apiVersion) !== 'kubeflow.org' || object.kind !== 'Experiment') return undefined;
  const { spec } = object as ExperimentFields;
  const archived = status as ExperimentFields['status'];
  if (spec?.maxTrialCount !== undefined || !isFinishedExperiment(archived) || !archived?.trials) return undefined;
  return Math.max(archived.trials, spec?.parallelTrialCount ?? 3, spec?.maxFailedTrialCount ?? 0, 1);
}

/** `object` (with its status) as a restore leaves it: a finished Experiment pinned (finishedExperimentPin) */
export function asRestoredForStatus(object: KubeObject): KubeObject {
  const pin = finishedExperimentPin(object, object.status);
  if (pin === undefined) return object;
  return { ...object, spec: { ...(object.spec as object), maxTrialCount: pin } };
}

/**
 * The status a restore writes for `object`: the archived one, except that an unfinished Experiment loses the Trials it
 * had in flight. katib experiment_controller.go ReconcileTrials counts the active Trials from the status
 * (trialsPending + trialsRunning) and adds new ones only below parallelTrialCount; the status is recounted from the
 * Trials only when there are some (util.UpdateExperimentStatus). The Trials are Katib's output and not restored, so
 * an Experiment restored with Trials "running" would wait for them for good. Without them it starts the Trials it
 * still owes: maxTrialCount minus those already completed, which the status keeps.
 */
export function statusToWrite(object: KubeObject, status: unknown): unknown {
  if (groupOf(object.apiVersion) !== 'kubeflow.org' || object.kind !== 'Experiment') return status;
  const archived = status as (ExperimentFields['status'] & Record<string, unknown>) | undefined;
  if (!archived || isFinishedExperiment(archived)) return status;
  const inFlight = Number(archived.trialsRunning ?? 0) + Number(archived.trialsPending ?? 0);
  if (inFlight === 0) return status;
  const { trialsRunning: _running, trialsPending: _pending, runningTrialList: _runningList, pendingTrialList: _pendingList, ...rest } = archived;
  return { ...rest, trials: Math.max(0, (archived.trials ?? 0) - inFlight) };
}
