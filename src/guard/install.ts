// Puts the guard into the cluster, takes it out, and says whether what is there is what the config asks for.
import type { KubeObject } from '../kube/types.ts';
import { BINDINGS, POLICIES, isApiFailure } from './kube-port.ts';
import type { GuardKube } from './kube-port.ts';
import type { ApiResource } from '../kube/types.ts';
import { ALL_GUARD_NAMES, MANAGED_BY_LABEL, MANAGED_BY_VALUE, desiredGuardObjects } from './policy.ts';
import type { GuardObject, GuardOptions } from './policy.ts';

export interface EnsureResult {
  created: string[];
  updated: string[];
  unchanged: string[];
  removed: string[];
}

export type GuardStateName = 'active' | 'absent' | 'drifted';

export interface GuardState {
  state: GuardStateName;
  /** one line for the unit status, e.g. "CRD guard active (3 groups)" */
  summary: string;
  /** what differs, when drifted */
  problems: string[];
}

function at(resource: GuardObject['resource']): ApiResource {
  return resource === 'validatingadmissionpolicies' ? POLICIES : BINDINGS;
}

function label(object: KubeObject): string {
  return `${object.kind}/${object.metadata.name ?? ''}`;
}

/**
 * True when every field we set has the same value in `actual`. The API server adds defaults (matchPolicy,
 * namespaceSelector, scope, …), so an exact comparison would see a difference after every write and never settle.
 */
export function containsDesired(actual: unknown, desired: unknown): boolean {
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      actual.length === desired.length &&
      desired.every((item, index) => containsDesired(actual[index], item))
    );
  }
  if (typeof desired === 'object' && desired !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const actualRecord = actual as Record<string, unknown>;
    return Object.entries(desired).every(([key, value]) => containsDesired(actualRecord[key], value));
  }
  return actual === desired;
}

function matches(actual: KubeObject, desired: KubeObject): boolean {
  return containsDesired(actual.spec, desired.spec) && containsDesired(actual.metadata.labels ?? {}, desired.metadata.labels ?? {});
}

function isOurs(object: KubeObject): boolean {
  return object.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
}

/**
 * Creates or updates the guard objects the options ask for and removes the charm's guard objects they no longer ask
 * for. Idempotent: when the cluster already holds what is wanted, nothing is written.
 */
export async function ensureGuard(kube: GuardKube, options: GuardOptions): Promise<EnsureResult> {
  const result: EnsureResult = { created: [], updated: [], unchanged: [], removed: [] };
  const desired = desiredGuardObjects(options);
  for (const { resource, object } of desired) {
    const outcome = await convergeObject(kube, at(resource), object);
    result[outcome].push(label(object));
  }
  const wanted = new Set(desired.map(({ object }) => label(object)));
  result.removed = await removeOwned(kube, (object) => !wanted.has(label(object)));
  return result;
}

/** How many times one object is read again after another writer got in first, before the conflict is reported. */
const CONFLICT_ATTEMPTS = 5;

/**
 * Makes one guard object hold what is wanted. Another writer (a second leader during an election, an admin) may create
 * or change it between our read and our write: the API server answers 409, and the object is read again and compared
 * afresh, as a controller does, instead of failing the hook over a race that has already been settled.
 */
async function convergeObject(kube: GuardKube, resource: ApiResource, object: KubeObject): Promise<'created' | 'updated' | 'unchanged'> {
  const name = object.metadata.name ?? '';
  for (let attempt = 1; ; attempt += 1) {
    try {
      const current = await kube.tryGet(resource, name);
      if (current === undefined) {
        await kube.create(resource, object);
        return 'created';
      }
      if (matches(current, object)) return 'unchanged';
      const labels = { ...current.metadata.labels, ...object.metadata.labels };
      // Carry resourceVersion so that a concurrent writer makes this fail rather than be silently overwritten.
      const { managedFields: _serverOwned, ...metadata } = current.metadata;
      await kube.replace(resource, { ...object, metadata: { ...metadata, labels } });
      return 'updated';
    } catch (error) {
      if (!isApiFailure(error, 409) || attempt >= CONFLICT_ATTEMPTS) throw error;
    }
  }
}

/** Removes every guard object this charm owns (bindings first, so no policy is ever left half-bound). */
export async function removeGuard(kube: GuardKube): Promise<string[]> {
  return removeOwned(kube, () => true);
}

async function removeOwned(kube: GuardKube, shouldRemove: (object: KubeObject) => boolean): Promise<string[]> {
  const removed: string[] = [];
  for (const resource of [BINDINGS, POLICIES]) {
    for (const name of ALL_GUARD_NAMES) {
      const current = await kube.tryGet(resource, name);
      // An object of the same name that someone else made is theirs: leave it.
      if (current === undefined || !isOurs(current) || !shouldRemove(current)) continue;
      try {
        await kube.delete(resource, name);
        removed.push(label(current));
      } catch (error) {
        if (!isApiFailure(error, 404)) throw error;
      }
    }
  }
  return removed;
}

/** Compares the cluster with what the options ask for, for the status line and pre-upgrade-check. */
export async function guardState(kube: GuardKube, options: GuardOptions): Promise<GuardState> {
  const desired = desiredGuardObjects(options);
  const problems: string[] = [];
  let present = 0;
  for (const { resource, object } of desired) {
    const current = await kube.tryGet(at(resource), object.metadata.name ?? '');
    if (current === undefined) {
      problems.push(`${label(object)} is missing`);
      continue;
    }
    present += 1;
    if (!matches(current, object)) problems.push(`${label(object)} differs from the config`);
  }
  const wanted = new Set(desired.map(({ object }) => label(object)));
  for (const resource of [POLICIES, BINDINGS]) {
    for (const name of ALL_GUARD_NAMES) {
      const current = await kube.tryGet(resource, name);
      if (current !== undefined && isOurs(current) && !wanted.has(label(current))) {
        problems.push(`${label(current)} is installed but the config does not ask for it`);
      }
    }
  }
  if (desired.length > 0 && present === 0 && problems.every((problem) => problem.endsWith('is missing'))) {
    return { state: 'absent', summary: 'CRD guard absent', problems };
  }
  if (problems.length > 0) return { state: 'drifted', summary: `CRD guard drifted: ${problems[0]}`, problems };
  if (desired.length === 0) return { state: 'absent', summary: 'CRD guard off', problems };
  const parts: string[] = [];
  if (options.protectCrds && options.protectedCrdGroups.length > 0) {
    parts.push(`${options.protectedCrdGroups.length} CRD group${options.protectedCrdGroups.length === 1 ? '' : 's'}`);
  }
  if (options.protectProfiles) parts.push('Profiles');
  return { state: 'active', summary: `guard active (${parts.join(', ')})`, problems };
}
