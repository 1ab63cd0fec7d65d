// The training operator's job validators, behind <app>-workload as canonical/training-operator ships them
// (src/templates/validatingwebhookconfiguration.yaml.j2: validator.<kind>.training-operator.kubeflow.org on
// /validate-kubeflow-org-v1-<kind>, CREATE and UPDATE, failurePolicy Fail). Track 1.7 (Charmed Kubeflow 1.8) ships
// none; track 1.8 (1.9) runs kubeflow/training-operator v1.8.0 with PyTorchJob, TFJob, XGBoostJob, PaddleJob and MXJob
// validators; track 1.9 (1.10 and 1.11) runs v1.9.x with JAXJob instead of MXJob. After pkg/webhooks/<kind>/*_webhook.go
// of each version: the name is a DNS-1035 label; each replica type is one the kind knows, has containers with images
// and one with the kind's default container name (pkg/apis/kubeflow.org/v1/*_types.go); PyTorchJob's and XGBoostJob's
// Master has exactly one replica, XGBoostJob needs a Master, TFJob at most one Chief or Master; v1.9 adds the run
// policy's managedBy values (pkg/common/util/webhooks.go), PyTorchJob's elastic policy needing a Worker and its other
// replica types at least one replica. The error list is returned as a plain error, which controller-runtime answers
// with Denied (403). v1.8.0's MXJob validator only warns that MXJob is deprecated and admits it (Warning headers are not
// simulated). v1.9.0's ValidateUpdate hands the new object in as the old one too, so managedBy's immutability never
// fires; it is not simulated either.
import type { Release } from './releases.ts';
import type { WebhookAnswer, WebhookRequest } from '../webhooks.ts';
import { aggregate, forbidden, invalid, notSupported, required, type FieldError } from './field-errors.ts';

interface ReplicaSpec { replicas?: number; template?: { spec?: { containers?: Array<{ name?: string; image?: string }> } } }
interface JobSpec { runPolicy?: { managedBy?: string }; elasticPolicy?: { nProcPerNode?: unknown }; nprocPerNode?: unknown; [replicaSpecs: string]: unknown }

export interface TrainingJobKind {
  resource: string;
  /** the webhook's name part and path suffix */
  short: string;
  /** spec's field of replica specs */
  specsField: string;
  defaultContainer: string;
  /** the replica types it accepts; undefined: any (TFJob) */
  types?: readonly string[];
  /** how the missing-container sentence prints the name (PaddleJob quotes it with %q) */
  quoteContainer?: boolean;
}

const KINDS: Record<string, TrainingJobKind> = {
  pytorchjob: { resource: 'pytorchjobs', short: 'pytorchjob', specsField: 'pytorchReplicaSpecs', defaultContainer: 'pytorch', types: ['Master', 'Worker'] },
  tfjob: { resource: 'tfjobs', short: 'tfjob', specsField: 'tfReplicaSpecs', defaultContainer: 'tensorflow' },
  xgboostjob: { resource: 'xgboostjobs', short: 'xgboostjob', specsField: 'xgbReplicaSpecs', defaultContainer: 'xgboost', types: ['Master', 'Worker'] },
  paddlejob: { resource: 'paddlejobs', short: 'paddlejob', specsField: 'paddleReplicaSpecs', defaultContainer: 'paddle', types: ['Master', 'Worker'], quoteContainer: true },
  jaxjob: { resource: 'jaxjobs', short: 'jaxjob', specsField: 'jaxReplicaSpecs', defaultContainer: 'jax', types: ['Worker'] },
  mxjob: { resource: 'mxjobs', short: 'mxjob', specsField: 'mxReplicaSpecs', defaultContainer: 'mxnet' },
};

/** the kinds whose validator the training operator of `release` ships */
export function trainingJobKinds(release: Release): TrainingJobKind[] {
  if (release === '1.8') return [];
  const names = release === '1.9' ? ['mxjob', 'paddlejob', 'pytorchjob', 'tfjob', 'xgboostjob'] : ['jaxjob', 'paddlejob', 'pytorchjob', 'tfjob', 'xgboostjob'];
  return names.map((name) => KINDS[name]!);
}

/** k8s.io/apimachinery pkg/util/validation IsDNS1035Label, with RegexError's wording */
function dns1035Problems(name: string): string[] {
  const problems: string[] = [];
  if (name.length > 63) problems.push('must be no more than 63 characters');
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name))
    problems.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  return problems;
}

export function trainingJobValidator(release: Release, kind: TrainingJobKind): (request: WebhookRequest) => WebhookAnswer {
  const v19 = release === '1.10' || release === '1.11';
  return (request) => {
    if (kind.short === 'mxjob') return { allowed: true };
    const errors: FieldError[] = [];
    const name = request.object.metadata.name ?? '';
    const nameProblems = dns1035Problems(name);
    if (nameProblems.length) errors.push(invalid('metadata.name', name, `should match: ${nameProblems.join(',')}`));
    const spec = (request.object.spec ?? {}) as JobSpec;
    const managedBy = spec.runPolicy?.managedBy;
    if (v19 && managedBy !== undefined && managedBy !== 'kueue.x-k8s.io/multikueue' && managedBy !== 'kubeflow.org/training-operator')
      errors.push(notSupported('spec.runPolicy.managedBy', managedBy, ['kueue.x-k8s.io/multikueue', 'kubeflow.org/training-operator']));
    const specsPath = `spec.${kind.specsField}`;
    const replicaSpecs = spec[kind.specsField] as Record<string, ReplicaSpec | null> | undefined;
    if (kind.short === 'pytorchjob' && spec.elasticPolicy) {
      if (v19 && !replicaSpecs?.Worker) errors.push(required(`${specsPath}[Worker]`, 'must be configured if elastic policy is used'));
      if (spec.elasticPolicy.nProcPerNode !== undefined && spec.nprocPerNode !== undefined)
        errors.push(forbidden('spec.elasticPolicy.nProcPerNode', 'must not be used with spec.nprocPerNode'));
    }
    if (!replicaSpecs) errors.push(required(specsPath, 'must be required'));
    let chiefOrMaster = 0;
    for (const [type, replicaSpec] of Object.entries(replicaSpecs ?? {})) {
      const role = `${specsPath}[${type}]`;
      const containersPath = `${role}.template.spec.containers`;
      if (kind.types && !kind.types.includes(type)) errors.push(notSupported(role, type, kind.types));
      const containers = replicaSpec?.template?.spec?.containers ?? [];
      if (containers.length === 0) errors.push(required(containersPath, 'must be specified'));
      containers.forEach((container, i) => { if (!container.image) errors.push(required(`${containersPath}[${i}].image`, 'must be required')); });
      if (!containers.some((c) => c.name === kind.defaultContainer)) {
        const container = kind.quoteContainer ? JSON.stringify(kind.defaultContainer) : kind.defaultContainer;
        errors.push(required(containersPath, `must have at least one container with name ${container}`));
      }
      if (type === 'Chief' || type === 'Master') chiefOrMaster++;
      if ((kind.short === 'pytorchjob' || kind.short === 'xgboostjob') && type === 'Master' && replicaSpec?.replicas !== 1)
        errors.push(forbidden(`${role}.replicas`, 'must be 1'));
      else if (v19 && kind.short === 'pytorchjob' && replicaSpec?.replicas !== undefined && replicaSpec.replicas < 1)
        errors.push(forbidden(`${role}.replicas`, 'must be at least 1'));
    }
    if (kind.short === 'tfjob' && chiefOrMaster > 1) errors.push(forbidden(specsPath, 'must not have more than 1 Chief or Master role'));
    if (kind.short === 'xgboostjob' && !replicaSpecs?.Master) errors.push(required(`${specsPath}[Master]`, 'must be present'));
    const message = aggregate(errors);
    return message ? { allowed: false, code: 403, reason: 'Forbidden', message } : { allowed: true };
  };
}
