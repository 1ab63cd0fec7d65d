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
