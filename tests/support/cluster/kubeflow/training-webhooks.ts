// The training operator's PyTorchJob validator, behind <app>-workload as canonical/training-operator ships it
// (src/templates/validatingwebhookconfiguration.yaml.j2: validator.pytorchjob.training-operator.kubeflow.org on
// /validate-kubeflow-org-v1-pytorchjob, CREATE and UPDATE, failurePolicy Fail; tracks 1.8 and 1.9, i.e. Charmed Kubeflow
// 1.9–1.11; track 1.7 of 1.8 ships no webhook), after kubeflow/training-operator v1.8.0
// pkg/webhooks/pytorch/pytorchjob_webhook.go: the name is a DNS-1035 label, the replica types are Master and Worker,
// each has containers with images and one named "pytorch", and Master has exactly one replica. The error list is
// returned as a plain error, which controller-runtime answers with Denied (403). v1.9.0's run-policy checks and the
// TFJob, XGBoostJob, PaddleJob, JAXJob and MXJob validators the charm also ships are not simulated.
import type { WebhookAnswer, WebhookRequest } from '../webhooks.ts';
import { aggregate, forbidden, invalid, notSupported, required, type FieldError } from './field-errors.ts';

interface ReplicaSpec { replicas?: number; template?: { spec?: { containers?: Array<{ name?: string; image?: string }> } } }

/** k8s.io/apimachinery pkg/util/validation IsDNS1035Label, with RegexError's wording */
function dns1035Problems(name: string): string[] {
  const problems: string[] = [];
  if (name.length > 63) problems.push('must be no more than 63 characters');
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name))
    problems.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  return problems;
}

export function validatePyTorchJob(request: WebhookRequest): WebhookAnswer {
  const errors: FieldError[] = [];
  const name = request.object.metadata.name ?? '';
  const nameProblems = dns1035Problems(name);
  if (nameProblems.length) errors.push(invalid('metadata.name', name, `should match: ${nameProblems.join(',')}`));
  const spec = (request.object.spec ?? {}) as { pytorchReplicaSpecs?: Record<string, ReplicaSpec | null>; nprocPerNode?: unknown; elasticPolicy?: { nProcPerNode?: unknown } };
  if (spec.elasticPolicy?.nProcPerNode !== undefined && spec.nprocPerNode !== undefined)
    errors.push(forbidden('spec.elasticPolicy.nProcPerNode', 'must not be used with spec.nprocPerNode'));
  const replicaSpecs = spec.pytorchReplicaSpecs;
  if (!replicaSpecs) errors.push(required('spec.pytorchReplicaSpecs', 'must be required'));
  for (const [type, replicaSpec] of Object.entries(replicaSpecs ?? {})) {
    const role = `spec.pytorchReplicaSpecs[${type}]`;
    const containersPath = `${role}.template.spec.containers`;
    if (type !== 'Master' && type !== 'Worker') errors.push(notSupported(role, type, ['Master', 'Worker']));
    const containers = replicaSpec?.template?.spec?.containers ?? [];
    if (containers.length === 0) errors.push(required(containersPath, 'must be specified'));
    containers.forEach((container, i) => { if (!container.image) errors.push(required(`${containersPath}[${i}].image`, 'must be required')); });
    if (!containers.some((c) => c.name === 'pytorch')) errors.push(required(containersPath, 'must have at least one container with name pytorch'));
    if (type === 'Master' && replicaSpec?.replicas !== 1) errors.push(forbidden(`${role}.replicas`, 'must be 1'));
  }
  const message = aggregate(errors);
  return message ? { allowed: false, code: 403, reason: 'Forbidden', message } : { allowed: true };
}
