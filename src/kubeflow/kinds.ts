// Which kinds hold user state (docs/architecture.md, "What is state"): Profiles, and in profile namespaces every kind the
// API server serves that can be listed, read and created again — discovered, not listed, so that a NetworkPolicy, a
// LimitRange, a CronJob or an Argo WorkflowTemplate is kept without anyone having named it here — minus the runtime
// kinds (src/kubeflow/runtime-kinds.ts). Which objects of those kinds a controller made is src/kubeflow/generated.ts.
import type { ApiResource } from '../kube/types.ts';
import { runtimeKindOf } from './runtime-kinds.ts';
import { knownKinds, spelledResource, type KnownKind } from './known-kinds.ts';

/** the one cluster-scoped state kind: phase 1 of the kinds table */
export const profileKind: KnownKind = knownKinds.find((k) => k.phase === 1)!;

export function isProfileResource(resource: { group: string; resource: string }): boolean {
  return resource.group === profileKind.group && resource.resource === profileKind.resource;
}

/** a restore writes with create and a backup reads with list (and a rerun compares with get) */
const neededVerbs = ['list', 'get', 'create'];

/** why this served resource holds no state, or undefined when it does */
export function notStateReason(resource: Pick<ApiResource, 'group' | 'resource' | 'kind' | 'namespaced' | 'verbs'>): string | undefined {
  if (isProfileResource(resource)) return undefined;
  const spelled = spelledResource(resource);
  if (!resource.namespaced) return `${spelled} is cluster-scoped, and only Profiles are state at cluster scope`;
  const missing = neededVerbs.filter((verb) => !resource.verbs.includes(verb));
  if (missing.length) return `${spelled} is served without the verbs ${missing.join(', ')}, which a backup and a restore need`;
  const runtime = runtimeKindOf(resource.group, resource.kind);
  if (runtime) return runtime.why;
  return undefined;
}

/** the served resources a backup lists, in a stable order (group, then resource) */
export function stateResources(discovered: readonly ApiResource[]): ApiResource[] {
  return discovered.filter((r) => notStateReason(r) === undefined)
    .sort((a, b) => a.group.localeCompare(b.group) || a.resource.localeCompare(b.resource));
}
