// The Katib controller, simulated: an Experiment gets a Suggestion of the same name and up to parallelTrialCount
// Trials (named <experiment>-<8 characters>, as Katib names them), all controlled by the Experiment.
import { createHash } from 'node:crypto';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, ensure, keyOf, reconciler, splitKey } from './reconciler.ts';

const experimentLabel = 'katib.kubeflow.org/experiment';

interface ExperimentSpec {
  parallelTrialCount?: number;
  maxTrialCount?: number;
  algorithm?: unknown;
  parameters?: Array<{ name: string; feasibleSpace?: { min?: string; max?: string } }>;
  trialTemplate?: { trialSpec?: unknown };
}

function trialSuffix(uid: string, index: number): string {
  const hash = createHash('sha256').update(`${uid}/${index}`).digest();
  return Array.from(hash.subarray(0, 8), (b) => 'bcdfghjklmnpqrstvwxz2456789'[b % 27]).join('');
}

function reconcileExperiment(api: InProcessApi, key: string): void {
  const { namespace, name } = splitKey(key);
  const experiment = api.get(refs.experiments, name, namespace);
  if (!experiment || experiment.metadata.deletionTimestamp) return;
  const ns = namespace!;
  const spec = (experiment.spec ?? {}) as ExperimentSpec;
  const trials = Math.max(0, Math.min(spec.parallelTrialCount ?? 3, spec.maxTrialCount ?? 3));
  const owner = [controllerReference(experiment)];
  ensure(api, refs.suggestions, {
    apiVersion: 'kubeflow.org/v1beta1', kind: 'Suggestion',
    metadata: { name, namespace: ns, labels: { [experimentLabel]: name }, ownerReferences: owner },
    spec: { algorithm: spec.algorithm ?? { algorithmName: 'random' }, requests: trials },
  });
  const existing = api.list(refs.trials, { namespace: ns, labelSelector: `${experimentLabel}=${name}` });
  for (let index = existing.length; index < trials; index++) {
    api.create(refs.trials, {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial',
      metadata: { name: `${name}-${trialSuffix(experiment.metadata.uid!, index)}`, namespace: ns, labels: { [experimentLabel]: name }, ownerReferences: owner },
      spec: {
        parameterAssignments: (spec.parameters ?? []).map((p) => ({ name: p.name, value: p.feasibleSpace?.min ?? '0' })),
        runSpec: spec.trialTemplate?.trialSpec ?? {},
      },
    });
  }
  const status = {
    conditions: [{ type: 'Created', status: 'True', reason: 'ExperimentCreated' }, { type: 'Running', status: 'True', reason: 'ExperimentRunning' }],
    trials, trialsRunning: trials,
  };
  if (JSON.stringify(experiment.status) !== JSON.stringify(status)) api.updateStatus(refs.experiments, { ...experiment, status });
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
