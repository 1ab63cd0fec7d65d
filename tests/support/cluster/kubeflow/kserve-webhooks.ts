// KServe's InferenceService webhooks, behind kserve-webhook-server-service as canonical/kserve-operators ships them
// (charms/kserve-controller/src/templates/webhook_manifests.yaml.j2: inferenceservice.kserve-webhook-server.defaulter
// and .validator, serving.kserve.io/v1beta1 inferenceservices, CREATE and UPDATE, failurePolicy Fail), after
// kserve/kserve pkg/apis/serving/v1beta1 at the version each Charmed Kubeflow release runs (0.11 in 1.8, 0.13 in 1.9,
// 0.14 in 1.10, 0.15 in 1.11):
// - the defaulter (inference_service_defaults.go DefaultInferenceService → setPredictorModelDefaults): a predictor
//   written the old way (`sklearn:`, `tensorflow:` …) becomes `model:` with that modelFormat, the spec moved over;
// - the validator (inference_service_validation.go validateInferenceService, component.go): the name, exactly one
//   implementation per component (ExactlyOneErrorFor lists PredictorSpec's Go fields but the last), and the replicas
//   (validateReplicas), for the predictor; a plain error is controller-runtime's Denied, code 403. The sentences changed in 0.14, so
//   each release gets its own. Not simulated: autoscaler annotations, storage URIs, multi-node and logger checks.
// The InferenceGraph, TrainedModel and ServingRuntime validators the charm also ships are in kserve-model-webhooks.ts.
import type { Release } from './releases.ts';
import type { WebhookAnswer, WebhookRequest } from '../webhooks.ts';

/** constants.SupportedModel* for the legacy predictor fields the defaulter converts */
const LEGACY_FORMATS: Record<string, string> = {
  sklearn: 'sklearn', xgboost: 'xgboost', tensorflow: 'tensorflow', pytorch: 'pytorch', onnx: 'onnx',
  pmml: 'pmml', lightgbm: 'lightgbm', paddle: 'paddle',
};

/** PredictorSpec's fields (json name → Go name), in the struct's order, per KServe version */
function predictorFields(release: Release): Array<[string, string]> {
  const fields: Array<[string, string]> = [['sklearn', 'SKLearn'], ['xgboost', 'XGBoost'], ['tensorflow', 'Tensorflow'], ['pytorch', 'PyTorch'], ['triton', 'Triton'], ['onnx', 'ONNX']];
  if (release !== '1.8') fields.push(['huggingface', 'HuggingFace']);
  fields.push(['pmml', 'PMML'], ['lightgbm', 'LightGBM'], ['paddle', 'Paddle'], ['model', 'Model']);
  if (release === '1.10' || release === '1.11') fields.push(['workerSpec', 'WorkerSpec']);
  return fields;
}

const newSentences = (release: Release) => release === '1.10' || release === '1.11';

export function defaultInferenceService(request: WebhookRequest): WebhookAnswer {
  const predictor = ((request.object.spec ??= {}) as { predictor?: Record<string, unknown> }).predictor;
  if (!predictor) return { allowed: true };
  for (const [field, format] of Object.entries(LEGACY_FORMATS)) {
    const legacy = predictor[field] as Record<string, unknown> | undefined;
    if (!legacy) continue;
    predictor.model = { ...legacy, modelFormat: { name: format } };
    delete predictor[field];
    break;
  }
  return { allowed: true };
}

export function inferenceServiceValidator(release: Release): (request: WebhookRequest) => WebhookAnswer {
  return (request) => {
    const message = inferenceServiceProblem(release, request);
    return message ? { allowed: false, code: 403, reason: 'Forbidden', message } : { allowed: true };
  };
}

function inferenceServiceProblem(release: Release, request: WebhookRequest): string | undefined {
  const name = request.object.metadata.name ?? '';
  const format = '[a-z]([-a-z0-9]*[a-z0-9])?';
  if (!new RegExp(`^${format}$`).test(name)) {
    const the = newSentences(release) ? 'the' : 'The';
    return `${the} InferenceService "${name}" is invalid: a InferenceService name must consist of lower case alphanumeric characters or '-', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used for validation is '${format}')`;
  }
  const spec = (request.object.spec ?? {}) as Record<string, Record<string, unknown> | undefined>;
  // the predictor only: the transformer's and explainer's implementation lists are not simulated
  const components: Array<[string, Record<string, unknown> | undefined, Array<[string, string]>]> = [
    ['PredictorSpec', spec.predictor ?? {}, predictorFields(release)],
  ];
  for (const [type, component, implementations] of components) {
    if (!component) continue;
    const custom = Array.isArray(component.containers) && component.containers.length > 0;
    const count = implementations.filter(([field]) => field !== 'workerSpec' && component[field] !== undefined && component[field] !== null).length + (custom ? 1 : 0);
    if (count !== 1) {
      const names = [...implementations.map(([, go]) => go), 'PodSpec'];
      return `exactly one of [${names.join(', ')}] must be specified in ${type}`;
    }
    const problem = replicasProblem(release, component.minReplicas as number | undefined, (component.maxReplicas as number | undefined) ?? 0);
    if (problem) return problem;
  }
  return undefined;
}

/** component.go validateReplicas (constants.DefaultMinReplicas is 1) */
function replicasProblem(release: Release, minReplicas: number | undefined, maxReplicas: number): string | undefined {
  const min = minReplicas ?? 1;
  const current = newSentences(release);
  if (min < 0) return current ? "'MinReplicas' cannot be less than 0" : 'MinReplicas cannot be less than 0.';
  if (maxReplicas < 0) return current ? "'MaxReplicas' cannot be less than 0" : 'MaxReplicas cannot be less than 0.';
  if (min > maxReplicas && maxReplicas !== 0) return current ? "'MinReplicas' cannot be greater than MaxReplicas" : 'MinReplicas cannot be greater than MaxReplicas.';
  return undefined;
}
