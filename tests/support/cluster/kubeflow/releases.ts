// The Kubeflow CRDs of each Charmed Kubeflow release, as compact profiles: which kinds a release serves, their
// versions (storage first), and the parts of their schemas that change from one release to the next — what a
// blue/green restore from release N into N+1 meets. Everything else stays permissive (x-kubernetes-preserve-unknown-
// fields). The facts come from the CRDs the charms of each release install (canonical/bundle-kubeflow
// releases/<N>/stable/bundle.yaml → each charm's CRD templates; istio/istio crd-all.gen.yaml at the istioctl the
// istio-pilot charm pins); `npm run cluster -- --crds DIR` serves the real files instead.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Schema } from '../crd-schema.ts';
import { crdObject, kubeflowCrdSpecs, type CrdSpec } from './crds.ts';

export const RELEASES = ['1.8', '1.9', '1.10', '1.11'] as const;
export type Release = (typeof RELEASES)[number];

export function isRelease(value: string): value is Release {
  return (RELEASES as readonly string[]).includes(value);
}

/** Every ordered forward pair of releases: each release into every later one, adjacent steps and skips alike. */
export function forwardPairs(): Array<[Release, Release]> {
  return RELEASES.flatMap((from, i) => RELEASES.slice(i + 1).map((to): [Release, Release] => [from, to]));
}

const any: Schema = { 'x-kubernetes-preserve-unknown-fields': true };
/** an object whose unknown fields are kept, with the named parts declared */
const open = (properties: Record<string, Schema>, extra: Partial<Schema> = {}): Schema => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties, ...extra });
/** an object that declares exactly these fields (anything else is pruned); `declared` gives some of them a schema */
const closed = (names: readonly string[], declared: Record<string, Schema> = {}, extra: Partial<Schema> = {}): Schema => ({
  type: 'object', properties: Object.fromEntries(names.map((n) => [n, declared[n] ?? any])), ...extra,
});
const resource = (spec: Schema): Schema => ({
  type: 'object',
  properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
});

const after = (release: Release, first: Release) => RELEASES.indexOf(release) >= RELEASES.indexOf(first);

/**
 * volumes[].ephemeral.volumeClaimTemplate.spec.resources: `claims` is declared while the charm's CRDs were generated
 * from Kubernetes ≥ 1.26 libraries, and pruned where they were not (training-operator from CKF 1.9, KServe from 1.10)
 */
function ephemeralVolumes(claims: boolean): Schema {
  const resources = closed(claims ? ['claims', 'limits', 'requests'] : ['limits', 'requests']);
  return { type: 'array', items: open({ ephemeral: open({ volumeClaimTemplate: open({ spec: open({ resources }) }) }) }) };
}

// KServe's InferenceService spec.explainer: Alibi goes with KServe 0.13 (CKF 1.9); 0.15 (CKF 1.11) adds fields
const EXPLAINER_BASE = [
  'activeDeadlineSeconds', 'affinity', 'annotations', 'art', 'automountServiceAccountToken', 'batcher', 'canaryTrafficPercent',
  'containerConcurrency', 'containers', 'dnsConfig', 'dnsPolicy', 'enableServiceLinks', 'hostAliases', 'hostIPC', 'hostNetwork', 'hostPID',
  'hostUsers', 'hostname', 'imagePullSecrets', 'initContainers', 'labels', 'logger', 'maxReplicas', 'minReplicas', 'nodeName',
  'nodeSelector', 'os', 'overhead', 'preemptionPolicy', 'priority', 'priorityClassName', 'readinessGates', 'resourceClaims',
  'restartPolicy', 'runtimeClassName', 'scaleMetric', 'scaleTarget', 'schedulerName', 'schedulingGates', 'securityContext',
  'serviceAccount', 'serviceAccountName', 'setHostnameAsFQDN', 'shareProcessNamespace', 'subdomain', 'terminationGracePeriodSeconds',
  'timeout', 'tolerations', 'topologySpreadConstraints', 'volumes',
];
function explainerFields(release: Release): string[] {
  if (release === '1.8') return [...EXPLAINER_BASE, 'alibi'];
  const fields = [...EXPLAINER_BASE, 'deploymentStrategy'];
  return after(release, '1.11') ? [...fields, 'autoScaling', 'resources', 'scaleMetricType'] : fields;
}

// spec.predictor.workerSpec (multi-node serving) from KServe 0.14 (CKF 1.10); 0.15 replaces `size` with the two
// parallelism fields
const WORKER_BASE = [
  'activeDeadlineSeconds', 'affinity', 'automountServiceAccountToken', 'containers', 'dnsConfig', 'dnsPolicy', 'enableServiceLinks',
  'ephemeralContainers', 'hostAliases', 'hostIPC', 'hostNetwork', 'hostPID', 'hostUsers', 'hostname', 'imagePullSecrets',
  'initContainers', 'nodeName', 'nodeSelector', 'os', 'overhead', 'preemptionPolicy', 'priority', 'priorityClassName',
  'readinessGates', 'resourceClaims', 'restartPolicy', 'runtimeClassName', 'schedulerName', 'schedulingGates', 'securityContext',
  'serviceAccount', 'serviceAccountName', 'setHostnameAsFQDN', 'shareProcessNamespace', 'subdomain', 'terminationGracePeriodSeconds',
  'tolerations', 'topologySpreadConstraints', 'volumes',
];
function workerFields(release: Release): string[] {
  return after(release, '1.11') ? [...WORKER_BASE, 'pipelineParallelSize', 'resources', 'tensorParallelSize'] : [...WORKER_BASE, 'size'];
}

function inferenceService(release: Release): Schema {
  const claims = !after(release, '1.10');
  const predictor: Record<string, Schema> = { volumes: ephemeralVolumes(claims) };
  if (after(release, '1.10')) predictor.workerSpec = closed(workerFields(release), { size: { type: 'integer' }, pipelineParallelSize: { type: 'integer' }, tensorParallelSize: { type: 'integer' } });
  return resource(open({
    predictor: open(predictor),
    explainer: closed(explainerFields(release), { volumes: ephemeralVolumes(claims) }),
    transformer: open({ volumes: ephemeralVolumes(claims) }),
  }, { required: ['predictor'] }));
}

/** the Notebook's pod template: from CKF 1.9 at least one container, and each names its image */
function notebook(release: Release): Schema {
  const strict = after(release, '1.9');
  const containers: Schema = { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, required: strict ? ['name', 'image'] : ['name'] }, ...(strict ? { minItems: 1 } : {}) };
  return resource(open({ template: open({ spec: open({ containers }) }) }));
}

const REPLICA_SPECS: Record<string, string> = {
  PyTorchJob: 'pytorchReplicaSpecs', TFJob: 'tfReplicaSpecs', MPIJob: 'mpiReplicaSpecs', XGBoostJob: 'xgbReplicaSpecs',
  PaddleJob: 'paddleReplicaSpecs', MXJob: 'mxReplicaSpecs', JAXJob: 'jaxReplicaSpecs',
};

/** training-operator jobs: from CKF 1.9 the scheduling queue is immutable (a transition rule) and ephemeral claims go */
function trainingJob(kind: string, release: Release): Schema {
  const from19 = after(release, '1.9');
  const queue: Schema = { type: 'string', ...(from19 ? { 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec.runPolicy.schedulingPolicy.queue is immutable' }] } : {}) };
  const replica = open({ template: open({ spec: open({ volumes: ephemeralVolumes(!from19) }) }) });
  return resource(open({
    runPolicy: open({ schedulingPolicy: open({ queue }) }),
    [REPLICA_SPECS[kind]!]: { type: 'object', additionalProperties: replica },
  }, kind === 'MXJob' ? { required: ['jobMode', 'mxReplicaSpecs'] } : {}));
}

/** Istio's AuthorizationPolicy: `when` conditions name their key from 1.22 (CKF 1.9); 1.24 (CKF 1.10) adds CEL rules */
function authorizationPolicy(release: Release): Schema {
  const when: Schema = { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...(after(release, '1.9') ? { required: ['key'] } : {}) } };
  const rules: Schema = { type: 'array', items: open({ when }) };
  if (!after(release, '1.10')) return resource(open({ rules }));
  return resource(open({
    rules,
    selector: open({
      matchLabels: {
        type: 'object', additionalProperties: { type: 'string', 'x-kubernetes-validations': [{ rule: "!self.contains('*')", message: 'wildcard not allowed in label value match' }] },
        'x-kubernetes-validations': [{ rule: "self.all(key, !key.contains('*'))", message: 'wildcard not allowed in label key match' }],
      },
    }),
  }, {
    'x-kubernetes-validations': [{ rule: '(has(self.selector)?1:0)+(has(self.targetRef)?1:0)+(has(self.targetRefs)?1:0)<=1', message: 'only one of targetRefs or selector can be set' }],
  }));
}

/** served versions, the storage version first */
function versionsOf(kind: string, release: Release, current: readonly string[]): string[] {
  if (kind === 'VirtualService') {
    if (release === '1.8') return ['v1alpha3', 'v1beta1'];
    return release === '1.11' ? ['v1', 'v1alpha3', 'v1beta1'] : ['v1beta1', 'v1alpha3', 'v1'];
  }
  if (kind === 'AuthorizationPolicy') return release === '1.11' ? ['v1', 'v1beta1'] : ['v1beta1', 'v1'];
  return [...current];
}

const MXJOB: CrdSpec = { group: 'kubeflow.org', kind: 'MXJob', plural: 'mxjobs', versions: ['v1'], status: true, categories: ['all', 'kubeflow'] };
const SELDON_DEPLOYMENT: CrdSpec = {
  group: 'machinelearning.seldon.io', kind: 'SeldonDeployment', plural: 'seldondeployments', shortNames: ['sdep'],
  versions: ['v1', 'v1alpha2', 'v1alpha3'], status: true,
};

/** the kinds of a release: seldon-core leaves the bundle in 1.9, MXJob leaves training-operator in 1.10 (JAXJob comes) */
function kindsOf(release: Release): CrdSpec[] {
  // the permissive set serves MXJob too (as CKF 1.9's training-operator 1.8 does): a release decides for itself
  const kinds = kubeflowCrdSpecs.filter((k) => k.kind !== 'MXJob' && (k.kind !== 'JAXJob' || after(release, '1.10')));
  if (!after(release, '1.10')) kinds.push(MXJOB);
  if (release === '1.8') kinds.push(SELDON_DEPLOYMENT);
  return kinds;
}

function schemaOf(kind: string, release: Release): Schema | undefined {
  if (kind === 'InferenceService') return inferenceService(release);
  if (kind === 'Notebook') return notebook(release);
  if (kind in REPLICA_SPECS) return trainingJob(kind, release);
  if (kind === 'AuthorizationPolicy') return authorizationPolicy(release);
  if (kind === 'SeldonDeployment') return resource(open({ predictors: { type: 'array', items: any } }, { required: ['predictors'] }));
  return undefined;
}

/** The CRDs a cluster of this CKF release serves (fresh objects). */
export function releaseCrds(release: Release): KubeObject[] {
  return kindsOf(release).map((spec) => {
    const schema = schemaOf(spec.kind, release);
    return crdObject({ ...spec, versions: versionsOf(spec.kind, release, spec.versions), ...(schema ? { schema } : {}) });
  });
}
