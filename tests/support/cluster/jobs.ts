// batch/v1 Jobs as the API server admits them:
// - kubernetes/kubernetes pkg/registry/batch/job/strategy.go (PrepareForCreate → generateSelector): unless
//   `manualSelector` is true, the pod template gets the labels `controller-uid` and `batch.kubernetes.io/controller-uid`
//   (the Job's new uid) and `job-name` and `batch.kubernetes.io/job-name`, each only where the template does not set
//   it already, and the selector gets `batch.kubernetes.io/controller-uid` unless it names that key already;
// - pkg/apis/batch/validation/validation.go: validateGeneratedSelector (a label the template set that is not the
//   generated one: "must be '<uid>'"; a selector that does not select the generated labels: "`selector` not
//   auto-generated"), ValidateJobSpec (the selector must select the template's labels; restartPolicy OnFailure or
//   Never, where v1 defaults a pod template's to Always; parallelism, completions, activeDeadlineSeconds, backoffLimit
//   and ttlSecondsAfterFinished not negative, `must be greater than or equal to 0` from pkg/apis/core/validation
//   ValidateNonnegativeField; an unknown completionMode, and an Indexed one without completions), ValidateJobUpdate
//   (selector and template immutable, except the scheduling directives of a suspended Job that never started;
//   completions immutable unless an Indexed Job changes it together with parallelism, validateCompletions;
//   completionMode immutable), ValidateJobTemplateSpec (a CronJob's jobTemplate: the same spec checks, and a selector
//   or manualSelector refused, see workload-validation.ts).
// The field errors print their values the way the Go server does (%#v), since that is what a client reads.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { FieldError } from './errors.ts';

const LEGACY_UID = 'controller-uid';
const UID = 'batch.kubernetes.io/controller-uid';
const LEGACY_NAME = 'job-name';
const NAME = 'batch.kubernetes.io/job-name';

export interface Selector { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] }
interface Template { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> }
interface JobSpec {
  manualSelector?: boolean; selector?: Selector; template?: Template; suspend?: boolean;
  parallelism?: number; completions?: number; activeDeadlineSeconds?: number; backoffLimit?: number; ttlSecondsAfterFinished?: number; completionMode?: string;
}

const specOf = (job: KubeObject): JobSpec => (job.spec ??= {}) as JobSpec;

/** generateSelector, on a Job that already has its new uid */
export function generateJobSelector(job: KubeObject): void {
  const spec = specOf(job);
  if (spec.manualSelector === true) return;
  const template = (spec.template ??= {});
  const labels = ((template.metadata ??= {}).labels ??= {});
  const name = job.metadata.name ?? '';
  const uid = job.metadata.uid ?? '';
  for (const key of [LEGACY_NAME, NAME]) if (!(key in labels)) labels[key] = name;
  for (const key of [LEGACY_UID, UID]) if (!(key in labels)) labels[key] = uid;
  const selector = (spec.selector ??= {});
  const matchLabels = (selector.matchLabels ??= {});
  if (!(UID in matchLabels)) matchLabels[UID] = uid;
}

/** %#v of a Go map[string]string: keys sorted */
export function goMap(m: Record<string, string> | undefined): string {
  if (!m) return 'map[string]string(nil)';
  return `map[string]string{${Object.keys(m).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`).join(', ')}}`;
}

/** %#v of a metav1.LabelSelector */
export function goSelector(s: Selector | undefined): string {
  const expressions = s?.matchExpressions?.length
    ? `[]v1.LabelSelectorRequirement{${s.matchExpressions.map((e) => `v1.LabelSelectorRequirement{Key:${JSON.stringify(e.key)}, Operator:${JSON.stringify(e.operator)}, Values:${e.values === undefined ? '[]string(nil)' : `[]string{${e.values.map((v) => JSON.stringify(v)).join(', ')}}`}}`).join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${goMap(s?.matchLabels)}, MatchExpressions:${expressions}}`;
}

export function selects(selector: Selector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const value = labels[e.key];
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(value!))) return false;
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(value!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

function hasLabel(labels: Record<string, string> | undefined, key: string, expected: string): FieldError[] {
  const field = `spec.template.metadata.labels[${key}]`;
  if (!labels || !(key in labels)) return [{ field, type: 'FieldValueRequired', text: `Required value: must be '${expected}'` }];
  if (labels[key] !== expected) return [{ field, type: 'FieldValueInvalid', text: `Invalid value: ${goMap(labels)}: must be '${expected}'` }];
  return [];
}

/** ValidateJob on create (RequirePrefixedLabels), after generateJobSelector */
export function validateJobCreate(job: KubeObject): FieldError[] {
  const spec = specOf(job);
  const labels = spec.template?.metadata?.labels;
  const errors: FieldError[] = [];
  if (spec.manualSelector !== true && spec.selector) {
    const uid = job.metadata.uid ?? '';
    const name = job.metadata.name ?? '';
    errors.push(...hasLabel(labels, LEGACY_UID, uid), ...hasLabel(labels, LEGACY_NAME, name), ...hasLabel(labels, UID, uid), ...hasLabel(labels, NAME, name));
    if (!selects(spec.selector, { [UID]: uid }))
      errors.push({ field: 'spec.selector', type: 'FieldValueInvalid', text: `Invalid value: ${goSelector(spec.selector)}: \`selector\` not auto-generated` });
  }
  errors.push(...validateJobSpec(spec));
  return errors;
}

/** ValidateNonnegativeField (pkg/apis/core/validation): an int64 prints bare (field/errors.go's simple printer) */
export function nonNegative(value: unknown, field: string): FieldError[] {
  return typeof value === 'number' && value < 0 ? [{ field, type: 'FieldValueInvalid', text: `Invalid value: ${value}: must be greater than or equal to 0` }] : [];
}

/** validateJobSpec: what ValidateJobSpec and ValidateJobTemplateSpec share, at `path` (spec, or spec.jobTemplate.spec) */
export function jobSpecFieldProblems(spec: JobSpec, path: string): FieldError[] {
  const errors: FieldError[] = [];
  errors.push(...nonNegative(spec.parallelism, `${path}.parallelism`), ...nonNegative(spec.completions, `${path}.completions`));
  errors.push(...nonNegative(spec.activeDeadlineSeconds, `${path}.activeDeadlineSeconds`), ...nonNegative(spec.backoffLimit, `${path}.backoffLimit`));
  errors.push(...nonNegative(spec.ttlSecondsAfterFinished, `${path}.ttlSecondsAfterFinished`));
  if (spec.completionMode !== undefined) {
    if (spec.completionMode !== 'NonIndexed' && spec.completionMode !== 'Indexed')
      errors.push({ field: `${path}.completionMode`, type: 'FieldValueNotSupported', text: `Unsupported value: ${JSON.stringify(spec.completionMode)}: supported values: "Indexed", "NonIndexed"` });
    if (spec.completionMode === 'Indexed' && spec.completions === undefined)
      errors.push({ field: `${path}.completions`, type: 'FieldValueRequired', text: 'Required value: when completion mode is Indexed' });
  }
  const restartPolicy = (spec.template?.spec?.restartPolicy as string | undefined) ?? 'Always';
  if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never')
    errors.push({ field: `${path}.template.spec.restartPolicy`, type: 'FieldValueNotSupported', text: `Unsupported value: ${JSON.stringify(restartPolicy)}: supported values: "OnFailure", "Never"` });
  return errors;
}

function validateJobSpec(spec: JobSpec): FieldError[] {
  const errors = jobSpecFieldProblems(spec, 'spec');
  if (!spec.selector) errors.push({ field: 'spec.selector', type: 'FieldValueRequired', text: 'Required value' });
  else if (!selects(spec.selector, spec.template?.metadata?.labels ?? {}))
    errors.push({ field: 'spec.template.metadata.labels', type: 'FieldValueInvalid', text: `Invalid value: ${goMap(spec.template?.metadata?.labels)}: \`selector\` does not match template \`labels\`` });
  return errors;
}

/** JSON with sorted keys: the same value whatever order a client wrote its fields in */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v);
}

/** the template fields a suspended Job that never started may still change (mutable scheduling directives) */
const SCHEDULING_DIRECTIVES = ['nodeSelector', 'affinity', 'tolerations', 'schedulingGates'];

/** ValidateJobUpdate: what an update may not change */
export function validateJobUpdate(next: KubeObject, old: KubeObject): FieldError[] {
  const spec = specOf(next);
  const before = specOf(old);
  const errors: FieldError[] = [];
  if (canonical(spec.selector) !== canonical(before.selector))
    errors.push({ field: 'spec.selector', type: 'FieldValueInvalid', text: `Invalid value: ${goSelector(spec.selector)}: field is immutable` });
  const neverStarted = before.suspend === true && !(old.status as { startTime?: string } | undefined)?.startTime;
  const comparable = (t: Template | undefined): string => {
    if (!neverStarted) return canonical(t);
    const { metadata: _metadata, spec: podSpec, ...rest } = t ?? {};
    const fixed = { ...(podSpec ?? {}) };
    for (const k of SCHEDULING_DIRECTIVES) delete fixed[k];
    return canonical({ ...rest, spec: fixed });
  };
  if (comparable(spec.template) !== comparable(before.template))
    errors.push({ field: 'spec.template', type: 'FieldValueInvalid', text: `Invalid value: ${JSON.stringify(spec.template ?? null)}: field is immutable` });
  // validateCompletions (ElasticIndexedJob, GA in 1.31, beta and on in 1.30)
  if (spec.completions !== before.completions) {
    if (spec.completionMode !== 'Indexed')
      errors.push({ field: 'spec.completions', type: 'FieldValueInvalid', text: `Invalid value: ${spec.completions ?? 'null'}: field is immutable` });
    else if (spec.completions !== undefined && spec.completions !== spec.parallelism)
      errors.push({ field: 'spec.completions', type: 'FieldValueInvalid', text: `Invalid value: ${spec.completions}: can only be modified in tandem with spec.parallelism` });
  }
  if ((spec.completionMode ?? 'NonIndexed') !== (before.completionMode ?? 'NonIndexed'))
    errors.push({ field: 'spec.completionMode', type: 'FieldValueInvalid', text: `Invalid value: ${JSON.stringify(spec.completionMode ?? 'NonIndexed')}: field is immutable` });
  errors.push(...validateJobSpec(spec));
  return errors;
}
