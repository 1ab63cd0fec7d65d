// One probe per simulated webhook rule not probed in webhook-operators.test.ts: each sends the object the rule refuses
// and expects the sentence of the upstream file (copied from it, never computed), wrapped as kube-apiserver's
// errors/statuserror.go wraps a refusal. Katib: kubeflow/katib v0.18.0 pkg/webhook/v1beta1/experiment/validator/
// validator.go; KServe: kserve/kserve v0.14.1 pkg/apis/serving/v1beta1/component.go, pkg/apis/serving/v1alpha1/
// inference_graph_validation.go, trainedmodel_webhook.go, pkg/webhook/admission/servingruntime/servingruntime_webhook.go;
// training operator: kubeflow/training-operator v1.9.0 pkg/webhooks/pytorch/pytorchjob_webhook.go.
import { expect } from 'chai';
import type { KubeObject } from '../../../../src/kube/types.ts';
import { inProcessCluster } from '../in-process.ts';
import { installKubeflowWebhooks } from './webhook-operators.ts';
import type { Cluster } from '../cluster.ts';

const NAMESPACES = { group: '', resource: 'namespaces' };
const EXPERIMENTS = { group: 'kubeflow.org', resource: 'experiments' };

const job = { apiVersion: 'batch/v1', kind: 'Job', spec: { template: { spec: { containers: [{ name: 'training', image: 'busybox', command: ['train', '--lr=${trialParameters.learningRate}'] }] } } } };
const baseSpec = () => ({
  objective: { type: 'maximize', objectiveMetricName: 'accuracy' },
  algorithm: { algorithmName: 'random' },
  parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.03' } }],
  trialTemplate: { primaryContainerName: 'training', trialParameters: [{ name: 'learningRate', reference: 'lr' }], trialSpec: structuredClone(job) },
});

interface Probe { rule: string; ref: { group: string; resource: string }; object: KubeObject; webhook: string; detail: string }

function experimentProbe(rule: string, change: (spec: Record<string, any>) => void, detail: string): Probe {
  const spec: Record<string, any> = baseSpec();
  change(spec);
  return { rule, ref: EXPERIMENTS, object: { apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'probe', namespace: 'alice' }, spec }, webhook: 'validator.experiment.katib.kubeflow.org', detail };
}

const kserve = (resource: string, kind: string, version: string, spec: unknown, name = 'probe'): Pick<Probe, 'ref' | 'object'> =>
  ({ ref: { group: 'serving.kserve.io', resource }, object: { apiVersion: `serving.kserve.io/${version}`, kind, metadata: { name, namespace: 'alice' }, spec } as KubeObject });

const pytorch = (spec: unknown, name = 'probe'): Pick<Probe, 'ref' | 'object'> =>
  ({ ref: { group: 'kubeflow.org', resource: 'pytorchjobs' }, object: { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name, namespace: 'alice' }, spec } as KubeObject });
const replica = (replicas: number, containers: unknown[] = [{ name: 'pytorch', image: 'pytorch/pytorch:2.1' }]) => ({ replicas, template: { spec: { containers } } });

const PROBES: Probe[] = [
  experimentProbe('maxFailedTrialCount below 0', (s) => { s.maxFailedTrialCount = -1; }, 'spec.maxFailedTrialCount: Invalid value: -1: should not be less than 0'),
  experimentProbe('maxFailedTrialCount above maxTrialCount', (s) => { s.maxTrialCount = 2; s.parallelTrialCount = 1; s.maxFailedTrialCount = 3; }, 'spec.maxFailedTrialCount: Invalid value: 3: should be less than or equal to spec.maxTrialCount'),
  experimentProbe('objective type', (s) => { s.objective.type = 'largest'; }, 'spec.objective.type: Invalid value: "largest": must be minimize or maximize'),
  experimentProbe('objective metric name', (s) => { delete s.objective.objectiveMetricName; }, 'spec.objective.objectiveMetricName: Required value: must be specified'),
  experimentProbe('additional metric names holding the objective', (s) => { s.objective.additionalMetricNames = ['accuracy']; }, 'spec.objective.additionalMetricNames: Invalid value: []string{"accuracy"}: should not contain spec.objective.objectiveMetricName'),
  experimentProbe('early stopping algorithm', (s) => { s.earlyStopping = { algorithmName: 'patience' }; }, 'spec.earlyStopping.algorithmName: Invalid value: "patience": unable to get EarlyStopping config data for algorithm patience: failed to find early stopping config for algorithm: patience in ConfigMap: katib-config'),
  experimentProbe('resume policy', (s) => { s.resumePolicy = 'Sometimes'; }, 'spec.resumePolicy: Invalid value: "Sometimes": invalid ResumePolicyType'),
  experimentProbe('primary container name', (s) => { delete s.trialTemplate.primaryContainerName; }, 'spec.trialTemplate.primaryContainerName: Required value: must be specified'),
  experimentProbe('success and failure conditions of a kind the defaulter does not know', (s) => { s.trialTemplate.trialSpec = { ...job, apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow' }; }, 'spec.trialTemplate: Required value: successCondition and failureCondition must be specified'),
  experimentProbe('trial parameters', (s) => { delete s.trialTemplate.trialParameters; }, 'spec.trialTemplate.trialParameters: Required value: must be specified'),
  experimentProbe('neither trialSpec nor configMap', (s) => { delete s.trialTemplate.trialSpec; s.trialTemplate.successCondition = 'status.done'; s.trialTemplate.failureCondition = 'status.failed'; }, 'spec.trialTemplate.TrialSource: Required value: spec.trialTemplate.trialSpec or spec.trialTemplate.configMap must be specified'),
  experimentProbe('both trialSpec and configMap', (s) => { s.trialTemplate.configMap = { configMapName: 'c', configMapNamespace: 'alice', templatePath: 't' }; }, 'spec.trialTemplate: Required value: only one of spec.trialTemplate.trialSpec or spec.trialTemplate.configMap can be specified'),
  experimentProbe('a trial parameter without reference', (s) => { s.trialTemplate.trialParameters = [{ name: 'learningRate' }]; }, `spec.trialTemplate.trialParameters[0]: Invalid value: "": name and reference must be specified and name must not contain '{' or '}'`),
  experimentProbe('a reference to no parameter', (s) => { s.trialTemplate.trialParameters = [{ name: 'learningRate', reference: 'rate' }]; }, 'spec.trialTemplate.trialParameters[0].reference: Invalid value: "rate": parameter reference rate does not exist in spec.parameters'),
  experimentProbe('a trial parameter the template does not use', (s) => { s.trialTemplate.trialParameters = [{ name: 'momentum', reference: 'lr' }]; }, 'spec.trialTemplate.trialParameters[0].name: Invalid value: "momentum": parameter name: momentum in spec.trialParameters not found in spec.trialTemplate'),
  experimentProbe('parameter type', (s) => { s.parameters[0].parameterType = 'float'; }, 'spec.parameters[0].parameterType: Invalid value: "float": parameterType: float is not supported'),
  // an empty feasible space is never empty by the time the validator sees it: the defaulter gave it its distribution
  experimentProbe('an empty feasible space', (s) => { s.parameters[0].feasibleSpace = {}; }, 'spec.parameters[0].feasibleSpace.max: Required value: feasibleSpace.max or feasibleSpace.min must be specified for parameterType: double'),
  experimentProbe('feasible space bounds', (s) => { s.parameters[0].feasibleSpace = { min: '0.01' }; }, 'spec.parameters[0].feasibleSpace.max: Required value: feasibleSpace.max or feasibleSpace.min must be specified for parameterType: double'),
  experimentProbe('metrics collector kind', (s) => { s.metricsCollectorSpec = { collector: { kind: 'Syslog' } }; }, 'spec.metricsCollectorSpec.collector.kind: Invalid value: "Syslog": invalid metrics collector kind: Syslog'),
  { rule: 'minReplicas below 0', ...kserve('inferenceservices', 'InferenceService', 'v1beta1', { predictor: { model: { modelFormat: { name: 'sklearn' } }, minReplicas: -1 } }), webhook: 'inferenceservice.kserve-webhook-server.validator', detail: "'MinReplicas' cannot be less than 0" },
  { rule: 'maxReplicas below 0', ...kserve('inferenceservices', 'InferenceService', 'v1beta1', { predictor: { model: { modelFormat: { name: 'sklearn' } }, maxReplicas: -1 } }), webhook: 'inferenceservice.kserve-webhook-server.validator', detail: "'MaxReplicas' cannot be less than 0" },
  { rule: 'a graph name', ...kserve('inferencegraphs', 'InferenceGraph', 'v1alpha1', { nodes: { root: { routerType: 'Sequence', steps: [{ serviceName: 'a' }] } } }, '9graph'), webhook: 'inferencegraph.kserve-webhook-server.validator', detail: `The InferenceGraph "9graph" is invalid: a InferenceGraph name must consist of lower case alphanumeric characters or '-', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')` },
  { rule: 'two steps of one name', ...kserve('inferencegraphs', 'InferenceGraph', 'v1alpha1', { nodes: { root: { routerType: 'Sequence', steps: [{ name: 's', serviceName: 'a' }, { name: 's', serviceName: 'b' }] } } }), webhook: 'inferencegraph.kserve-webhook-server.validator', detail: 'Node "root" of InferenceGraph "probe" contains more than one step with name "s"' },
  { rule: 'a step without target', ...kserve('inferencegraphs', 'InferenceGraph', 'v1alpha1', { nodes: { root: { routerType: 'Sequence', steps: [{ name: 's' }] } } }), webhook: 'inferencegraph.kserve-webhook-server.validator', detail: 'Step 0 ("s") in node "root" of InferenceGraph "probe" does not specify an inference target' },
  { rule: 'a splitter route without weight', ...kserve('inferencegraphs', 'InferenceGraph', 'v1alpha1', { nodes: { root: { routerType: 'Splitter', steps: [{ serviceName: 'a', weight: 100 }, { serviceName: 'b' }] } } }), webhook: 'inferencegraph.kserve-webhook-server.validator', detail: "InferenceGraph[probe] Node[root] Route[b] missing the 'Weight'" },
  { rule: 'a trained model name', ...kserve('trainedmodels', 'TrainedModel', 'v1alpha1', { inferenceService: 'iris', model: { framework: 'sklearn', storageUri: 's3://m', memory: '1Gi' } }, 'iris.v1'), webhook: 'trainedmodel.kserve-webhook-server.validator', detail: `the Trained Model "iris.v1" is invalid: a Trained Model name must consist of alphanumeric characters, '_', or '-'. (e.g. "my-Name" or "abc_123", regex used for validation is '^[a-zA-Z0-9_-]+$')` },
  { rule: 'two priorities for one model format', ...kserve('servingruntimes', 'ServingRuntime', 'v1alpha1', { protocolVersions: ['v2'], supportedModelFormats: [{ name: 'sklearn', autoSelect: true, priority: 1 }, { name: 'sklearn', autoSelect: true, priority: 2 }], containers: [{ name: 'c', image: 'x' }] }), webhook: 'servingruntime.kserve-webhook-server.validator', detail: 'different priorities assigned for the model format sklearn under the servingruntime probe' },
  { rule: 'a job name that is no DNS-1035 label', ...pytorch({ pytorchReplicaSpecs: { Master: replica(1) } }, '1job'), webhook: 'validator.pytorchjob.training-operator.kubeflow.org', detail: `metadata.name: Invalid value: "1job": should match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')` },
  { rule: 'no replica specs', ...pytorch({}), webhook: 'validator.pytorchjob.training-operator.kubeflow.org', detail: 'spec.pytorchReplicaSpecs: Required value: must be required' },
  { rule: 'a container without image', ...pytorch({ pytorchReplicaSpecs: { Master: replica(1, [{ name: 'pytorch' }]) } }), webhook: 'validator.pytorchjob.training-operator.kubeflow.org', detail: 'spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image: Required value: must be required' },
  { rule: 'a replica type without containers', ...pytorch({ pytorchReplicaSpecs: { Master: replica(1, []) } }), webhook: 'validator.pytorchjob.training-operator.kubeflow.org', detail: '[spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must be specified, spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must have at least one container with name pytorch]' },
  { rule: 'nProcPerNode twice', ...pytorch({ pytorchReplicaSpecs: { Master: replica(1), Worker: replica(1) }, nprocPerNode: '2', elasticPolicy: { nProcPerNode: 2 } }), webhook: 'validator.pytorchjob.training-operator.kubeflow.org', detail: 'spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with spec.nprocPerNode' },
  { rule: 'an elastic policy without Worker', ...pytorch({ pytorchReplicaSpecs: { Master: replica(1) }, elasticPolicy: { maxReplicas: 2 } }), webhook: 'validator.pytorchjob.training-operator.kubeflow.org', detail: 'spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic policy is used' },
];

describe('every simulated Kubeflow webhook rule answers with its upstream sentence (Charmed Kubeflow 1.10)', () => {
  let api: Cluster;
  let stop: () => void;
  before(() => {
    const cluster = inProcessCluster();
    cluster.api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'alice', labels: { 'katib.kubeflow.org/metrics-collector-injection': 'enabled' } } });
    const webhooks = installKubeflowWebhooks(cluster.api, { release: '1.10', ready: true });
    // the ServingRuntime validator checks a runtime only against the namespace's others, and with none it admits anything
    cluster.api.create({ group: 'serving.kserve.io', resource: 'servingruntimes' }, { apiVersion: 'serving.kserve.io/v1alpha1', kind: 'ServingRuntime', metadata: { name: 'existing', namespace: 'alice' }, spec: { supportedModelFormats: [{ name: 'onnx' }], containers: [{ name: 'c', image: 'x' }] } });
    api = cluster.api;
    stop = () => { webhooks.stop(); cluster.stop(); };
  });
  after(() => stop());

  for (const probe of PROBES) {
    it(`${probe.webhook}: ${probe.rule}`, () => {
      let message = '';
      try {
        api.create(probe.ref, probe.object);
      } catch (error) {
        message = (error as Error).message;
      }
      const resource = `${probe.ref.resource}.${probe.ref.group}`;
      expect(message).to.equal(`${resource} "${probe.object.metadata.name}" is forbidden: admission webhook "${probe.webhook}" denied the request: ${probe.detail}`);
    });
  }

  it('katib: parameters and nasConfig together (upstream prints the spec with Go\'s %#v, which is not reproduced)', () => {
    const spec = { ...baseSpec(), nasConfig: { graphConfig: { numLayers: 2 } } };
    let message = '';
    try {
      api.create(EXPERIMENTS, { apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'nas', namespace: 'alice' }, spec });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.startsWith('experiments.kubeflow.org "nas" is forbidden: admission webhook "validator.experiment.katib.kubeflow.org" denied the request: spec: Invalid value: ')).to.equal(true);
    expect(message.endsWith(': only one of spec.parameters and spec.nasConfig can be specified')).to.equal(true);
  });

  it('katib: an Experiment that completed may not be restarted, nor its maxTrialCount set at or below the Trials it ran', () => {
    const made = api.create(EXPERIMENTS, { apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'done', namespace: 'alice' }, spec: { ...baseSpec(), maxTrialCount: 4 } });
    const finished = api.updateStatus(EXPERIMENTS, { ...made, status: { trials: 4, conditions: [{ type: 'Succeeded', status: 'True', reason: 'ExperimentGoalReached' }] } });
    let message = '';
    try {
      api.update(EXPERIMENTS, { ...finished, spec: { ...(finished.spec as object), maxTrialCount: 3 } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).to.equal('experiments.kubeflow.org "done" is forbidden: admission webhook "validator.experiment.katib.kubeflow.org" denied the request: [spec.resumePolicy: Invalid value: "Never": Experiment can be restarted if it is in succeeded state by reaching max trials and spec.resumePolicy = LongRunning or spec.resumePolicy = FromVolume, when experiment is completed, spec.maxTrialCount: Invalid value: 3: must be greater than status.trials count]');
  });
});
