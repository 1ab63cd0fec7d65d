// Type-specific validation of the built-in kinds a backup archive holds, on create and update, as kube-apiserver's
// strategies call it (each Validate/ValidateUpdate runs the kind's Validate<Kind>), in the order upstream appends the
// errors. The field errors are worded as staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go words them:
// `Required value`, `Invalid value: <value>: <detail>` (a string quoted with %q, an int bare, anything else Go's %#v)
// and `Unsupported value: <value>: supported values: "a", "b"`.
// - CronJobs: kubernetes/kubernetes pkg/apis/batch/validation/validation.go (ValidateCronJobCreate → ValidateCronJobSpec:
//   schedule required and parsed by robfig/cron's ParseStandard, see cron-schedule.ts; no TZ in the schedule;
//   startingDeadlineSeconds and the history limits not negative; concurrencyPolicy Allow|Forbid|Replace, defaulted to
//   Allow by pkg/apis/batch/v1/defaults.go; ValidateJobTemplateSpec: the Job spec checks of jobs.ts at
//   spec.jobTemplate.spec, and no selector or manualSelector, since the Job's selector is generated).
// - Deployments: pkg/apis/apps/validation/validation.go (ValidateDeploymentSpec: replicas not negative, selector
//   required and not empty, ValidatePodTemplateSpecForReplicaSet: the selector selects the template's labels and the
//   restartPolicy is Always).
// - StatefulSets: the same file (ValidateStatefulSetSpec: podManagementPolicy OrderedReady|Parallel, replicas not
//   negative, selector required and not empty, ValidatePodTemplateSpecForStatefulSet, restartPolicy Always); what an
//   update may not change is apps.ts.
// - PodDisruptionBudgets: pkg/apis/policy/validation/validation.go (ValidatePodDisruptionBudgetSpec: minAvailable and
//   maxUnavailable not both, each a non-negative int or a percent not above 100%, ValidatePositiveIntOrPercent and
//   IsNotMoreThan100Percent in pkg/apis/apps/validation; unhealthyPodEvictionPolicy IfHealthyBudget|AlwaysAllow).
//   The "both set" error prints the spec with Go's %#v, whose pointers are heap addresses: printed here as 0xc000000000.
// - NetworkPolicies: pkg/apis/networking/validation/validation.go (ValidateNetworkPolicySpec: each port's protocol
//   TCP|UDP|SCTP, a numeric port 1-65535 or a port name (IsValidPortName), endPort only after a numeric port and not
//   below it; each peer names exactly something, an ipBlock alone and with a cidr; policyTypes Ingress|Egress, two at
//   most).
// - PersistentVolumeClaims: pkg/apis/core/validation/validation.go (ValidatePersistentVolumeClaimSpec: accessModes
//   required and each supported, ReadWriteOncePod alone; resources.requests.storage required, reported at
//   `spec.resources[storage]`, and above zero; volumeMode Block|Filesystem); what an update may not change is
//   immutable.ts.
// - Label selectors of these kinds: staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go
//   (ValidateLabelSelector: matchLabels' keys qualified names and values label values; each requirement's operator
//   In|NotIn with values, Exists|DoesNotExist without, its key and values), at each kind's place in its list.
// - Finalizers, every kind: staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go (ValidateFinalizers:
//   each a qualified name, util/validation/validation.go IsQualifiedName; orphan and foregroundDeletion not both) and,
//   for the built-in kinds, pkg/apis/core/validation/validation.go (ValidateObjectMeta → validateKubeFinalizerName: a
//   name without a '/' is one of the standard finalizers kubernetes, orphan, foregroundDeletion; pkg/apis/core/helper
//   IsStandardFinalizerName). Custom resources get only the first check (apiextensions-apiserver's strategy).
import type { KubeObject } from '../../../src/kube/types.ts';
import type { FieldError } from './errors.ts';
import { cronParseError } from './cron-schedule.ts';
import { goMap, goSelector, jobSpecFieldProblems, nonNegative, selects, type Selector } from './jobs.ts';
import { nameProblem } from './names.ts';
import { parseQuantity } from './quantity.ts';

type Obj = Record<string, unknown>;
interface PodTemplate { metadata?: { labels?: Record<string, string> }; spec?: { restartPolicy?: string; activeDeadlineSeconds?: number } }

const invalid = (field: string, shown: string, detail: string): FieldError => ({ field, type: 'FieldValueInvalid', text: `Invalid value: ${shown}: ${detail}` });
const notSupported = (field: string, shown: string, values: string[]): FieldError =>
  ({ field, type: 'FieldValueNotSupported', text: `Unsupported value: ${shown}: supported values: ${values.map((v) => JSON.stringify(v)).join(', ')}` });
const requiredValue = (field: string, detail = ''): FieldError => ({ field, type: 'FieldValueRequired', text: detail ? `Required value: ${detail}` : 'Required value' });
const forbidden = (field: string, detail: string): FieldError => ({ field, type: 'FieldValueForbidden', text: `Forbidden: ${detail}` });
/** how field/errors.go prints a value: %q for a string, %v for a number or bool */
const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));

// ---- finalizers ----------------------------------------------------------------------------------------------

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_REGEX_ERROR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** IsQualifiedName (staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go) */
export function qualifiedNameProblems(value: string): string[] {
  const parts = value.split('/');
  const errors: string[] = [];
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else {
      const p = nameProblem(prefix, 'subdomain');
      if (p) errors.push(`prefix part ${p}`);
    }
  } else {
    return [`a qualified name ${QUALIFIED_NAME_REGEX_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name)) errors.push(`name part ${QUALIFIED_NAME_REGEX_ERROR}`);
  return errors;
}

/**
 * `kubeKind`: validated by pkg/apis/core/validation's ValidateObjectMeta (the kinds of kube-apiserver's own groups),
 * not the generic one the apiextensions and aggregator servers use for CRDs and APIServices
 */
export function finalizerProblems(finalizers: unknown, kubeKind: boolean): FieldError[] {
  if (!Array.isArray(finalizers)) return [];
  const names = finalizers.filter((f): f is string => typeof f === 'string');
  const errors: FieldError[] = [];
  for (const f of names) for (const msg of qualifiedNameProblems(f)) errors.push(invalid('metadata.finalizers', JSON.stringify(f), msg));
  if (names.includes('orphan') && names.includes('foregroundDeletion'))
    errors.push(invalid('metadata.finalizers', `[]string{${names.map((n) => JSON.stringify(n)).join(', ')}}`, 'finalizer orphan and foregroundDeletion cannot be both set'));
  if (kubeKind) {
    names.forEach((f, i) => {
      if (!f.includes('/') && !STANDARD_FINALIZERS.has(f))
        errors.push(invalid(`metadata.finalizers[${i}]`, JSON.stringify(f), 'name is neither a standard finalizer name nor is it fully qualified'));
    });
  }
  return errors;
}

// ---- label selectors: staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go ----------------

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_VALUE_REGEX_ERROR = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** IsValidLabelValue (util/validation/validation.go): both sentences where both apply */
function labelValueProblems(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(value)) errors.push(LABEL_VALUE_REGEX_ERROR);
  return errors;
}

/**
 * ValidateLabelSelector at `path`: matchLabels' keys and values (Go walks the map in random order; sorted here), then
 * each matchExpressions requirement (operator, values for it, key, values). `allowInvalidValues`: an update whose old
 * selector already held an invalid value (LabelSelectorValidationOptions.AllowInvalidLabelValueInSelector).
 */
export function labelSelectorProblems(selector: Selector | undefined | null, path: string, allowInvalidValues = false): FieldError[] {
  if (!selector) return [];
  const errors: FieldError[] = [];
  for (const key of Object.keys(selector.matchLabels ?? {}).sort()) {
    for (const msg of qualifiedNameProblems(key)) errors.push(invalid(`${path}.matchLabels`, JSON.stringify(key), msg));
    const value = String(selector.matchLabels![key]);
    for (const msg of labelValueProblems(value)) errors.push(invalid(`${path}.matchLabels`, JSON.stringify(value), msg));
  }
  (selector.matchExpressions ?? []).forEach((e, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = e.values ?? [];
    if (e.operator === 'In' || e.operator === 'NotIn') {
      if (values.length === 0) errors.push(requiredValue(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
      if (values.length > 0) errors.push(forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else errors.push(invalid(`${at}.operator`, JSON.stringify(e.operator ?? ''), 'not a valid selector operator'));
    for (const msg of qualifiedNameProblems(e.key ?? '')) errors.push(invalid(`${at}.key`, JSON.stringify(e.key ?? ''), msg));
    if (!allowInvalidValues) values.forEach((v, j) => { for (const msg of labelValueProblems(v)) errors.push(invalid(`${at}.values[${j}]`, JSON.stringify(v), msg)); });
  });
  return errors;
}

const holdsInvalidValue = (s: Selector | undefined | null): boolean =>
  Boolean(s) && (Object.values(s!.matchLabels ?? {}).some((v) => labelValueProblems(String(v)).length > 0) || (s!.matchExpressions ?? []).some((e) => (e.values ?? []).some((v) => labelValueProblems(v).length > 0)));

// ---- apps/v1 -------------------------------------------------------------------------------------------------

/**
 * The selector's checks, then what LabelSelectorAsSelector's failure adds (a selector ValidateLabelSelector refuses
 * does not convert either: `invalid label selector` for a Deployment, no detail for a StatefulSet); `selector` is
 * undefined where there is none to match the template against.
 */
function selectorProblems(spec: Obj, kind: 'deployment' | 'statefulset', old: KubeObject | null): { errors: FieldError[]; selector?: Selector } {
  const selector = spec.selector as Selector | undefined | null;
  if (!selector) return { errors: [requiredValue('spec.selector')] };
  // a Deployment's update may keep invalid values its old selector had; a StatefulSet's never
  const allow = kind === 'deployment' && old !== null && holdsInvalidValue(((old.spec ?? {}) as Obj).selector as Selector | undefined);
  const errors = labelSelectorProblems(selector, 'spec.selector', allow);
  if (Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0)
    errors.push(invalid('spec.selector', goSelector(selector), `empty selector is invalid for ${kind}`));
  if (labelSelectorProblems(selector, 'spec.selector').length > 0) {
    errors.push(kind === 'deployment' ? invalid('spec.selector', goSelector(selector), 'invalid label selector') : { field: 'spec.selector', type: 'FieldValueInvalid', text: `Invalid value: ${goSelector(selector)}` });
    return { errors };
  }
  return { errors, selector };
}

function templateLabelProblems(selector: Selector | undefined, template: PodTemplate | undefined): FieldError[] {
  if (!selector || Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0) return [];
  const labels = template?.metadata?.labels;
  return selects(selector, labels ?? {}) ? [] : [invalid('spec.template.metadata.labels', goMap(labels), '`selector` does not match template `labels`')];
}

function restartAlways(template: PodTemplate | undefined): FieldError[] {
  const policy = template?.spec?.restartPolicy ?? 'Always';
  return policy === 'Always' ? [] : [notSupported('spec.template.spec.restartPolicy', JSON.stringify(policy), ['Always'])];
}

/** ValidateDeploymentSpec */
export function deploymentProblems(obj: KubeObject, old: KubeObject | null = null): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj;
  const template = spec.template as PodTemplate | undefined;
  const errors = nonNegative(spec.replicas, 'spec.replicas');
  const { errors: selectorErrors, selector } = selectorProblems(spec, 'deployment', old);
  errors.push(...selectorErrors, ...templateLabelProblems(selector, template), ...restartAlways(template));
  if (template?.spec?.activeDeadlineSeconds !== undefined)
    errors.push(invalid('spec.template.spec.activeDeadlineSeconds', String(template.spec.activeDeadlineSeconds), 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  return errors;
}

/** ValidateStatefulSetSpec */
export function statefulSetProblems(obj: KubeObject): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj;
  const template = spec.template as PodTemplate | undefined;
  const errors: FieldError[] = [];
  const policy = (spec.podManagementPolicy as string | undefined) ?? 'OrderedReady';
  if (policy !== 'OrderedReady' && policy !== 'Parallel') errors.push(invalid('spec.podManagementPolicy', JSON.stringify(policy), "must be 'OrderedReady' or 'Parallel'"));
  errors.push(...nonNegative(spec.replicas, 'spec.replicas'));
  const { errors: selectorErrors, selector } = selectorProblems(spec, 'statefulset', null);
  errors.push(...selectorErrors, ...templateLabelProblems(selector, template), ...restartAlways(template));
  if (template?.spec?.activeDeadlineSeconds !== undefined)
    errors.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'));
  return errors;
}

// ---- batch/v1 CronJobs ---------------------------------------------------------------------------------------

/** ValidateCronJobCreate / ValidateCronJobUpdate (a TZ the old schedule had already may stay) */
export function cronJobProblems(obj: KubeObject, old: KubeObject | null): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj;
  const errors: FieldError[] = [];
  const schedule = typeof spec.schedule === 'string' ? spec.schedule : '';
  if (schedule === '') errors.push(requiredValue('spec.schedule'));
  else {
    const why = cronParseError(schedule);
    if (why) errors.push(invalid('spec.schedule', JSON.stringify(schedule), why));
    const oldSchedule = ((old?.spec ?? {}) as Obj).schedule;
    const allowTz = typeof oldSchedule === 'string' && oldSchedule.includes('TZ');
    if (allowTz && schedule.includes('TZ') && spec.timeZone !== undefined && spec.timeZone !== null)
      errors.push(invalid('spec.schedule', JSON.stringify(schedule), 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    else if (!allowTz && schedule.includes('TZ'))
      errors.push(invalid('spec.schedule', JSON.stringify(schedule), 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  errors.push(...nonNegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  const concurrency = (spec.concurrencyPolicy as string | undefined) ?? 'Allow';
  if (concurrency === '') errors.push(requiredValue('spec.concurrencyPolicy'));
  else if (!['Allow', 'Forbid', 'Replace'].includes(concurrency)) errors.push(notSupported('spec.concurrencyPolicy', JSON.stringify(concurrency), ['Allow', 'Forbid', 'Replace']));
  const jobSpec = ((spec.jobTemplate as Obj | undefined)?.spec ?? {}) as Obj;
  errors.push(...jobSpecFieldProblems(jobSpec, 'spec.jobTemplate.spec'));
  if (jobSpec.selector !== undefined && jobSpec.selector !== null)
    errors.push(invalid('spec.jobTemplate.spec.selector', goSelector(jobSpec.selector as Selector), '`selector` will be auto-generated'));
  if (jobSpec.manualSelector === true) errors.push(notSupported('spec.jobTemplate.spec.manualSelector', 'true', ['nil', 'false']));
  errors.push(...nonNegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'), ...nonNegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  return errors;
}

// ---- policy/v1 PodDisruptionBudgets --------------------------------------------------------------------------

const PERCENT = /^[0-9]+%$/;

function intOrPercentProblems(value: unknown, field: string): FieldError[] {
  if (value === undefined || value === null) return [];
  const errors: FieldError[] = [];
  if (typeof value === 'string') {
    // an IntOrString is a fmt.Stringer: its text, unquoted
    if (!PERCENT.test(value)) errors.push(invalid(field, value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
  } else errors.push(...nonNegative(value, field));
  // IsNotMoreThan100Percent: the value's String(), a string, so quoted
  if (typeof value === 'string' && value.endsWith('%') && Number.parseInt(value, 10) > 100) errors.push(invalid(field, JSON.stringify(value), 'must not be greater than 100%'));
  return errors;
}

export function pdbProblems(obj: KubeObject): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj;
  const errors: FieldError[] = [];
  const has = (v: unknown) => v !== undefined && v !== null;
  if (has(spec.minAvailable) && has(spec.maxUnavailable)) {
    const pointer = (v: unknown, type: string) => (has(v) ? `(${type})(0xc000000000)` : `(${type})(nil)`);
    const value = `policy.PodDisruptionBudgetSpec{MinAvailable:${pointer(spec.minAvailable, '*intstr.IntOrString')}, Selector:${pointer(spec.selector, '*v1.LabelSelector')}, MaxUnavailable:${pointer(spec.maxUnavailable, '*intstr.IntOrString')}, UnhealthyPodEvictionPolicy:${pointer(spec.unhealthyPodEvictionPolicy, '*policy.UnhealthyPodEvictionPolicyType')}}`;
    errors.push(invalid('spec', value, 'minAvailable and maxUnavailable cannot be both set'));
  }
  errors.push(...intOrPercentProblems(spec.minAvailable, 'spec.minAvailable'), ...intOrPercentProblems(spec.maxUnavailable, 'spec.maxUnavailable'));
  errors.push(...labelSelectorProblems(spec.selector as Selector | undefined, 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (typeof policy === 'string' && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow')
    errors.push(notSupported('spec.unhealthyPodEvictionPolicy', JSON.stringify(policy), ['AlwaysAllow', 'IfHealthyBudget']));
  return errors;
}

// ---- networking.k8s.io/v1 NetworkPolicies --------------------------------------------------------------------

function portNameProblems(port: string): string[] {
  const errors: string[] = [];
  if (port.length > 15) errors.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(port)) errors.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errors.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errors.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errors.push('must not begin or end with a hyphen');
  return errors;
}

const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const validPort = (n: number) => n >= 1 && n <= 65535;

function networkPortProblems(port: Obj, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const protocol = port.protocol;
  if (typeof protocol === 'string' && !['TCP', 'UDP', 'SCTP'].includes(protocol)) errors.push(notSupported(`${path}.protocol`, JSON.stringify(protocol), ['TCP', 'UDP', 'SCTP']));
  const p = port.port;
  const endPort = port.endPort as number | undefined;
  if (typeof p === 'number') {
    if (!validPort(p)) errors.push(invalid(`${path}.port`, String(p), PORT_RANGE));
    if (typeof endPort === 'number') {
      if (endPort < p) errors.push(invalid(`${path}.endPort`, String(p), 'must be greater than or equal to `port`'));
      if (!validPort(endPort)) errors.push(invalid(`${path}.endPort`, String(endPort), PORT_RANGE));
    }
  } else if (typeof p === 'string') {
    if (typeof endPort === 'number') errors.push(invalid(`${path}.endPort`, String(endPort), 'may not be specified when `port` is non-numeric'));
    for (const msg of portNameProblems(p)) errors.push(invalid(`${path}.port`, JSON.stringify(p), msg));
  } else if (typeof endPort === 'number') errors.push(invalid(`${path}.endPort`, String(endPort), 'may not be specified when `port` is not specified'));
  return errors;
}

function networkPeerProblems(peer: Obj, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const present = (k: string) => peer[k] !== undefined && peer[k] !== null;
  const count = ['podSelector', 'namespaceSelector', 'ipBlock'].filter(present).length;
  errors.push(...labelSelectorProblems(peer.podSelector as Selector | undefined, `${path}.podSelector`), ...labelSelectorProblems(peer.namespaceSelector as Selector | undefined, `${path}.namespaceSelector`));
  if (present('ipBlock')) {
    const cidr = (peer.ipBlock as Obj).cidr;
    if (typeof cidr !== 'string' || cidr === '') errors.push(requiredValue(`${path}.ipBlock.cidr`));
  }
  if (count === 0) errors.push(requiredValue(path, 'must specify a peer'));
  else if (count > 1 && present('ipBlock')) errors.push(forbidden(path, 'may not specify both ipBlock and another peer'));
  return errors;
}

export function networkPolicyProblems(obj: KubeObject): FieldError[] {
  const spec = (obj.spec ?? {}) as Obj;
  const errors: FieldError[] = [];
  const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
  errors.push(...labelSelectorProblems(spec.podSelector as Selector | undefined, 'spec.podSelector'));
  list(spec.ingress).forEach((rule, i) => {
    list(rule.ports).forEach((port, j) => errors.push(...networkPortProblems(port, `spec.ingress[${i}].ports[${j}]`)));
    list(rule.from).forEach((peer, j) => errors.push(...networkPeerProblems(peer, `spec.ingress[${i}].from[${j}]`)));
  });
  list(spec.egress).forEach((rule, i) => {
    list(rule.to).forEach((peer, j) => errors.push(...networkPeerProblems(peer, `spec.egress[${i}].to[${j}]`)));
    list(rule.ports).forEach((port, j) => errors.push(...networkPortProblems(port, `spec.egress[${i}].ports[${j}]`)));
  });
  const types = Array.isArray(spec.policyTypes) ? (spec.policyTypes as string[]) : [];
  if (types.length > 2) {
    errors.push(invalid('spec.policyTypes', `[]networking.PolicyType{${types.map((t) => JSON.stringify(t)).join(', ')}}`, 'may not specify more than two policyTypes'));
    return errors;
  }
  types.forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress') errors.push(notSupported(`spec.policyTypes[${i}]`, JSON.stringify(t), ['Ingress', 'Egress']));
  });
  return errors;
}

// ---- v1 PersistentVolumeClaims -------------------------------------------------------------------------------

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

/** ValidatePersistentVolumeClaimSpec at `path` (spec) */
export function claimSpecProblems(spec: Obj, path = 'spec'): FieldError[] {
  const errors: FieldError[] = [];
  const modes = Array.isArray(spec.accessModes) ? (spec.accessModes as string[]) : [];
  if (modes.length === 0) errors.push(requiredValue(`${path}.accessModes`, 'at least 1 access mode is required'));
  errors.push(...labelSelectorProblems(spec.selector as Selector | undefined, `${path}.selector`));
  for (const m of modes) if (!ACCESS_MODES.includes(m)) errors.push(notSupported(`${path}.accessModes`, shown(m), ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.some((m) => m !== 'ReadWriteOncePod'))
    errors.push(forbidden(`${path}.accessModes`, 'may not use ReadWriteOncePod with other access modes'));
  const storage = ((spec.resources as Obj | undefined)?.requests as Record<string, string | number> | undefined)?.storage;
  if (storage === undefined) errors.push(requiredValue(`${path}.resources[storage]`));
  else {
    const q = parseQuantity(storage);
    if (q && q.nano <= 0n) errors.push(invalid(`${path}.resources[storage]`, JSON.stringify(String(storage)), 'must be greater than zero'));
  }
  const mode = spec.volumeMode;
  if (typeof mode === 'string' && mode !== 'Block' && mode !== 'Filesystem') errors.push(notSupported(`${path}.volumeMode`, JSON.stringify(mode), ['Block', 'Filesystem']));
  return errors;
}

// ---- dispatch ------------------------------------------------------------------------------------------------

/** The kind's own validation of `obj` (create: old null) beyond what jobs.ts, apps.ts, immutable.ts and the others check. */
export function kindProblems(group: string, resource: string, obj: KubeObject, old: KubeObject | null): FieldError[] {
  const key = `${group}/${resource}`;
  switch (key) {
    case 'apps/deployments': return deploymentProblems(obj, old);
    case 'apps/statefulsets': return statefulSetProblems(obj);
    case 'batch/cronjobs': return cronJobProblems(obj, old);
    case 'policy/poddisruptionbudgets': return pdbProblems(obj);
    case 'networking.k8s.io/networkpolicies': return networkPolicyProblems(obj);
    case '/persistentvolumeclaims': return claimSpecProblems((obj.spec ?? {}) as Obj);
    default: return [];
  }
}
