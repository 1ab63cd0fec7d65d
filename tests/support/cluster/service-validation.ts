// The parts of ValidateService a restored Service can fail, checked on create and update after defaulting
// (kubernetes/kubernetes pkg/apis/core/validation/validation.go: ValidateService, validateServicePort;
// staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go: IsValidPortNum's InclusiveRangeError):
// a type of the four, ports unless headless or ExternalName, an externalName for ExternalName, a name on every port
// of a multi-port Service and no name twice, port numbers 1-65535. The IP fields are ip-families.ts' and services.ts'.
import type { FieldError } from './errors.ts';

interface Port { name?: string; port?: number }
interface Spec { type?: string; clusterIP?: string; externalName?: string; ports?: Port[] }

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

export function serviceSpecProblems(spec: Spec): FieldError[] {
  const errors: FieldError[] = [];
  const headless = spec.clusterIP === 'None';
  const ports = spec.ports ?? [];
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') errors.push({ field: 'spec.ports', type: 'FieldValueRequired', text: 'Required value' });
  if (spec.type === 'ExternalName' && !spec.externalName) errors.push({ field: 'spec.externalName', type: 'FieldValueRequired', text: 'Required value' });
  const names = new Set<string>();
  for (const [i, port] of ports.entries()) {
    if (ports.length > 1 && !port.name) errors.push({ field: `spec.ports[${i}].name`, type: 'FieldValueRequired', text: 'Required value' });
    else if (port.name) {
      if (names.has(port.name)) errors.push({ field: `spec.ports[${i}].name`, type: 'FieldValueDuplicate', text: `Duplicate value: ${JSON.stringify(port.name)}` });
      names.add(port.name);
    }
    const number = port.port ?? 0;
    if (!(number >= 1 && number <= 65535)) errors.push({ field: `spec.ports[${i}].port`, type: 'FieldValueInvalid', text: `Invalid value: ${number}: must be between 1 and 65535, inclusive` });
  }
  if (spec.type !== undefined && !TYPES.includes(spec.type))
    errors.push({ field: 'spec.type', type: 'FieldValueNotSupported', text: `Unsupported value: ${JSON.stringify(spec.type)}: supported values: ${TYPES.map((t) => JSON.stringify(t)).join(', ')}` });
  return errors;
}
