// Pure builders of the guard: ValidatingAdmissionPolicies and their Bindings that make the API server itself refuse
// the deletions that destroy Kubeflow user data (a deleted CRD takes every object of its kind with it).
import type { KubeObject } from '../kube/types.ts';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'kubeflow-upgrader';
export const ALLOW_DELETE_ANNOTATION = 'kubeflow-upgrader/allow-delete';
export const GUARD_NAME_PREFIX = 'kubeflow-upgrader';
export const CRD_GUARD_NAME = `${GUARD_NAME_PREFIX}-crd-guard`;
export const PROFILE_GUARD_NAME = `${GUARD_NAME_PREFIX}-profile-guard`;
export const ADMISSION_API_VERSION = 'admissionregistration.k8s.io/v1';

export const DEFAULT_PROTECTED_CRD_GROUPS = ['kubeflow.org', 'tensorboard.kubeflow.org', 'serving.kserve.io'];

export interface GuardOptions {
  /** `protect-crds`: guard CRDs of the protected groups */
  protectCrds: boolean;
  /** `protected-crd-groups`, already split */
  protectedCrdGroups: string[];
  /** `protect-profiles`: also guard every Profile */
  protectProfiles: boolean;
}

/** One object the guard consists of, with the plural resource that serves it. */
export interface GuardObject {
  resource: 'validatingadmissionpolicies' | 'validatingadmissionpolicybindings';
  object: KubeObject;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Splits the `protected-crd-groups` config value. Throws one sentence naming the first bad entry, so that a typo
 * never silently leaves a group unguarded.
 */
export function parseProtectedGroups(value: string): string[] {
  const groups = value
    .split(',')
    .map((group) => group.trim())
    .filter((group) => group !== '');
  for (const group of groups) {
    if (group.length > 253 || !DNS_SUBDOMAIN.test(group)) {
      throw new Error(`protected-crd-groups entry "${group}" is not an API group name (like kubeflow.org).`);
    }
  }
  return [...new Set(groups)].sort();
}

/** CEL string literal; group names are validated DNS subdomains, but quoting stays correct for anything. */
function celString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** True when the object being deleted carries the allow-delete annotation set to "true". */
export const ALLOWED_ON_PURPOSE =
  `has(oldObject.metadata.annotations) && ` +
  `${celString(ALLOW_DELETE_ANNOTATION)} in oldObject.metadata.annotations && ` +
  `oldObject.metadata.annotations[${celString(ALLOW_DELETE_ANNOTATION)}] == 'true'`;

/** The CEL validation of the CRD guard: true (allowed) unless a protected group's CRD is deleted without the annotation. */
export function crdGuardExpression(protectedGroups: string[]): string {
  const list = `[${protectedGroups.map(celString).join(', ')}]`;
  return `!(oldObject.spec.group in ${list}) || (${ALLOWED_ON_PURPOSE})`;
}

export const PROFILE_GUARD_EXPRESSION = ALLOWED_ON_PURPOSE;

const CRD_REFUSAL =
  'kubeflow-upgrader refused to delete this CustomResourceDefinition: deleting it deletes every object of its kind ' +
  '(Kubeflow user data). To delete it on purpose, run: kubectl annotate crd <name> ' +
  `${ALLOW_DELETE_ANNOTATION}=true`;

const CRD_REFUSAL_EXPRESSION =
  `'kubeflow-upgrader refused to delete CustomResourceDefinition ' + oldObject.metadata.name + ` +
  `': deleting it deletes every object of its kind (Kubeflow user data). To delete it on purpose, run: ` +
  `kubectl annotate crd ' + oldObject.metadata.name + ' ${ALLOW_DELETE_ANNOTATION}=true'`;

const PROFILE_REFUSAL =
  'kubeflow-upgrader refused to delete this Profile: deleting it deletes its namespace and everything in it. ' +
  `To delete it on purpose, run: kubectl annotate profile <name> ${ALLOW_DELETE_ANNOTATION}=true`;

const PROFILE_REFUSAL_EXPRESSION =
  `'kubeflow-upgrader refused to delete Profile ' + oldObject.metadata.name + ` +
  `': deleting it deletes its namespace and everything in it. To delete it on purpose, run: ` +
  `kubectl annotate profile ' + oldObject.metadata.name + ' ${ALLOW_DELETE_ANNOTATION}=true'`;

function managedMetadata(name: string): KubeObject['metadata'] {
  return { name, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } };
}

function deleteOnlyPolicy(
  name: string,
  rule: { apiGroups: string[]; resources: string[] },
  validation: { expression: string; message: string; messageExpression: string },
): KubeObject {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: managedMetadata(name),
    spec: {
      // Fail closed: if the API server cannot evaluate the rule, a deletion is refused rather than let through.
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: rule.apiGroups, apiVersions: ['*'], operations: ['DELETE'], resources: rule.resources }],
      },
      validations: [{ ...validation, reason: 'Forbidden' }],
    },
  };
}

function denyBinding(name: string): KubeObject {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: managedMetadata(name),
    spec: { policyName: name, validationActions: ['Deny'] },
  };
}

export function crdGuardPolicy(protectedGroups: string[]): KubeObject {
  return deleteOnlyPolicy(
    CRD_GUARD_NAME,
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'] },
    { expression: crdGuardExpression(protectedGroups), message: CRD_REFUSAL, messageExpression: CRD_REFUSAL_EXPRESSION },
  );
}

export function profileGuardPolicy(): KubeObject {
  return deleteOnlyPolicy(
    PROFILE_GUARD_NAME,
    { apiGroups: ['kubeflow.org'], resources: ['profiles'] },
    { expression: PROFILE_GUARD_EXPRESSION, message: PROFILE_REFUSAL, messageExpression: PROFILE_REFUSAL_EXPRESSION },
  );
}

/** Every guard name the charm owns, whether or not the current config wants it. */
export const ALL_GUARD_NAMES = [CRD_GUARD_NAME, PROFILE_GUARD_NAME];

/**
 * The objects the guard should consist of under these options, policies before their bindings (a binding to a
 * missing policy is inert, but creating in this order never leaves a window with a dangling binding).
 */
export function desiredGuardObjects(options: GuardOptions): GuardObject[] {
  const objects: GuardObject[] = [];
  if (options.protectCrds && options.protectedCrdGroups.length > 0) {
    objects.push({ resource: 'validatingadmissionpolicies', object: crdGuardPolicy(options.protectedCrdGroups) });
    objects.push({ resource: 'validatingadmissionpolicybindings', object: denyBinding(CRD_GUARD_NAME) });
  }
  if (options.protectProfiles) {
    objects.push({ resource: 'validatingadmissionpolicies', object: profileGuardPolicy() });
    objects.push({ resource: 'validatingadmissionpolicybindings', object: denyBinding(PROFILE_GUARD_NAME) });
  }
  return objects;
}

/** GuardOptions from the charm's config values (`protect-crds`, `protected-crd-groups`, `protect-profiles`). */
export function guardOptionsFromConfig(config: { protectCrds: boolean; protectedCrdGroups: string; protectProfiles: boolean }): GuardOptions {
  return {
    protectCrds: config.protectCrds,
    protectedCrdGroups: parseProtectedGroups(config.protectedCrdGroups),
    protectProfiles: config.protectProfiles,
  };
}
