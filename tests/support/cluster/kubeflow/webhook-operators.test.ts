// Probes of the simulated Kubeflow webhooks: each rule gets the object it refuses and must answer the upstream
// sentence, wrapped as kube-apiserver wraps a webhook's refusal; a webhook whose operator Pod is not Ready must fail
// the write as kube-apiserver does under failurePolicy Fail, and answer once the Pod is Ready. The expected sentences
// are copied from the upstream files each simulation names, never computed from it.
import { expect } from 'chai';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Cluster } from '../cluster.ts';
import { inProcessCluster } from '../in-process.ts';
import { installKubeflowWebhooks, type KubeflowWebhooks } from './webhook-operators.ts';
import type { Release } from './releases.ts';

const EXPERIMENTS = { group: 'kubeflow.org', resource: 'experiments' };
const ISVCS = { group: 'serving.kserve.io', resource: 'inferenceservices' };
const PYTORCHJOBS = { group: 'kubeflow.org', resource: 'pytorchjobs' };
const NAMESPACES = { group: '', resource: 'namespaces' };

function experiment(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name, namespace: 'alice' },
    spec: {
      objective: { type: 'maximize', goal: 0.99, objectiveMetricName: 'accuracy' },
      algorithm: { algorithmName: 'random' },
      maxTrialCount: 4, parallelTrialCount: 2, maxFailedTrialCount: 1,
      parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.03' } }],
      trialTemplate: {
        primaryContainerName: 'training', trialParameters: [{ name: 'learningRate', reference: 'lr' }],
        trialSpec: { apiVersion: 'batch/v1', kind: 'Job', spec: { template: { spec: { containers: [{ name: 'training', image: 'busybox', command: ['train', '--lr=${trialParameters.learningRate}'] }] } } } },
      },
      ...spec,
    },
  };
}

function isvc(name: string, predictor: Record<string, unknown>): KubeObject {
  return { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace: 'alice' }, spec: { predictor } };
}

function pytorchJob(name: string, replicaSpecs: Record<string, unknown>): KubeObject {
  return { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name, namespace: 'alice' }, spec: { pytorchReplicaSpecs: replicaSpecs } };
}

const pytorch = (replicas: number, name = 'pytorch') => ({ replicas, template: { spec: { containers: [{ name, image: 'pytorch/pytorch:2.1' }] } } });

function refusal(run: () => unknown): { status: number; reason: string; message: string } {
  try {
    run();
  } catch (error) {
    const e = error as { status: number; reason: string; message: string };
    return { status: e.status, reason: e.reason, message: e.message };
  }
  throw new Error('the write was accepted');
}

function setUp(release: Release, ready: boolean): { api: Cluster; webhooks: KubeflowWebhooks; stop(): void } {
  const cluster = inProcessCluster();
  cluster.api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'alice', labels: { 'katib.kubeflow.org/metrics-collector-injection': 'enabled' } } });
  cluster.api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bare' } });
  const webhooks = installKubeflowWebhooks(cluster.api, { release, ready });
  return { api: cluster.api, webhooks, stop: () => { webhooks.stop(); cluster.stop(); } };
}

describe('simulated Kubeflow admission webhooks', () => {
  describe('Katib (kubeflow/katib v0.18.0 validator.go, experiment_defaults.go)', () => {
    let api: Cluster;
    let stop: () => void;
    beforeEach(() => ({ api, stop } = setUp('1.10', true)));
    afterEach(() => stop());

    const katibRefusal = (name: string, detail: string) =>
      `experiments.kubeflow.org "${name}" is forbidden: admission webhook "validator.experiment.katib.kubeflow.org" denied the request: ${detail}`;

    it('defaults an Experiment: parallelTrialCount 3, resumePolicy Never, the Job conditions, StdOut, uniform, metric strategies', () => {
      const made = api.create(EXPERIMENTS, experiment('defaults', { parallelTrialCount: undefined }));
      const spec = made.spec as Record<string, any>;
      expect(spec.parallelTrialCount).to.equal(3);
      expect(spec.resumePolicy).to.equal('Never');
      expect(spec.trialTemplate.successCondition).to.equal('status.conditions.#(type=="Complete")#|#(status=="True")#');
      expect(spec.trialTemplate.failureCondition).to.equal('status.conditions.#(type=="Failed")#|#(status=="True")#');
      expect(spec.metricsCollectorSpec).to.deep.equal({ collector: { kind: 'StdOut' } });
      expect(spec.parameters[0].feasibleSpace.distribution).to.equal('uniform');
      expect(spec.objective.metricStrategies).to.deep.equal([{ name: 'accuracy', value: 'max' }]);
    });

    it('refuses a name longer than 40 characters', () => {
      const name = `e${'x'.repeat(40)}`;
      const answer = refusal(() => api.create(EXPERIMENTS, experiment(name)));
      expect(answer.status).to.equal(400);
      expect(answer.reason).to.equal('Forbidden');
      expect(answer.message).to.equal(katibRefusal(name, `metadata.name: Invalid value: "${name}": name must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used for validation is '^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not be longer than 40 characters. `));
    });

    it('refuses counts out of range', () => {
      expect(refusal(() => api.create(EXPERIMENTS, experiment('zero', { maxTrialCount: 0, parallelTrialCount: 0, maxFailedTrialCount: 0 }))).message)
        .to.equal(katibRefusal('zero', '[spec.maxTrialCount: Invalid value: 0: must be greater than 0, spec.parallelTrialCount: Invalid value: 0: must be greater than 0]'));
      expect(refusal(() => api.create(EXPERIMENTS, experiment('many', { maxTrialCount: 2, parallelTrialCount: 3 }))).message)
        .to.equal(katibRefusal('many', 'spec.parallelTrialCount: Invalid value: 3: should be less than or equal to spec.maxTrialCount'));
    });

    it('refuses an algorithm katib-config does not know', () => {
      expect(refusal(() => api.create(EXPERIMENTS, experiment('algo', { algorithm: { algorithmName: 'annealing' } }))).message)
        .to.equal(katibRefusal('algo', 'spec.algorithm.algorithmName: Invalid value: "annealing": unable to get Suggestion config data for algorithm annealing: failed to find suggestion config for algorithm: annealing in ConfigMap: katib-config'));
    });

    it('refuses a missing objective, trial template and parameters', () => {
      expect(refusal(() => api.create(EXPERIMENTS, experiment('noobj', { objective: undefined }))).message)
        .to.equal(katibRefusal('noobj', 'spec.objective: Required value: must be specified'));
      expect(refusal(() => api.create(EXPERIMENTS, experiment('notemplate', { trialTemplate: undefined }))).message)
        .to.equal(katibRefusal('notemplate', 'spec.trialTemplate: Required value: must be specified'));
      expect(refusal(() => api.create(EXPERIMENTS, experiment('noparams', { parameters: [] }))).message)
        .to.equal(katibRefusal('noparams', 'spec: Required value: spec.parameters or spec.nasConfig must be specified'));
    });

    it('refuses an Experiment in a namespace without the metrics-collector label', () => {
      const e = experiment('elsewhere');
      e.metadata.namespace = 'bare';
      expect(refusal(() => api.create(EXPERIMENTS, e)).message)
        .to.equal(katibRefusal('elsewhere', 'Cannot create the Experiment "elsewhere" in namespace "bare": the namespace lacks label "katib.kubeflow.org/metrics-collector-injection: enabled"'));
    });

    it('lets an UPDATE change only the three counts', () => {
      api.create(EXPERIMENTS, experiment('edit'));
      const current = api.get(EXPERIMENTS, 'edit', 'alice')!;
      api.update(EXPERIMENTS, { ...current, spec: { ...(current.spec as object), maxTrialCount: 8 } });
      const again = api.get(EXPERIMENTS, 'edit', 'alice')!;
      expect(refusal(() => api.update(EXPERIMENTS, { ...again, spec: { ...(again.spec as object), algorithm: { algorithmName: 'tpe' } } })).message)
        .to.equal(katibRefusal('edit', 'spec: Forbidden: only spec.parallelTrialCount, spec.maxTrialCount and spec.maxFailedTrialCount are editable'));
    });
  });

  describe('KServe (kserve/kserve pkg/apis/serving/v1beta1, 0.13 and 0.14)', () => {
    it('moves a legacy predictor to model with its modelFormat', () => {
      const { api, stop } = setUp('1.10', true);
      try {
        const made = api.create(ISVCS, isvc('iris', { sklearn: { storageUri: 'gs://models/iris' } }));
        expect((made.spec as any).predictor).to.deep.equal({ model: { storageUri: 'gs://models/iris', modelFormat: { name: 'sklearn' } } });
      } finally {
        stop();
      }
    });

    for (const [release, the, minMax] of [['1.9', 'The', 'MinReplicas cannot be greater than MaxReplicas.'], ['1.10', 'the', "'MinReplicas' cannot be greater than MaxReplicas"]] as const) {
      it(`refuses a bad name, two predictors and minReplicas above maxReplicas with KServe's ${release} sentences`, () => {
        const { api, stop } = setUp(release, true);
        const denied = (name: string, detail: string) =>
          `inferenceservices.serving.kserve.io "${name}" is forbidden: admission webhook "inferenceservice.kserve-webhook-server.validator" denied the request: ${detail}`;
        try {
          // a name the CRD's schema accepts but KServe's regex does not: it starts with a digit
          const answer = refusal(() => api.create(ISVCS, isvc('1iris', { model: { modelFormat: { name: 'sklearn' } } })));
          expect(answer.status).to.equal(403);
          expect(answer.message).to.equal(denied('1iris', `${the} InferenceService "1iris" is invalid: a InferenceService name must consist of lower case alphanumeric characters or '-', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`));
          const fields = release === '1.9'
            ? 'SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, PMML, LightGBM, Paddle, Model, PodSpec'
            : 'SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, PMML, LightGBM, Paddle, Model, WorkerSpec, PodSpec';
          expect(refusal(() => api.create(ISVCS, isvc('two', { model: { modelFormat: { name: 'sklearn' } }, containers: [{ name: 'kserve-container', image: 'x' }] }))).message)
            .to.equal(denied('two', `exactly one of [${fields}] must be specified in PredictorSpec`));
          expect(refusal(() => api.create(ISVCS, isvc('scale', { model: { modelFormat: { name: 'sklearn' } }, minReplicas: 3, maxReplicas: 2 }))).message)
            .to.equal(denied('scale', minMax));
        } finally {
          stop();
        }
      });
    }
  });

  describe('KServe\'s InferenceGraph, TrainedModel and ServingRuntime validators (kserve/kserve 0.14)', () => {
    const denied = (resource: string, webhook: string, name: string, detail: string) =>
      `${resource}.serving.kserve.io "${name}" is forbidden: admission webhook "${webhook}.kserve-webhook-server.validator" denied the request: ${detail}`;
    let api: Cluster;
    let stop: () => void;
    beforeEach(() => ({ api, stop } = setUp('1.10', true)));
    afterEach(() => stop());

    it('refuses an InferenceGraph without a root node, with a step that names two targets, and a splitter whose weights do not add up', () => {
      const IGS = { group: 'serving.kserve.io', resource: 'inferencegraphs' };
      const graph = (name: string, nodes: Record<string, unknown>): KubeObject => ({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'InferenceGraph', metadata: { name, namespace: 'alice' }, spec: { nodes } });
      expect(refusal(() => api.create(IGS, graph('rootless', { first: { routerType: 'Sequence', steps: [{ serviceName: 'a' }] } }))).message)
        .to.equal(denied('inferencegraphs', 'inferencegraph', 'rootless', "root node not found, InferenceGraph needs a node with name 'root' as the root node of the graph"));
      expect(refusal(() => api.create(IGS, graph('two', { root: { routerType: 'Sequence', steps: [{ name: 's', serviceName: 'a', serviceUrl: 'http://b' }] } }))).message)
        .to.equal(denied('inferencegraphs', 'inferencegraph', 'two', 'Step 0 ("s") in node "root" of InferenceGraph "two" specifies more than one of nodeName, serviceName, serviceUrl'));
      expect(refusal(() => api.create(IGS, graph('split', { root: { routerType: 'Splitter', steps: [{ serviceName: 'a', weight: 60 }, { serviceName: 'b', weight: 30 }] } }))).message)
        .to.equal(denied('inferencegraphs', 'inferencegraph', 'split', 'InferenceGraph[split] Node[root] splitter node: the sum of traffic weights for all routing targets should be 100'));
      expect(api.create(IGS, graph('fine', { root: { routerType: 'Splitter', steps: [{ serviceName: 'a', weight: 60 }, { serviceName: 'b', weight: 40 }] } })).metadata.name).to.equal('fine');
    });

    it('refuses a TrainedModel whose storageUri has no supported prefix, and a change of its memory', () => {
      const TMS = { group: 'serving.kserve.io', resource: 'trainedmodels' };
      const model = (name: string, storageUri: string, memory = '1Gi'): KubeObject =>
        ({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'TrainedModel', metadata: { name, namespace: 'alice' }, spec: { inferenceService: 'iris', model: { framework: 'sklearn', storageUri, memory } } });
      expect(refusal(() => api.create(TMS, model('local', 'pvc://models/iris'))).message)
        .to.equal(denied('trainedmodels', 'trainedmodel', 'local', 'the Trained Model "local" storageUri field is invalid. The storage uri must start with one of the prefixes: s3://, gs://, https://, http://. (the storage uri given is "pvc://models/iris")'));
      const made = api.create(TMS, model('iris-v1', 's3://models/iris'));
      expect(refusal(() => api.update(TMS, { ...made, spec: { ...(made.spec as object), model: { framework: 'sklearn', storageUri: 's3://models/iris', memory: '2Gi' } } })).message)
        .to.equal(denied('trainedmodels', 'trainedmodel', 'iris-v1', 'the Trained Model "iris-v1" memory field is immutable. The memory was "1Gi" but it is updated to "2Gi"'));
    });

    it('refuses a second ServingRuntime giving an auto-selected model format the priority another runtime gives it', () => {
      const SRS = { group: 'serving.kserve.io', resource: 'servingruntimes' };
      const runtime = (name: string, priority: number): KubeObject => ({
        apiVersion: 'serving.kserve.io/v1alpha1', kind: 'ServingRuntime', metadata: { name, namespace: 'alice' },
        spec: { protocolVersions: ['v2'], supportedModelFormats: [{ name: 'sklearn', version: '1', autoSelect: true, priority }], containers: [{ name: 'kserve-container', image: 'x' }] },
      });
      api.create(SRS, runtime('first', 1));
      expect(refusal(() => api.create(SRS, runtime('second', 1))).message)
        .to.equal(denied('servingruntimes', 'servingruntime', 'second', 'same priority assigned for the model format sklearn in the servingruntimes first and second in namespace alice'));
      expect(api.create(SRS, runtime('third', 2)).metadata.name).to.equal('third');
    });
  });

  describe('training operator (kubeflow/training-operator v1.8.0 and v1.9.0 pkg/webhooks)', () => {
    it('refuses a Master with two replicas, a replica type it does not know and a job without a pytorch container', () => {
      const { api, stop } = setUp('1.10', true);
      const denied = (name: string, detail: string) =>
        `pytorchjobs.kubeflow.org "${name}" is forbidden: admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request: ${detail}`;
      try {
        expect(refusal(() => api.create(PYTORCHJOBS, pytorchJob('two-masters', { Master: pytorch(2) }))).message)
          .to.equal(denied('two-masters', 'spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1'));
        expect(refusal(() => api.create(PYTORCHJOBS, pytorchJob('chief', { Chief: pytorch(1) }))).message)
          .to.equal(denied('chief', 'spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief": supported values: "Master", "Worker"'));
        expect(refusal(() => api.create(PYTORCHJOBS, pytorchJob('renamed', { Worker: pytorch(2, 'trainer') }))).message)
          .to.equal(denied('renamed', 'spec.pytorchReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name pytorch'));
        expect(api.create(PYTORCHJOBS, pytorchJob('fine', { Master: pytorch(1), Worker: pytorch(2) })).metadata.uid).to.be.a('string');
      } finally {
        stop();
      }
    });

    it('refuses what the TFJob, XGBoostJob, PaddleJob and JAXJob validators refuse (v1.9.0), and v1.9.0\'s new PyTorchJob and run-policy checks', () => {
      const { api, stop } = setUp('1.10', true);
      const job = (kind: string, name: string, field: string, specs: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject =>
        ({ apiVersion: 'kubeflow.org/v1', kind, metadata: { name, namespace: 'alice' }, spec: { [field]: specs, ...extra } });
      const replica = (container: string, replicas = 1) => ({ replicas, template: { spec: { containers: [{ name: container, image: 'busybox' }] } } });
      const denied = (resource: string, short: string, name: string, detail: string) =>
        `${resource}.kubeflow.org "${name}" is forbidden: admission webhook "validator.${short}.training-operator.kubeflow.org" denied the request: ${detail}`;
      try {
        expect(refusal(() => api.create({ group: 'kubeflow.org', resource: 'tfjobs' }, job('TFJob', 'two-chiefs', 'tfReplicaSpecs', { Chief: replica('tensorflow'), Master: replica('tensorflow') }))).message)
          .to.equal(denied('tfjobs', 'tfjob', 'two-chiefs', 'spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role'));
        expect(refusal(() => api.create({ group: 'kubeflow.org', resource: 'xgboostjobs' }, job('XGBoostJob', 'workers-only', 'xgbReplicaSpecs', { Worker: replica('xgboost', 2) }))).message)
          .to.equal(denied('xgboostjobs', 'xgboostjob', 'workers-only', 'spec.xgbReplicaSpecs[Master]: Required value: must be present'));
        expect(refusal(() => api.create({ group: 'kubeflow.org', resource: 'paddlejobs' }, job('PaddleJob', 'renamed', 'paddleReplicaSpecs', { Worker: replica('trainer') }))).message)
          .to.equal(denied('paddlejobs', 'paddlejob', 'renamed', 'spec.paddleReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one container with name "paddle"'));
        expect(refusal(() => api.create({ group: 'kubeflow.org', resource: 'jaxjobs' }, job('JAXJob', 'master', 'jaxReplicaSpecs', { Master: replica('jax') }))).message)
          .to.equal(denied('jaxjobs', 'jaxjob', 'master', 'spec.jaxReplicaSpecs[Master]: Unsupported value: "Master": supported values: "Worker"'));
        expect(refusal(() => api.create(PYTORCHJOBS, pytorchJob('no-workers', { Master: pytorch(1), Worker: pytorch(0) }))).message)
          .to.equal(denied('pytorchjobs', 'pytorchjob', 'no-workers', 'spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1'));
        expect(refusal(() => api.create(PYTORCHJOBS, { ...pytorchJob('kueued', { Master: pytorch(1) }), spec: { pytorchReplicaSpecs: { Master: pytorch(1) }, runPolicy: { managedBy: 'example.com/other' } } })).message)
          .to.equal(denied('pytorchjobs', 'pytorchjob', 'kueued', 'spec.runPolicy.managedBy: Unsupported value: "example.com/other": supported values: "kueue.x-k8s.io/multikueue", "kubeflow.org/training-operator"'));
      } finally {
        stop();
      }
    });

    it('in Charmed Kubeflow 1.9 (v1.8.0) admits an MXJob (its validator only warns) and a PyTorchJob Worker with no replicas', () => {
      const { api, stop } = setUp('1.9', true);
      try {
        const mxjob = { apiVersion: 'kubeflow.org/v1', kind: 'MXJob', metadata: { name: 'mx', namespace: 'alice' }, spec: { jobMode: 'MXTrain', mxReplicaSpecs: { Worker: { replicas: 1, template: { spec: { containers: [{ name: 'other', image: 'x' }] } } } } } };
        expect(api.create({ group: 'kubeflow.org', resource: 'mxjobs' }, mxjob).metadata.name).to.equal('mx');
        expect(api.create(PYTORCHJOBS, pytorchJob('idle-workers', { Master: pytorch(1), Worker: pytorch(0) })).metadata.name).to.equal('idle-workers');
      } finally {
        stop();
      }
    });

    it('is not there in Charmed Kubeflow 1.8 (training-operator track 1.7 ships no webhook)', () => {
      const { api, webhooks, stop } = setUp('1.8', false);
      try {
        expect(webhooks.operators).to.deep.equal(['katib-controller', 'kserve-controller']);
        expect(api.create(PYTORCHJOBS, pytorchJob('two-masters', { Master: pytorch(2) })).metadata.name).to.equal('two-masters');
      } finally {
        stop();
      }
    });
  });

  describe('a fresh cluster whose operators are not Ready yet', () => {
    it('fails every write a webhook matches as kube-apiserver does under failurePolicy Fail, and admits once the Pod is Ready', () => {
      const { api, webhooks, stop } = setUp('1.10', false);
      try {
        const clusterIp = (api.get({ group: '', resource: 'services' }, 'katib-controller', 'kubeflow')!.spec as { clusterIP: string }).clusterIP;
        const answer = refusal(() => api.create(EXPERIMENTS, experiment('early')));
        expect(answer.status).to.equal(500);
        expect(answer.reason).to.equal('InternalError');
        // the mutating webhook is called first (mutating admission precedes validation)
        expect(answer.message).to.equal(`Internal error occurred: failed calling webhook "defaulter.experiment.katib.kubeflow.org": failed to call webhook: Post "https://katib-controller.kubeflow.svc:443/mutate-experiment?timeout=10s": dial tcp ${clusterIp}:443: connect: connection refused`);
        expect(refusal(() => api.create(ISVCS, isvc('iris', { model: { modelFormat: { name: 'sklearn' } } }))).message)
          .to.match(/^Internal error occurred: failed calling webhook "inferenceservice\.kserve-webhook-server\.defaulter": failed to call webhook: Post "https:\/\/kserve-webhook-server-service\.kubeflow\.svc:443\/mutate-serving-kserve-io-v1beta1-inferenceservice\?timeout=10s": dial tcp [0-9.]+:443: connect: connection refused$/);
        // nothing was stored, and kinds no webhook matches are untouched
        expect(api.get(EXPERIMENTS, 'early', 'alice')).to.equal(undefined);
        expect(api.create({ group: '', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'alice' } }).metadata.name).to.equal('c');

        webhooks.setReady('katib-controller', true);
        expect(api.create(EXPERIMENTS, experiment('early')).metadata.name).to.equal('early');
        // KServe's Pod is still not Ready
        expect(refusal(() => api.create(ISVCS, isvc('iris', { model: { modelFormat: { name: 'sklearn' } } }))).status).to.equal(500);
        webhooks.setReady('kserve-controller', true);
        expect(api.create(ISVCS, isvc('iris', { model: { modelFormat: { name: 'sklearn' } } })).metadata.name).to.equal('iris');
      } finally {
        stop();
      }
    });

    it('makes no Pod in a profile namespace while katib-controller is not Ready (its Pod mutator matches every one)', () => {
      const { api, webhooks, stop } = setUp('1.10', false);
      const PODS = { group: '', resource: 'pods' };
      const pod = (name: string, namespace: string, labels: Record<string, string> = {}): KubeObject =>
        ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { containers: [{ name: 'main', image: 'busybox' }] } });
      try {
        expect(refusal(() => api.create(PODS, pod('mover', 'alice'))).message)
          .to.match(/^Internal error occurred: failed calling webhook "mutator\.pod\.katib\.kubeflow\.org": failed to call webhook: Post "https:\/\/katib-controller\.kubeflow\.svc:443\/mutate-pod\?timeout=10s": dial tcp [0-9.]+:443: connect: connection refused$/);
        // a namespace without the label is not selected
        expect(api.create(PODS, pod('elsewhere', 'bare')).metadata.name).to.equal('elsewhere');
        // from Katib 0.18 on, the controller's own Pods are left out by the configuration's matchCondition
        const controller = { username: 'system:serviceaccount:kubeflow:katib-controller', groups: ['system:serviceaccounts'] };
        expect(api.create(PODS, pod('by-controller', 'alice'), { user: controller }).metadata.name).to.equal('by-controller');
        webhooks.setReady('katib-controller', true);
        expect(api.create(PODS, pod('mover', 'alice')).metadata.name).to.equal('mover');
      } finally {
        stop();
      }
    });

    it('in Charmed Kubeflow 1.9 (Katib 0.17), a Pod labelled katib.kubeflow.org/metrics-collector-injection=disabled is not sent to it', () => {
      const { api, stop } = setUp('1.9', false);
      const PODS = { group: '', resource: 'pods' };
      try {
        const labelled = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'opted-out', namespace: 'alice', labels: { 'katib.kubeflow.org/metrics-collector-injection': 'disabled' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } };
        expect(api.create(PODS, labelled).metadata.name).to.equal('opted-out');
        expect(refusal(() => api.create(PODS, { ...labelled, metadata: { name: 'plain', namespace: 'alice' } })).status).to.equal(500);
      } finally {
        stop();
      }
    });

    it('asks a dry run too: a dry-run create fails the same way while the Pod is not Ready', () => {
      const { api, stop } = setUp('1.10', false);
      try {
        expect(refusal(() => api.create(EXPERIMENTS, experiment('dry'), { dryRun: true })).status).to.equal(500);
      } finally {
        stop();
      }
    });
  });
});
