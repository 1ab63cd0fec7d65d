// RBAC's rule arithmetic, written from kubernetes/kubernetes:
// - whether one rule allows one request: plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows) with
//   pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches,
//   NonResourceURLMatches): '*' matches every verb, group and resource (subresources too), a resource rule names
//   subresources as "pods/log", "*/scale" matches the scale subresource of any resource, resourceNames empty means
//   every name (and a request with no name, list or create, is matched only by a rule without resourceNames), a
//   non-resource URL rule ending in '*' matches by prefix;
// - whether a set of rules covers another (the escalation check): staging/src/k8s.io/component-helpers/auth/rbac/
//   validation/policy_comparator.go (Covers, BreakdownRule, ruleCovers, resourceCoversAll, nonResourceURLCovers);
// - how missing rules are named in the refusal: pkg/registry/rbac/validation/policy_compact.go (CompactRules) and
//   pkg/apis/rbac/v1/helpers.go (CompactString, Go's %q of a []string).

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** authorizer.Attributes: what the authorizer is asked about one request (or one impersonation, bind, escalate) */
export interface Attributes {
  user: { username: string; groups: string[] };
  verb: string;
  isResourceRequest: boolean;
  /** non-resource requests only */
  path: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

const has = (list: readonly string[] | undefined, value: string) => (list ?? []).includes(value);

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === '*' || v === verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (!subresource) continue;
    if (r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  return (rule.resourceNames ?? []).length === 0 || has(rule.resourceNames, name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))));
}

/** rbac.go RuleAllows */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (a.isResourceRequest) {
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name);
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}

// ---- policy_comparator.go ---------------------------------------------------------------------------------------

/** BreakdownRule: one rule per group × resource × verb (× name), and per non-resource URL × verb */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const verb of rule.verbs ?? []) {
        if ((rule.resourceNames ?? []).length > 0) for (const name of rule.resourceNames!) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

const hasAll = (set: readonly string[] | undefined, wanted: readonly string[] | undefined) => (wanted ?? []).every((w) => has(set, w));

function resourceCoversAll(set: readonly string[] | undefined, covers: readonly string[] | undefined): boolean {
  if (has(set, '*') || hasAll(set, covers)) return true;
  for (const path of covers ?? []) {
    if (has(set, path)) continue;
    if (!path.includes('/')) return false;
    if (!has(set, `*/${path.slice(path.indexOf('/') + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLCovers(owner: string, sub: string): boolean {
  return owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, '')));
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((path) => (owner.nonResourceURLs ?? []).some((o) => nonResourceURLCovers(o, path)));
  const ownerNames = owner.resourceNames ?? [];
  const names = (sub.resourceNames ?? []).length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames);
  return verbs && groups && resources && names && urls;
}

/** Covers: whether the owner's rules cover every broken-down servant rule, and the ones they do not */
export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing = servant.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
  return { covered: missing.length === 0, missing };
}

// ---- policy_compact.go, helpers.go ------------------------------------------------------------------------------

/** CompactRules: simple rules (one group, one resource, at most one name, no URLs) of the same target merge their verbs */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    const isSimple = (rule.resourceNames ?? []).length <= 1 && (rule.nonResourceURLs ?? []).length === 0 && (rule.apiGroups ?? []).length === 1 && (rule.resources ?? []).length === 1;
    if (!isSimple) {
      compacted.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], rule.resourceNames?.[0] ?? null]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...existing.verbs, ...rule.verbs];
    else simple.set(key, { ...rule, verbs: [...rule.verbs] });
  }
  return [...compacted, ...simple.values()];
}

/** Go's %q of a []string: ["a" "b"] */
export function goQuotedList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

/** CompactString: {APIGroups:["*"], Resources:["*"], Verbs:["*"]} */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if ((rule.apiGroups ?? []).length) parts.push(`APIGroups:${goQuotedList(rule.apiGroups!)}`);
  if ((rule.resources ?? []).length) parts.push(`Resources:${goQuotedList(rule.resources!)}`);
  if ((rule.nonResourceURLs ?? []).length) parts.push(`NonResourceURLs:${goQuotedList(rule.nonResourceURLs!)}`);
  if ((rule.resourceNames ?? []).length) parts.push(`ResourceNames:${goQuotedList(rule.resourceNames!)}`);
  if ((rule.verbs ?? []).length) parts.push(`Verbs:${goQuotedList(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}
