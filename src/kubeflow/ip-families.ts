// A dual-stack Service restored into a cluster that is not dual-stack. kube-apiserver refuses a Service naming a
// family its --service-cluster-ip-range lacks (kubernetes/kubernetes pkg/registry/core/service/storage/alloc.go,
// initIPFamilyFields: `spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster`), and a
// RequireDualStack one on any single-stack cluster (`this cluster is not configured for dual-stack services`). Velero
// keeps ipFamilies and ipFamilyPolicy as archived (vmware-tanzu/velero pkg/restore/actions/service_action.go clears
// only clusterIP, clusterIPs and node ports), so its restore of such a Service fails.
// What the restore does instead, per policy:
// - PreferDualStack means "both families where the cluster has them, one otherwise"; the second family in the
//   archive was added by the source cluster (initIPFamilyFields appends it on a dual-stack cluster). So on a target
//   that is not dual-stack the Service is restored with its primary family only, as the same create would have made
//   it there, and the restore says so;
// - RequireDualStack is the user's demand for both families: it is sent as archived, and the target's refusal is the
//   one sentence for that object (narrowing it would break what its clients rely on);
// - SingleStack, and a headless Service without a selector (which may hold families the cluster lacks), are left as
//   they are.
import type { KubeObject } from '../kube/types.ts';
import { describeObject } from './identity.ts';

interface FamilySpec { type?: string; clusterIP?: string; selector?: Record<string, string>; ipFamilies?: string[]; ipFamilyPolicy?: string }

function specOf(object: KubeObject): FamilySpec | undefined {
  if (object.kind !== 'Service' || object.apiVersion !== 'v1' || !object.spec || typeof object.spec !== 'object') return undefined;
  return object.spec as FamilySpec;
}

/** whether the Service is one that loses its second family on a target that is not dual-stack */
export function prefersDualStack(object: KubeObject): boolean {
  const spec = specOf(object);
  if (!spec || spec.type === 'ExternalName' || spec.ipFamilyPolicy !== 'PreferDualStack' || (spec.ipFamilies?.length ?? 0) < 2) return false;
  const headlessWithoutSelector = spec.clusterIP === 'None' && Object.keys(spec.selector ?? {}).length === 0;
  return !headlessWithoutSelector;
}

/**
 * The Service as a target that is not dual-stack makes it: its primary family only, and the sentence that says so
 * (`dryRun`: what would be). Undefined when `prefersDualStack` is false.
 */
export function singleStackOf(object: KubeObject, dryRun: boolean): { object: KubeObject; note: string } | undefined {
  if (!prefersDualStack(object)) return undefined;
  const spec = specOf(object)!;
  const families = spec.ipFamilies!;
  const narrowed = { ...object, spec: { ...spec, ipFamilies: families.slice(0, 1) } } as KubeObject;
  const verb = dryRun ? 'would be restored' : 'restored';
  return {
    object: narrowed,
    note: `${describeObject(object)}: ${verb} single-stack (${families[0]}): the target is not configured for dual-stack services, and the backup's asks PreferDualStack over ${families.join(' and ')}`,
  };
}

/** a Service the target answers with both families when it is dual-stack: what the restore asks it (dryRun=All) */
export function dualStackProbe(namespace: string): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'kubeflow-upgrader-ip-family-probe', namespace },
    spec: { ipFamilyPolicy: 'PreferDualStack', selector: { 'kubeflow-upgrader/probe': 'ip-families' }, ports: [{ port: 80, protocol: 'TCP' }] },
  } as KubeObject;
}

/** whether the target's dryRun=All answer to the probe holds two families */
export function isDualStackAnswer(answer: KubeObject): boolean {
  return ((answer.spec as FamilySpec | undefined)?.ipFamilies?.length ?? 0) >= 2;
}
