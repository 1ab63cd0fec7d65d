// ValidatingAdmissionPolicy + ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1), evaluated with a
// real CEL interpreter and answered with the real API server's denial shape (kubernetes/kubernetes
// staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating, the ValidatingAdmissionPolicy plugin).
import type { KubeObject } from '../../../src/kube/types.ts';
import { compileCel, toCel } from './cel.ts';
import { ApiError, qualified } from './errors.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  kind: string;
  subResource: string;
  name: string;
  namespace: string;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  user: { username: string; groups: string[] };
  dryRun: boolean;
}

export interface ResourceRule {
  apiGroups?: string[];
  apiVersions?: string[];
  operations?: string[];
  resources?: string[];
  resourceNames?: string[];
  scope?: string;
}

interface MatchResources {
  resourceRules?: ResourceRule[];
  excludeResourceRules?: ResourceRule[];
  objectSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

const has = (list: string[] | undefined, value: string) => !list || list.length === 0 || list.includes('*') || list.includes(value);

export function ruleMatches(rule: ResourceRule, req: AdmissionRequest, namespaced: boolean): boolean {
  if (!rule.operations?.includes('*') && !rule.operations?.includes(req.operation)) return false;
  if (!(rule.apiGroups ?? []).some((g) => g === '*' || g === req.group)) return false;
  if (!(rule.apiVersions ?? ['*']).some((v) => v === '*' || v === req.version)) return false;
  const full = req.subResource ? `${req.resource}/${req.subResource}` : req.resource;
  const resourceOk = (rule.resources ?? []).some(
    (r) => r === '*' ? req.subResource === '' : r === '*/*' || r === full || (r.startsWith('*/') && r.slice(2) === req.subResource) || (r.endsWith('/*') && r.slice(0, -2) === req.resource),
  );
  if (!resourceOk) return false;
  if (rule.resourceNames && rule.resourceNames.length > 0 && !rule.resourceNames.includes(req.name)) return false;
  if (rule.scope === 'Cluster' && namespaced) return false;
  if (rule.scope === 'Namespaced' && !namespaced) return false;
  return true;
}

export function selectorMatches(sel: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!sel) return true;
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const present = k(labels, e.key);
    const val = labels[e.key];
    switch (e.operator) {
      case 'In':
        if (!present || !(e.values ?? []).includes(val!)) return false;
        break;
      case 'NotIn':
        if (present && (e.values ?? []).includes(val!)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}
const k = (o: Record<string, string>, key: string) => Object.prototype.hasOwnProperty.call(o, key);

function matchResources(m: MatchResources | undefined, req: AdmissionRequest, namespaced: boolean, nsLabels: Record<string, string> | undefined, requireRules: boolean): boolean {
  if (!m) return !requireRules;
  if (m.resourceRules && m.resourceRules.length > 0) {
    if (!m.resourceRules.some((r) => ruleMatches(r, req, namespaced))) return false;
  } else if (requireRules) return false;
  if ((m.excludeResourceRules ?? []).some((r) => ruleMatches(r, req, namespaced))) return false;
  const obj = req.object ?? req.oldObject;
  if (!selectorMatches(m.objectSelector, obj?.metadata.labels ?? {})) return false;
  if (namespaced && m.namespaceSelector && !selectorMatches(m.namespaceSelector, nsLabels ?? {})) return false;
  return true;
}

/** Kinds that configure admission are exempt from it, so a bad policy can always be removed. */
function exempt(req: AdmissionRequest): boolean {
  return req.group === 'admissionregistration.k8s.io';
}

const REASON_CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

export interface PolicySource {
  policies(): KubeObject[];
  bindings(): KubeObject[];
}

/** Throws the denial the real server would send, or returns when every matching binding admits the request. */
export function admit(source: PolicySource, req: AdmissionRequest, namespaced: boolean, namespaceObject: KubeObject | undefined): void {
  if (exempt(req)) return;
  const policies = new Map(source.policies().map((p) => [p.metadata.name ?? '', p]));
  for (const binding of source.bindings()) {
    const spec = (binding.spec ?? {}) as { policyName?: string; validationActions?: string[]; matchResources?: MatchResources };
    const policy = policies.get(spec.policyName ?? '');
    if (!policy) continue;
    const pspec = (policy.spec ?? {}) as {
      matchConstraints?: MatchResources;
      failurePolicy?: string;
      validations?: { expression: string; message?: string; messageExpression?: string; reason?: string }[];
      matchConditions?: { name: string; expression: string }[];
      variables?: { name: string; expression: string }[];
    };
    const nsLabels = namespaceObject?.metadata.labels;
    if (!matchResources(pspec.matchConstraints, req, namespaced, nsLabels, true)) continue;
    if (spec.matchResources && !matchResources(spec.matchResources, req, namespaced, nsLabels, false)) continue;
    const deny = (spec.validationActions ?? []).includes('Deny');
    const failClosed = (pspec.failurePolicy ?? 'Fail') === 'Fail';
    const ctx = celContext(req, namespaceObject);
    const policyName = policy.metadata.name ?? '';
    const bindingName = binding.metadata.name ?? '';
    try {
      if (!(pspec.matchConditions ?? []).every((c) => compileCel(c.expression)(ctx) === true)) continue;
      const variables: Record<string, unknown> = {};
      ctx.variables = variables;
      for (const v of pspec.variables ?? []) variables[v.name] = compileCel(v.expression)(ctx);
    } catch (e) {
      if (failClosed && deny) throw denial(req, policyName, bindingName, `expression resulted in error: ${(e as Error).message.split('\n')[0]}`, 'Invalid');
      continue;
    }
    for (const v of pspec.validations ?? []) {
      let ok: unknown;
      try {
        ok = compileCel(v.expression)(ctx);
      } catch (e) {
        if (failClosed && deny)
          throw denial(req, policyName, bindingName, `expression '${v.expression}' resulted in error: ${(e as Error).message.split('\n')[0]}`, 'Invalid');
        continue;
      }
      if (ok === true || !deny) continue;
      let message = v.message && v.message.trim() !== '' ? v.message : `failed expression: ${v.expression}`;
      if (v.messageExpression) {
        try {
          const m = compileCel(v.messageExpression)(ctx);
          if (typeof m === 'string' && m.trim() !== '') message = m;
        } catch {
          // the real server falls back to message when messageExpression fails
        }
      }
      throw denial(req, policyName, bindingName, message, v.reason ?? 'Invalid');
    }
  }
}

function celContext(req: AdmissionRequest, namespaceObject: KubeObject | undefined): Record<string, unknown> {
  const request = {
    uid: '',
    kind: { group: req.group, version: req.version, kind: req.kind },
    resource: { group: req.group, version: req.version, resource: req.resource },
    subResource: req.subResource,
    requestKind: { group: req.group, version: req.version, kind: req.kind },
    requestResource: { group: req.group, version: req.version, resource: req.resource },
    name: req.name,
    namespace: req.namespace,
    operation: req.operation,
    userInfo: { username: req.user.username, groups: req.user.groups },
    dryRun: req.dryRun,
  };
  return {
    object: toCel(req.object),
    oldObject: toCel(req.oldObject),
    request: toCel(request),
    params: null,
    namespaceObject: toCel(namespaceObject ?? null),
  };
}

function denial(req: AdmissionRequest, policy: string, binding: string, message: string, reason: string): ApiError {
  const text = `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${message}`;
  const resource = { group: req.group, resource: req.resource };
  const details: { name: string; kind: string; group?: string; causes: { message: string }[] } = {
    name: req.name,
    kind: req.resource,
    causes: [{ message: text }],
  };
  if (req.group !== '') details.group = req.group;
  return new ApiError(REASON_CODES[reason] ?? 422, reason, `${qualified(resource)} "${req.name}" is forbidden: ${text}`, details);
}
