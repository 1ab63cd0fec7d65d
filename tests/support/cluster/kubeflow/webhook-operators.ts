// The Kubeflow operators whose admission webhooks a restore meets, as their charms deploy them in the `kubeflow`
// model: for each, the workload Pod (Juju's StatefulSet Pod `<app>-0`, labelled app.kubernetes.io/name=<app>), the
// Service the webhook configurations name, and those configurations as the charm's templates write them:
// - katib-controller: canonical/katib-operators charms/katib-controller/src/templates/webhooks.yaml.j2 (Service
//   katib-controller, port 443);
// - kserve-controller: canonical/kserve-operators charms/kserve-controller/src/templates/webhook_manifests.yaml.j2
//   (Service kserve-webhook-server-service, 443 → 9443);
// - training-operator: canonical/training-operator src/templates/validatingwebhookconfiguration.yaml.j2 and
//   service.yaml.j2 (Service training-operator-workload, 443 → 9443), from Charmed Kubeflow 1.9 (track 1.8) on.
// Only the webhooks simulated in katib-webhooks.ts, kserve-webhooks.ts, kserve-model-webhooks.ts and
// training-webhooks.ts are configured: a configured webhook that nothing answers would refuse everything it matches.
// Each configuration is written as one object per template document, with only the webhooks simulated in it. Katib's Pod mutator is configured (every
// Pod CREATE in a namespace labelled katib.kubeflow.org/metrics-collector-injection=enabled, i.e. every profile
// namespace: while katib-controller is not Ready no Pod can be made there, restore movers included); KServe's Pod
// mutator (predictor Pods only, by its objectSelector) is not.
// In a fresh cluster the charms' Pods start after the configurations exist: with `ready: false` each Pod is there but
// not Ready, so every call fails as kube-apiserver reports it (webhooks.ts) until the test marks the Pod Ready, the
// condition the kubelet sets once the readiness probe passes (kubernetes/kubernetes pkg/kubelet/status/status_manager.go).
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Cluster } from '../cluster.ts';
import { AdmissionWebhooks, type WebhookHandler } from '../webhooks.ts';
import { defaultExperiment, mutatePod, validateExperiment } from './katib-webhooks.ts';
import type { LabelSelector } from '../admission.ts';
import { defaultInferenceService, inferenceServiceValidator } from './kserve-webhooks.ts';
import { servingRuntimeValidator, validateInferenceGraph, validateTrainedModel } from './kserve-model-webhooks.ts';
import { trainingJobKinds, trainingJobValidator } from './training-webhooks.ts';
import type { Release } from './releases.ts';

export type WebhookOperator = 'katib-controller' | 'kserve-controller' | 'training-operator';

export interface KubeflowWebhookOptions {
  /** whose webhooks and sentences (default 1.10) */
  release?: Release;
  /** whether the operators' Pods start Ready (default true); false: a fresh cluster whose charms are still starting */
  ready?: boolean;
}

export interface KubeflowWebhooks {
  operators: WebhookOperator[];
  /** sets the operator Pod's Ready condition, as the kubelet does when its readiness probe passes or fails */
  setReady(operator: WebhookOperator, ready: boolean): void;
  stop(): void;
}

const NAMESPACE = 'kubeflow';
const PODS = { group: '', resource: 'pods' };
const SERVICES = { group: '', resource: 'services' };
const MUTATING = { group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' };
const VALIDATING = { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' };

interface Served {
  path: string; handler: WebhookHandler; webhook: string; kind: 'mutating' | 'validating'; configuration: string; group: string; version: string; resource: string;
  failurePolicy?: 'Fail'; operations?: string[]; namespaceSelector?: LabelSelector; objectSelector?: LabelSelector; matchConditions?: Array<{ name: string; expression: string }>;
}
interface OperatorSpec { service: string; targetPort: number; image: string; podIp: string; served: Served[] }

function operatorSpecs(release: Release): Record<WebhookOperator, OperatorSpec | undefined> {
  const experiments = { group: 'kubeflow.org', version: 'v1beta1', resource: 'experiments' };
  const isvcs = { group: 'serving.kserve.io', version: 'v1beta1', resource: 'inferenceservices' };
  const v1alpha1 = (resource: string) => ({ group: 'serving.kserve.io', version: 'v1alpha1', resource });
  return {
    'katib-controller': {
      service: 'katib-controller', targetPort: 443, image: 'docker.io/charmedkubeflow/katib-controller:v0.18.0', podIp: '10.1.200.11',
      served: [
        // no failurePolicy in the template: admissionregistration/v1 defaults it to Fail
        { path: '/mutate-experiment', handler: defaultExperiment, webhook: 'defaulter.experiment.katib.kubeflow.org', kind: 'mutating', configuration: 'katib.kubeflow.org', ...experiments },
        { path: '/validate-experiment', handler: validateExperiment, webhook: 'validator.experiment.katib.kubeflow.org', kind: 'validating', configuration: 'katib.kubeflow.org', ...experiments },
        {
          path: '/mutate-pod', handler: mutatePod, webhook: 'mutator.pod.katib.kubeflow.org', kind: 'mutating', configuration: 'katib.kubeflow.org',
          group: '', version: 'v1', resource: 'pods', operations: ['CREATE'],
          namespaceSelector: { matchLabels: { 'katib.kubeflow.org/metrics-collector-injection': 'enabled' } },
          // tracks 0.16 and 0.17 (CKF 1.8, 1.9) select by a Pod label; 0.18 on leave out the controller's own Pods by CEL
          ...(release === '1.8' || release === '1.9'
            ? { objectSelector: { matchExpressions: [{ key: 'katib.kubeflow.org/metrics-collector-injection', operator: 'NotIn', values: ['disabled'] }] } }
            : { matchConditions: [{ name: 'exclude-katib-controller', expression: 'request.userInfo.username != "system:serviceaccount:kubeflow:katib-controller"' }] }),
        },
      ],
    },
    'kserve-controller': {
      service: 'kserve-webhook-server-service', targetPort: 9443, image: 'docker.io/charmedkubeflow/kserve-controller:0.14.1', podIp: '10.1.200.12',
      served: [
        { path: '/mutate-serving-kserve-io-v1beta1-inferenceservice', handler: defaultInferenceService, webhook: 'inferenceservice.kserve-webhook-server.defaulter', kind: 'mutating', configuration: 'inferenceservice.serving.kserve.io', failurePolicy: 'Fail', ...isvcs },
        { path: '/validate-serving-kserve-io-v1beta1-inferenceservice', handler: inferenceServiceValidator(release), webhook: 'inferenceservice.kserve-webhook-server.validator', kind: 'validating', configuration: 'inferenceservice.serving.kserve.io', failurePolicy: 'Fail', ...isvcs },
        { path: '/validate-serving-kserve-io-v1alpha1-inferencegraph', handler: validateInferenceGraph, webhook: 'inferencegraph.kserve-webhook-server.validator', kind: 'validating', configuration: 'inferencegraph.serving.kserve.io', failurePolicy: 'Fail', ...v1alpha1('inferencegraphs') },
        { path: '/validate-serving-kserve-io-v1alpha1-trainedmodel', handler: validateTrainedModel, webhook: 'trainedmodel.kserve-webhook-server.validator', kind: 'validating', configuration: 'trainedmodel.serving.kserve.io', failurePolicy: 'Fail', ...v1alpha1('trainedmodels') },
        // the runtimes' validators from track 0.14 (Charmed Kubeflow 1.10) on
        ...(release === '1.8' || release === '1.9' ? [] : [
          { path: '/validate-serving-kserve-io-v1alpha1-servingruntime', handler: servingRuntimeValidator(false), webhook: 'servingruntime.kserve-webhook-server.validator', kind: 'validating' as const, configuration: 'servingruntime.serving.kserve.io', failurePolicy: 'Fail' as const, ...v1alpha1('servingruntimes') },
          { path: '/validate-serving-kserve-io-v1alpha1-clusterservingruntime', handler: servingRuntimeValidator(true), webhook: 'clusterservingruntime.kserve-webhook-server.validator', kind: 'validating' as const, configuration: 'clusterservingruntime.serving.kserve.io', failurePolicy: 'Fail' as const, ...v1alpha1('clusterservingruntimes') },
        ]),
      ],
    },
    'training-operator': release === '1.8' ? undefined : {
      service: 'training-operator-workload', targetPort: 9443, image: 'docker.io/kubeflow/training-operator:v1-855e096', podIp: '10.1.200.13',
      served: trainingJobKinds(release).map((kind) => ({
        path: `/validate-kubeflow-org-v1-${kind.short}`, handler: trainingJobValidator(release, kind), webhook: `validator.${kind.short}.training-operator.kubeflow.org`,
        kind: 'validating' as const, configuration: 'validator.training-operator.kubeflow.org', failurePolicy: 'Fail' as const, group: 'kubeflow.org', version: 'v1', resource: kind.resource,
      })),
    },
  };
}

export function installKubeflowWebhooks(cluster: Cluster, options: KubeflowWebhookOptions = {}): KubeflowWebhooks {
  const release = options.release ?? '1.10';
  const webhooks = (cluster.webhooks ??= new AdmissionWebhooks(cluster));
  const specs = operatorSpecs(release);
  const operators = (Object.keys(specs) as WebhookOperator[]).filter((o) => specs[o] !== undefined);
  const stops: Array<() => void> = [];
  const configurations = new Map<string, KubeObject>();
  for (const operator of operators) {
    const spec = specs[operator]!;
    const labels = { 'app.kubernetes.io/name': operator };
    cluster.create(SERVICES, {
      apiVersion: 'v1', kind: 'Service', metadata: { name: spec.service, namespace: NAMESPACE, labels },
      spec: { selector: labels, ports: [{ name: 'webhook', port: 443, targetPort: spec.targetPort, protocol: 'TCP' }] },
    });
    cluster.create(PODS, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: `${operator}-0`, namespace: NAMESPACE, labels },
      spec: { containers: [{ name: operator, image: spec.image, ports: [{ containerPort: spec.targetPort, protocol: 'TCP' }] }] },
    });
    for (const served of spec.served) {
      stops.push(webhooks.serve(NAMESPACE, spec.service, served.path, served.handler));
      const key = `${served.kind}/${served.configuration}`;
      const configuration = configurations.get(key) ?? {
        apiVersion: 'admissionregistration.k8s.io/v1', kind: served.kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
        metadata: { name: served.configuration }, webhooks: [],
      };
      (configuration.webhooks as unknown[]).push({
        name: served.webhook, sideEffects: 'None', admissionReviewVersions: ['v1'],
        clientConfig: { service: { name: spec.service, namespace: NAMESPACE, path: served.path } },
        rules: [{ apiGroups: [served.group], apiVersions: [served.version], operations: served.operations ?? ['CREATE', 'UPDATE'], resources: [served.resource] }],
        ...(served.failurePolicy ? { failurePolicy: served.failurePolicy } : {}),
        ...(served.namespaceSelector ? { namespaceSelector: served.namespaceSelector } : {}),
        ...(served.objectSelector ? { objectSelector: served.objectSelector } : {}),
        ...(served.matchConditions ? { matchConditions: served.matchConditions } : {}),
      });
      configurations.set(key, configuration);
    }
  }
  for (const [key, configuration] of configurations) cluster.create(key.startsWith('mutating/') ? MUTATING : VALIDATING, configuration);
  const setReady = (operator: WebhookOperator, ready: boolean) => {
    const spec = specs[operator];
    if (!spec) throw new Error(`release ${release} runs no ${operator} webhook`);
    const pod = cluster.get(PODS, `${operator}-0`, NAMESPACE)!;
    const status = ready ? 'True' : 'False';
    cluster.updateStatus(PODS, {
      ...pod,
      status: {
        ...(pod.status as object | undefined), phase: 'Running', podIP: spec.podIp, podIPs: [{ ip: spec.podIp }],
        conditions: [{ type: 'Initialized', status: 'True' }, { type: 'ContainersReady', status }, { type: 'Ready', status }, { type: 'PodScheduled', status: 'True' }],
      },
    });
  };
  for (const operator of operators) setReady(operator, options.ready ?? true);
  return { operators, setReady, stop: () => { for (const stop of stops) stop(); } };
}
