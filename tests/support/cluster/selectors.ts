// Label and field selectors with the grammar kube-apiserver accepts (equality and set-based).
import type { KubeObject } from '../../../src/kube/types.ts';
import { badRequest } from './errors.ts';

type Requirement =
  | { key: string; op: 'in'; values: string[] }
  | { key: string; op: 'notin'; values: string[] }
  | { key: string; op: 'exists' }
  | { key: string; op: '!exists' };

export type Matcher = (obj: KubeObject) => boolean;

/** Splits on commas that are not inside a parenthesised value set. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t.length > 0);
}

function parseLabelTerm(term: string, whole: string): Requirement {
  let m = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (m) {
    const values = (m[3] ?? '').split(',').map((v) => v.trim());
    return { key: m[1]!, op: m[2] as 'in' | 'notin', values };
  }
  m = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(term);
  if (m) {
    const op = m[2] === '!=' ? 'notin' : 'in';
    return { key: m[1]!, op, values: [m[3] ?? ''] };
  }
  m = /^!\s*([^\s!=(),]+)$/.exec(term);
  if (m) return { key: m[1]!, op: '!exists' };
  m = /^([^\s!=(),]+)$/.exec(term);
  if (m) return { key: m[1]!, op: 'exists' };
  throw badRequest(`unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt (in selector "${whole}")`);
}

export function labelMatcher(selector: string | undefined): Matcher {
  if (!selector || selector.trim() === '') return () => true;
  const reqs = splitTerms(selector).map((t) => parseLabelTerm(t, selector));
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    return reqs.every((r) => {
      const has = Object.prototype.hasOwnProperty.call(labels, r.key);
      switch (r.op) {
        case 'exists':
          return has;
        case '!exists':
          return !has;
        case 'in':
          return has && r.values.includes(labels[r.key]!);
        case 'notin':
          return !has || !r.values.includes(labels[r.key]!);
      }
    });
  };
}

const FIELDS: Record<string, (o: KubeObject) => string> = {
  'metadata.name': (o) => o.metadata.name ?? '',
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
};

/** Only metadata.name and metadata.namespace, the fields every kind supports. */
export function fieldMatcher(selector: string | undefined): Matcher {
  if (!selector || selector.trim() === '') return () => true;
  const tests = splitTerms(selector).map((term) => {
    const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const field = m[1]!.trim();
    const read = FIELDS[field];
    if (!read) throw badRequest(`"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
    const value = m[3]!.trim();
    const negate = m[2] === '!=';
    return (o: KubeObject) => (read(o) === value) !== negate;
  });
  return (obj) => tests.every((t) => t(obj));
}
