// Kinds whose status a restore writes back after the object: their controllers decide from the status whether the
// work is done, so an object restored without it is work to do again. Velero has --status-include-resources for the
// same reason. Each entry of the kinds table (known-kinds.ts) names the upstream code that reads the status.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';
import { knownKinds } from './known-kinds.ts';

export interface StatusKind {
  group: string;
  kind: string;
  /** the upstream code that decides from the status, and what it decides */
  why: string;
  /**
   * Created suspended (`spec.runPolicy.suspend`) and resumed once the status is written: the training operator
   * starts pods on its first reconcile of a job without status, which can come before the status write; a
   * suspended job gets no pods (job.go, IsJobSuspended), and a finished one none either once resumed. Katib needs no
   * such guard: its first reconcile of a new Experiment only marks it Created.
   */
  suspendUntilStatus?: boolean;
}

/** the kinds of the one kinds table (known-kinds.ts) that have a status entry */
export const statusKinds: readonly StatusKind[] = knownKinds.flatMap((k) => (k.status ? [{ group: k.group, kind: k.kind, ...k.status }] : []));

const byGroupKind = new Map(statusKinds.map((k) => [`${k.group}/${k.kind}`, k]));

function statusKindOf(object: KubeObject): StatusKind | undefined {
  return byGroupKind.get(`${groupOf(object.apiVersion)}/${object.kind}`);
}

/** true when a restore writes this object's archived status back after creating it */
export function restoresStatus(object: KubeObject): boolean {
  return statusKindOf(object) !== undefined;
}

/**
 * For a kind created suspended until its status is written: the object to create (suspended) and the merge patch
 * that gives it back its own spec.runPolicy afterwards. Undefined when the kind needs no guard or the object is
 * suspended already.
 */
export function suspendedForStatus(object: KubeObject): { create: KubeObject; resume: unknown } | undefined {
  if (!statusKindOf(object)?.suspendUntilStatus) return undefined;
  const spec = (object.spec ?? {}) as { runPolicy?: Record<string, unknown> };
  if (spec.runPolicy?.suspend === true) return undefined;
  const create = { ...object, spec: { ...spec, runPolicy: { ...(spec.runPolicy ?? {}), suspend: true } } };
  // merge patch: null removes what the archived object did not have
  const resume = { spec: { runPolicy: spec.runPolicy === undefined ? null : { suspend: spec.runPolicy.suspend ?? null } } };
  return { create, resume };
}
