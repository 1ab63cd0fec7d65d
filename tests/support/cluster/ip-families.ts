// A Service's IP families on create, as kube-apiserver checks and defaults them against the families its
// --service-cluster-ip-range configures:
// - kubernetes/kubernetes pkg/apis/core/validation/validation.go, ValidateServiceClusterIPsRelatedFields: each family
//   IPv4 or IPv6 and none twice, a supported ipFamilyPolicy, each clusterIP of its ipFamilies' family;
// - pkg/registry/core/service/storage/alloc.go, initIPFamilyFields: ipFamilyPolicy defaults to SingleStack
//   (RequireDualStack for a headless Service without a selector); SingleStack with two families is refused;
//   RequireDualStack on a single-stack cluster is refused ("this cluster is not configured for dual-stack services"),
//   as is any family the cluster lacks ("not configured on this cluster"); no families means the cluster's first; a
//   dual-stack policy on a dual-stack cluster gets the other family added.
// Values print as field/errors.go ErrorBody prints them: a named string type through %#v, quoted.
import type { FieldError } from './errors.ts';
import { familyOf, type IpFamily } from './service-ip-range.ts';

export interface FamilySpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  selector?: Record<string, string>;
}

const FAMILIES = ['IPv4', 'IPv6'];
const POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const quoted = (v: unknown) => JSON.stringify(v);
const supported = (values: string[]) => values.map(quoted).join(', ');
const invalidAt = (field: string, value: unknown, detail: string): FieldError => ({ field, type: 'FieldValueInvalid', text: `Invalid value: ${quoted(value)}: ${detail}` });
/** Go's %#v of a []string, as the clusterIPs errors print it */
export const goStrings = (values: readonly string[]) => `[]string{${values.map(quoted).join(', ')}}`;

/** ValidateServiceClusterIPsRelatedFields, the parts about families and policy (the IPs' form is checked before) */
export function familyFieldProblems(spec: FamilySpec): FieldError[] {
  if (spec.type === 'ExternalName') return [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const [i, family] of (spec.ipFamilies ?? []).entries()) {
    if (!FAMILIES.includes(family)) errors.push({ field: `spec.ipFamilies[${i}]`, type: 'FieldValueNotSupported', text: `Unsupported value: ${quoted(family)}: supported values: ${supported(FAMILIES)}` });
    if (seen.has(family)) errors.push({ field: `spec.ipFamilies[${i}]`, type: 'FieldValueDuplicate', text: `Duplicate value: ${quoted(family)}` });
    seen.add(family);
  }
  if (spec.ipFamilyPolicy !== undefined && !POLICIES.includes(spec.ipFamilyPolicy))
    errors.push({ field: 'spec.ipFamilyPolicy', type: 'FieldValueNotSupported', text: `Unsupported value: ${quoted(spec.ipFamilyPolicy)}: supported values: ${supported(POLICIES)}` });
  const ips = spec.clusterIPs ?? [];
  if (!(ips.length === 1 && ips[0] === 'None'))
    for (const [i, ip] of ips.entries()) {
      const family = spec.ipFamilies?.[i];
      if (family === 'IPv4' && familyOf(ip) === 'IPv6') errors.push({ field: `spec.clusterIPs[${i}]`, type: 'FieldValueInvalid', text: `Invalid value: ${quoted(ip)}: expected an IPv4 value as indicated by \`ipFamilies[${i}]\`` });
      if (family === 'IPv6' && familyOf(ip) !== 'IPv6') errors.push({ field: `spec.clusterIPs[${i}]`, type: 'FieldValueInvalid', text: `Invalid value: ${quoted(ip)}: expected an IPv6 value as indicated by \`ipFamilies[${i}]\`` });
    }
  return errors;
}

/**
 * initIPFamilyFields for a create, in place: defaults ipFamilyPolicy and ipFamilies from `configured` (the cluster's
 * families, primary first) or returns the refusals. ExternalName Services are left alone.
 */
export function initFamiliesOnCreate(spec: FamilySpec, configured: readonly IpFamily[]): FieldError[] {
  if (spec.type === 'ExternalName') return [];
  const headlessWithoutSelector = spec.clusterIP === 'None' && Object.keys(spec.selector ?? {}).length === 0;
  spec.ipFamilyPolicy ??= headlessWithoutSelector ? 'RequireDualStack' : 'SingleStack';
  const errors = familyFieldProblems(spec);
  if (errors.length) return errors;
  const families = spec.ipFamilies ?? [];
  if (spec.ipFamilyPolicy === 'SingleStack') {
    if ((spec.clusterIPs ?? []).length === 2) errors.push(invalidAt('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
    if (families.length === 2) errors.push(invalidAt('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
  }
  // families inferred from the clusterIPs asked for
  for (const [i, ip] of (spec.clusterIPs ?? []).entries()) {
    if (ip === 'None') break;
    const family = familyOf(ip);
    if (!family || i < families.length) continue;
    if (!configured.includes(family)) errors.push({ field: `spec.clusterIPs[${i}]`, type: 'FieldValueInvalid', text: `Invalid value: ${goStrings(spec.clusterIPs ?? [])}: ${family} is not configured on this cluster` });
    else families.push(family);
  }
  if (errors.length) return errors;
  if (families.length) spec.ipFamilies = families;
  const other = (f: string) => (f === 'IPv4' ? 'IPv6' : 'IPv4');
  if (headlessWithoutSelector) {
    // a headless Service without a selector may hold families the cluster lacks (alloc.go's special case)
    spec.ipFamilies = families.length ? families : [configured[0]!];
    if (spec.ipFamilies.length < 2 && spec.ipFamilyPolicy !== 'SingleStack') spec.ipFamilies.push(other(spec.ipFamilies[0]!));
    return [];
  }
  if (spec.ipFamilyPolicy === 'RequireDualStack' && configured.length < 2)
    errors.push(invalidAt('spec.ipFamilyPolicy', spec.ipFamilyPolicy, 'this cluster is not configured for dual-stack services'));
  for (const [i, family] of families.entries())
    if (!configured.includes(family as IpFamily)) errors.push(invalidAt(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
  if (errors.length) return errors;
  if (!families.length) spec.ipFamilies = [configured[0]!];
  if (spec.ipFamilyPolicy !== 'SingleStack' && spec.ipFamilies!.length === 1 && configured.length === 2) spec.ipFamilies!.push(other(spec.ipFamilies![0]!));
  return [];
}
