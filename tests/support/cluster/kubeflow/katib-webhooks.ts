// Katib's Experiment webhooks, served behind the katib-controller Service as canonical/katib-operators ships them
// (charms/katib-controller/src/templates/webhooks.yaml.j2, tracks 0.16–0.19: /mutate-experiment and
// /validate-experiment for kubeflow.org/v1beta1 experiments on CREATE and UPDATE, failurePolicy unset = Fail).
// - the defaulter: kubeflow/katib v0.18.0 pkg/apis/controller/experiments/v1beta1/experiment_defaults.go (SetDefault)
//   and constants.go, answered as pkg/webhook/v1beta1/experiment/mutate_webhook.go does (a patch to the defaulted object);
// - the validator: pkg/webhook/v1beta1/experiment/validation_webhook.go (the namespace label check, then
//   ValidateExperiment; every refusal is admission.Errored(400, err)) and validator/validator.go, with its sentences.
//   Simulated are the checks a restored Experiment can meet: name, counts, what an UPDATE may change, objective,
//   algorithm and early stopping against the katib-config algorithms (manifests/v1beta1/installs/katib-standalone/
//   katib-config.yaml), resumePolicy, trial template and parameters, metrics collector kind. Not simulated: the
//   FromVolume PV check and the trial template's conversion to a runnable object. Two sentences upstream end with a Go
//   %v dump of the parameters or the template ("…: %v"); here they end before it.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { WebhookAnswer, WebhookRequest } from '../webhooks.ts';
import { aggregate, forbidden, invalid, required, type FieldError } from './field-errors.ts';

const SUGGESTION_ALGORITHMS = ['random', 'tpe', 'grid', 'hyperband', 'bayesianoptimization', 'cmaes', 'sobol', 'multivariate-tpe', 'enas', 'darts', 'pbt'];
const EARLY_STOPPING_ALGORITHMS = ['medianstop'];
const KUBEFLOW_JOB_KINDS = ['TFJob', 'PyTorchJob', 'XGBoostJob', 'MPIJob'];
const COLLECTOR_KINDS = ['StdOut', 'File', 'TensorFlowEvent', 'PrometheusMetric', 'Custom', 'None', 'Push'];
const PARAMETER_TYPES = ['int', 'double', 'categorical', 'discrete', ''];
const RESUME_POLICIES = ['', 'Never', 'LongRunning', 'FromVolume'];

interface ExperimentSpec {
  parallelTrialCount?: number;
  maxTrialCount?: number;
  maxFailedTrialCount?: number;
  resumePolicy?: string;
  objective?: { type?: string; objectiveMetricName?: string; additionalMetricNames?: string[]; metricStrategies?: Array<{ name: string; value: string }> };
  algorithm?: { algorithmName?: string };
  earlyStopping?: { algorithmName?: string };
  parameters?: Array<{ name?: string; parameterType?: string; feasibleSpace?: { min?: string; max?: string; step?: string; list?: string[]; distribution?: string } }>;
  nasConfig?: unknown;
  trialTemplate?: {
    primaryContainerName?: string; successCondition?: string; failureCondition?: string; primaryPodLabels?: Record<string, string>;
    trialParameters?: Array<{ name?: string; reference?: string }>; trialSpec?: { kind?: string }; configMap?: unknown;
  };
  metricsCollectorSpec?: { collector?: { kind?: string } };
}

/** Experiment.SetDefault */
export function defaultExperiment(request: WebhookRequest): WebhookAnswer {
  const spec = (request.object.spec ??= {}) as ExperimentSpec;
  spec.parallelTrialCount ??= 3;
  if (!spec.resumePolicy) spec.resumePolicy = 'Never';
  const objective = spec.objective;
  if (objective) {
    objective.metricStrategies ??= [];
    const extract = objective.type === 'minimize' ? 'min' : objective.type === 'maximize' ? 'max' : 'latest';
    const named = new Set(objective.metricStrategies.map((s) => s.name));
    if (!named.has(objective.objectiveMetricName ?? '')) objective.metricStrategies.push({ name: objective.objectiveMetricName ?? '', value: extract });
    for (const metric of objective.additionalMetricNames ?? []) if (!named.has(metric)) objective.metricStrategies.push({ name: metric, value: extract });
  }
  const template = spec.trialTemplate;
  const jobKind = template?.trialSpec?.kind;
  if (template && jobKind === 'Job') {
    template.successCondition ||= 'status.conditions.#(type=="Complete")#|#(status=="True")#';
    template.failureCondition ||= 'status.conditions.#(type=="Failed")#|#(status=="True")#';
  } else if (template && jobKind && KUBEFLOW_JOB_KINDS.includes(jobKind)) {
    template.successCondition ||= 'status.conditions.#(type=="Succeeded")#|#(status=="True")#';
    template.failureCondition ||= 'status.conditions.#(type=="Failed")#|#(status=="True")#';
    if (Object.keys(template.primaryPodLabels ?? {}).length === 0) template.primaryPodLabels = { 'training.kubeflow.org/job-role': 'master' };
  }
  spec.metricsCollectorSpec ??= {};
  spec.metricsCollectorSpec.collector ??= { kind: 'StdOut' };
  for (const parameter of spec.parameters ?? []) {
    if (parameter.feasibleSpace && !parameter.feasibleSpace.distribution) parameter.feasibleSpace.distribution = 'uniform';
  }
  return { allowed: true };
}

/**
 * pkg/webhook/v1beta1/pod/inject_webhook.go Handle: a Pod whose owner is not a Trial's job needs no mutation
 * (MutationRequired is false) and is let through unchanged. The metrics-collector sidecar a Trial's Pod gets is not
 * simulated: the simulated Katib controller (katib-controller.ts) makes Trials but runs no Trial Pods. What this webhook
 * adds to the simulation is its reach: every Pod created in a profile namespace goes through it, so none can be made
 * while katib-controller is not Ready.
 */
export function mutatePod(_request: WebhookRequest): WebhookAnswer {
  return { allowed: true };
}

/** validation_webhook.go Handle */
export function validateExperiment(request: WebhookRequest): WebhookAnswer {
  const { object, oldObject, namespace } = request;
  const labels = request.cluster.get({ group: '', resource: 'namespaces' }, namespace)?.metadata.labels ?? {};
  if (labels['katib.kubeflow.org/metrics-collector-injection'] !== 'enabled') {
    return { allowed: false, code: 400, message: `Cannot create the Experiment "${object.metadata.name}" in namespace "${namespace}": the namespace lacks label "katib.kubeflow.org/metrics-collector-injection: enabled"` };
  }
  const message = aggregate(experimentErrors(object, oldObject));
  return message ? { allowed: false, code: 400, message } : { allowed: true };
}

/** validator.go ValidateExperiment */
function experimentErrors(experiment: KubeObject, old: KubeObject | null): FieldError[] {
  const errors: FieldError[] = [];
  const name = experiment.metadata.name ?? '';
  const spec = (experiment.spec ?? {}) as ExperimentSpec;
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?/.test(name) || name.length > 40) {
    errors.push(invalid('metadata.name', name, "name must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used for validation is '^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. "));
  }
  const { maxFailedTrialCount: maxFailed, maxTrialCount: max, parallelTrialCount: parallel } = spec;
  if (maxFailed !== undefined && maxFailed < 0) errors.push(invalid('spec.maxFailedTrialCount', maxFailed, 'should not be less than 0'));
  if (max !== undefined && max <= 0) errors.push(invalid('spec.maxTrialCount', max, 'must be greater than 0'));
  if (parallel !== undefined && parallel <= 0) errors.push(invalid('spec.parallelTrialCount', parallel, 'must be greater than 0'));
  if (maxFailed !== undefined && max !== undefined && maxFailed > max) errors.push(invalid('spec.maxFailedTrialCount', maxFailed, 'should be less than or equal to spec.maxTrialCount'));
  if (parallel !== undefined && max !== undefined && parallel > max) errors.push(invalid('spec.parallelTrialCount', parallel, 'should be less than or equal to spec.maxTrialCount'));
  if (old) errors.push(...updateErrors(spec, old));
  const objective = spec.objective;
  if (!objective) return [...errors, required('spec.objective', 'must be specified')];
  const objectiveErrors: FieldError[] = [];
  if (objective.type !== 'minimize' && objective.type !== 'maximize') objectiveErrors.push(invalid('spec.objective.type', objective.type ?? '', 'must be minimize or maximize'));
  if (!objective.objectiveMetricName) objectiveErrors.push(required('spec.objective.objectiveMetricName', 'must be specified'));
  if ((objective.additionalMetricNames ?? []).includes(objective.objectiveMetricName ?? ''))
    objectiveErrors.push(invalid('spec.objective.additionalMetricNames', objective.additionalMetricNames, 'should not contain spec.objective.objectiveMetricName'));
  if (objectiveErrors.length) return [...errors, ...objectiveErrors];
  const algorithm = spec.algorithm;
  if (!algorithm) errors.push(required('spec.algorithm', 'must be specified'));
  else {
    const algorithmName = algorithm.algorithmName ?? '';
    if (!algorithmName) errors.push(required('spec.algorithm.algorithmName', 'must be specified'));
    if (!SUGGESTION_ALGORITHMS.includes(algorithmName))
      errors.push(invalid('spec.algorithm.algorithmName', algorithmName, `unable to get Suggestion config data for algorithm ${algorithmName}: failed to find suggestion config for algorithm: ${algorithmName} in ConfigMap: katib-config`));
  }
  if (spec.earlyStopping) {
    const algorithmName = spec.earlyStopping.algorithmName ?? '';
    if (!algorithmName) errors.push(required('spec.earlyStopping.algorithmName', 'must be specified'));
    if (!EARLY_STOPPING_ALGORITHMS.includes(algorithmName))
      errors.push(invalid('spec.earlyStopping.algorithmName', algorithmName, `unable to get EarlyStopping config data for algorithm ${algorithmName}: failed to find early stopping config for algorithm: ${algorithmName} in ConfigMap: katib-config`));
  }
  if (!RESUME_POLICIES.includes(spec.resumePolicy ?? '')) errors.push(invalid('spec.resumePolicy', spec.resumePolicy, 'invalid ResumePolicyType'));
  errors.push(...trialTemplateErrors(spec));
  const parameters = spec.parameters ?? [];
  if (parameters.length === 0 && !spec.nasConfig) errors.push(required('spec', 'spec.parameters or spec.nasConfig must be specified'));
  if (parameters.length > 0 && spec.nasConfig) errors.push(invalid('spec', spec, 'only one of spec.parameters and spec.nasConfig can be specified'));
  parameters.forEach((parameter, i) => {
    const type = parameter.parameterType ?? '';
    if (!PARAMETER_TYPES.includes(type)) errors.push(invalid(`spec.parameters[${i}].parameterType`, type, `parameterType: ${type} is not supported`));
    const space = parameter.feasibleSpace ?? {};
    if (Object.values(space).every((v) => v === undefined || v === '' || (Array.isArray(v) && v.length === 0))) {
      errors.push(required(`spec.parameters[${i}].feasibleSpace`, 'feasibleSpace must be specified'));
    } else if ((type === 'double' || type === 'int') && (!space.max || !space.min)) {
      errors.push(required(`spec.parameters[${i}].feasibleSpace.max`, `feasibleSpace.max or feasibleSpace.min must be specified for parameterType: ${type}`));
    }
  });
  const collector = spec.metricsCollectorSpec?.collector?.kind ?? '';
  if (!COLLECTOR_KINDS.includes(collector)) errors.push(invalid('spec.metricsCollectorSpec.collector.kind', collector, `invalid metrics collector kind: ${collector}`));
  return errors;
}

/** an edited Experiment: only the three counts may change, and not past what it has run (validator.go, oldInst != nil) */
function updateErrors(spec: ExperimentSpec, old: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const oldSpec = (old.spec ?? {}) as ExperimentSpec;
  const restarting = JSON.stringify(canonical(spec)) !== JSON.stringify(canonical(oldSpec));
  const status = (old.status ?? {}) as { trials?: number; conditions?: Array<{ type: string; status: string; reason?: string }> };
  const condition = (type: string) => (status.conditions ?? []).some((c) => c.type === type && c.status === 'True');
  const completed = condition('Succeeded') || condition('Failed');
  // IsCompletedExperimentRestartable: succeeded by reaching max trials, with resumePolicy LongRunning or FromVolume
  const reachedMax = (status.conditions ?? []).some((c) => c.type === 'Succeeded' && c.status === 'True' && c.reason === 'ExperimentMaxTrialsReached');
  const restartable = reachedMax && (oldSpec.resumePolicy === 'LongRunning' || oldSpec.resumePolicy === 'FromVolume');
  if (restarting && completed && !restartable)
    errors.push(invalid('spec.resumePolicy', spec.resumePolicy ?? '', 'Experiment can be restarted if it is in succeeded state by reaching max trials and spec.resumePolicy = LongRunning or spec.resumePolicy = FromVolume, when experiment is completed'));
  if (restarting && spec.maxTrialCount !== undefined && spec.maxTrialCount <= (status.trials ?? 0))
    errors.push(invalid('spec.maxTrialCount', spec.maxTrialCount, 'must be greater than status.trials count'));
  const editable = { ...oldSpec, maxFailedTrialCount: spec.maxFailedTrialCount, maxTrialCount: spec.maxTrialCount, parallelTrialCount: spec.parallelTrialCount };
  if (JSON.stringify(canonical(spec)) !== JSON.stringify(canonical(editable)))
    errors.push(forbidden('spec', 'only spec.parallelTrialCount, spec.maxTrialCount and spec.maxFailedTrialCount are editable'));
  return errors;
}

/** validateTrialTemplate, up to the substitution of its parameters */
function trialTemplateErrors(spec: ExperimentSpec): FieldError[] {
  const template = spec.trialTemplate;
  if (!template) return [required('spec.trialTemplate', 'must be specified')];
  const errors: FieldError[] = [];
  if (!template.primaryContainerName) errors.push(required('spec.trialTemplate.primaryContainerName', 'must be specified'));
  if (!template.successCondition || !template.failureCondition) errors.push(required('spec.trialTemplate', 'successCondition and failureCondition must be specified'));
  if (!template.trialParameters) return [...errors, required('spec.trialTemplate.trialParameters', 'must be specified')];
  if (!template.trialSpec && !template.configMap) return [...errors, required('spec.trialTemplate.TrialSource', 'spec.trialTemplate.trialSpec or spec.trialTemplate.configMap must be specified')];
  if (template.trialSpec && template.configMap) return [...errors, required('spec.trialTemplate', 'only one of spec.trialTemplate.trialSpec or spec.trialTemplate.configMap can be specified')];
  const parameterNames = new Set((spec.parameters ?? []).map((p) => p.name));
  let text = JSON.stringify(template.trialSpec ?? {});
  const names = new Set<string>();
  const references = new Set<string>();
  for (const [i, parameter] of template.trialParameters.entries()) {
    const { name = '', reference = '' } = parameter;
    if (!name || !reference || name.includes('{') || name.includes('}')) {
      errors.push(invalid(`spec.trialTemplate.trialParameters[${i}]`, '', "name and reference must be specified and name must not contain '{' or '}'"));
      continue;
    }
    if (names.has(name) || references.has(reference)) continue;
    names.add(name);
    references.add(reference);
    if (parameterNames.size > 0 && !reference.startsWith('${trialSpec.') && !parameterNames.has(reference))
      errors.push(invalid(`spec.trialTemplate.trialParameters[${i}].reference`, reference, `parameter reference ${reference} does not exist in spec.parameters`));
    if (template.trialSpec && !text.includes(`\${trialParameters.${name}}`)) {
      errors.push(invalid(`spec.trialTemplate.trialParameters[${i}].name`, name, `parameter name: ${name} in spec.trialParameters not found in spec.trialTemplate`));
      return errors;
    }
    text = text.split(`\${trialParameters.${name}}`).join('test-value');
  }
  return errors;
}

/** equality.Semantic.DeepEqual, for the JSON the API holds: key order does not matter */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, canonical(v)]));
  return value;
}
