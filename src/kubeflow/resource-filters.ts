// `include-resources` / `exclude-resources`: comma lists of resources as Velero spells them — `secrets`,
// `notebooks.kubeflow.org`, a kind (`Notebook`) or `*`. Exclusion wins over inclusion; an empty include means all.
export interface ResourcePattern {
  /** plural resource, lower-cased kind, or '*' */
  name: string;
  /** the group when written as `resource.group`; undefined matches any group */
  group?: string;
}

export interface ResourceIdentity {
  group: string;
  resource: string;
  kind: string;
}

const entryPattern = /^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$/;

/** throws one sentence naming the option and the entry it cannot read */
export function parseResourceList(option: string, text: string | undefined): ResourcePattern[] {
  if (!text?.trim()) return [];
  return text.split(',').map((raw) => raw.trim()).filter(Boolean).map((entry) => {
    const lower = entry.toLowerCase();
    if (!entryPattern.test(lower)) {
      throw new Error(`${option}: "${entry}" is not a resource name (write e.g. secrets, notebooks.kubeflow.org or *).`);
    }
    const dot = lower.indexOf('.');
    return dot < 0 ? { name: lower } : { name: lower.slice(0, dot), group: lower.slice(dot + 1) };
  });
}

function matches(pattern: ResourcePattern, resource: ResourceIdentity): boolean {
  if (pattern.name === '*') return true;
  if (pattern.group !== undefined && pattern.group !== resource.group) return false;
  return pattern.name === resource.resource || pattern.name === resource.kind.toLowerCase();
}

function spell(pattern: ResourcePattern): string {
  return pattern.group === undefined ? pattern.name : `${pattern.name}.${pattern.group}`;
}

export interface ResourceFilter {
  include: ResourcePattern[];
  exclude: ResourcePattern[];
}

export function parseResourceFilter(include: string | undefined, exclude: string | undefined): ResourceFilter {
  return { include: parseResourceList('include-resources', include), exclude: parseResourceList('exclude-resources', exclude) };
}

/** why the filter leaves this resource out, or undefined when it is in */
export function filteredOutReason(filter: ResourceFilter, resource: ResourceIdentity): string | undefined {
  const excluded = filter.exclude.find((pattern) => matches(pattern, resource));
  if (excluded) return `excluded by exclude-resources (${spell(excluded)})`;
  if (filter.include.length && !filter.include.some((pattern) => matches(pattern, resource))) {
    return `not in include-resources (${filter.include.map(spell).join(',')})`;
  }
  return undefined;
}
