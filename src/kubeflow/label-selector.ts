// Kubernetes label selectors in their string form (`a=b,c!=d,e in (f,g),!h`), parsed once and matched locally.
export type Requirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'doesnotexist' };

const keyPattern = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const valuePattern = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of selector) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      terms.push(current.trim());
      current = '';
    } else current += char;
  }
  terms.push(current.trim());
  return terms.filter((term) => term !== '');
}

function checked(selector: string, key: string, values: string[] = []): void {
  if (!keyPattern.test(key)) throw new Error(`The label selector "${selector}" has an invalid key "${key}".`);
  for (const value of values) {
    if (!valuePattern.test(value) || value.length > 63) throw new Error(`The label selector "${selector}" has an invalid value "${value}".`);
  }
}

/** throws one sentence naming the selector and what is wrong with it */
export function parseLabelSelector(selector: string): Requirement[] {
  return splitTerms(selector).map((term): Requirement => {
    const set = term.match(/^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/);
    if (set) {
      const values = set[3]!.split(',').map((v) => v.trim());
      checked(selector, set[1]!, values);
      return { key: set[1]!, op: set[2] as 'in' | 'notin', values };
    }
    const comparison = term.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/);
    if (comparison) {
      checked(selector, comparison[1]!, [comparison[3]!]);
      return { key: comparison[1]!, op: comparison[2] === '!=' ? 'notin' : 'in', values: [comparison[3]!] };
    }
    const absent = term.match(/^!\s*(\S+)$/);
    if (absent) {
      checked(selector, absent[1]!);
      return { key: absent[1]!, op: 'doesnotexist' };
    }
    checked(selector, term);
    return { key: term, op: 'exists' };
  });
}

export function matchesLabelSelector(requirements: readonly Requirement[], labels: Readonly<Record<string, string>> = {}): boolean {
  return requirements.every((requirement) => {
    const value = labels[requirement.key];
    switch (requirement.op) {
      case 'in': return value !== undefined && requirement.values.includes(value);
      case 'notin': return value === undefined || !requirement.values.includes(value);
      case 'exists': return value !== undefined;
      case 'doesnotexist': return value === undefined;
    }
  });
}
