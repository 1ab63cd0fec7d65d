// apps/v1 workloads on update, as the API server refuses them:
// - Deployments, ReplicaSets and DaemonSets: the selector never changes once created through apps/v1 (kubernetes/
//   kubernetes pkg/registry/apps/deployment/strategy.go, replicaset/strategy.go, daemonset/strategy.go, ValidateUpdate:
//   ValidateImmutableField on spec.selector, except for the old extensions/v1beta1 and apps/v1beta1 APIs that are no
//   longer served). The message prints the new selector as Go's %#v does.
// - StatefulSets: pkg/apis/apps/validation/validation.go, ValidateStatefulSetUpdate: only replicas, ordinals,
//   template, updateStrategy, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds may change;
//   any other difference of the spec (selector, serviceName, volumeClaimTemplates, podManagementPolicy) is refused in
//   one sentence. The comparison is on defaulted specs (pkg/apis/apps/v1/defaults.go, SetDefaults_StatefulSet;
//   pkg/apis/core/v1/defaults.go for the claim templates), since the real server defaults both before comparing.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { FieldError } from './errors.ts';
import { goSelector, type Selector } from './jobs.ts';

const SELECTOR_IMMUTABLE = new Set(['deployments', 'replicasets', 'daemonsets']);
const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];
const STATEFULSET_MESSAGE = "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

/** JSON with sorted keys: the same value whatever order a client wrote its fields in */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v);
}

interface ClaimTemplate { apiVersion?: string; kind?: string; spec?: Record<string, unknown>; status?: Record<string, unknown> }

/** the immutable part of a StatefulSet spec, with the defaults a real server would have filled in */
function fixedStatefulSetSpec(spec: Record<string, unknown>): Record<string, unknown> {
  const fixed: Record<string, unknown> = { ...spec };
  for (const field of STATEFULSET_MUTABLE) delete fixed[field];
  fixed.podManagementPolicy ??= 'OrderedReady';
  fixed.serviceName ??= '';
  fixed.volumeClaimTemplates = ((spec.volumeClaimTemplates as ClaimTemplate[] | undefined) ?? []).map((t) => {
    const { apiVersion: _apiVersion, kind: _kind, ...rest } = t;
    return { ...rest, spec: { volumeMode: 'Filesystem', ...(t.spec ?? {}) }, status: { phase: 'Pending', ...(t.status ?? {}) } };
  });
  return fixed;
}

export function validateAppsUpdate(resource: string, next: KubeObject, old: KubeObject): FieldError[] {
  const spec = (next.spec ?? {}) as Record<string, unknown>;
  const before = (old.spec ?? {}) as Record<string, unknown>;
  if (SELECTOR_IMMUTABLE.has(resource)) {
    if (canonical(spec.selector) === canonical(before.selector)) return [];
    return [{ field: 'spec.selector', type: 'FieldValueInvalid', text: `Invalid value: ${goSelector(spec.selector as Selector | undefined)}: field is immutable` }];
  }
  if (resource === 'statefulsets' && canonical(fixedStatefulSetSpec(spec)) !== canonical(fixedStatefulSetSpec(before)))
    return [{ field: 'spec', type: 'FieldValueForbidden', text: STATEFULSET_MESSAGE }];
  return [];
}
