// The one CEL interpreter of the embedded API server, shared by ValidatingAdmissionPolicies (admission.ts) and CRDs'
// x-kubernetes-validations (crd-schema.ts). Upstream: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/cel
// (the environment both use) and staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model (typing).
import { Environment } from '@marcbachmann/cel-js';

const env = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true, homogeneousAggregateLiterals: false });
const compiled = new Map<string, (ctx: Record<string, unknown>) => unknown>();

/** An expression parsed once and kept: the same rules are evaluated on every write. */
export function compileCel(expression: string): (ctx: Record<string, unknown>) => unknown {
  let f = compiled.get(expression);
  if (!f) {
    f = env.parse(expression) as unknown as (ctx: Record<string, unknown>) => unknown;
    compiled.set(expression, f);
  }
  return f;
}

/** CEL has distinct int and double types: JSON integers become ints, as the apiserver's CEL typing does. */
export function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  return v;
}

// Upstream: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/cel/escaping.go (Escape): a CRD's property whose name
// is a CEL reserved word, or holds `__`, `.`, `-` or `/`, is reached as its escaped name, e.g. `self.__namespace__`.
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if',
  'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

export function escapeCelProperty(name: string): string {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  return name.replaceAll('__', '__underscores__').replaceAll('.', '__dot__').replaceAll('-', '__dash__').replaceAll('/', '__slash__');
}

/**
 * toCel for a CRD's schema rules: a property named by a CEL reserved word also under its escaped name. Only reserved
 * words: upstream escapes declared properties, never a map's keys, and a map keyed by `a.b/c` (labels, selectors)
 * must not grow aliases a rule iterating over it would see; a map keyed by a reserved word is taken to be none here.
 */
export function toCelEscaped(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCelEscaped);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const value = toCelEscaped(x);
      out[k] = value;
      if (CEL_RESERVED.has(k)) out[escapeCelProperty(k)] = value;
    }
    return out;
  }
  return v;
}
