// What a hook is given besides its tools: the event it runs for, and the environment Juju sets for it (dispatch path,
// unit, model, relation, remote unit, secret), and how the status it ended with is read back from the state.
// From upstream: juju/juju internal/worker/uniter/runner/context (HookVars: JUJU_DISPATCH_PATH, JUJU_RELATION_ID,
// JUJU_REMOTE_APP, JUJU_SECRET_ID ...). Pure: both the real ./dispatch (harness.ts) and runEvent (run-event.ts) use it.
import type { FakeJujuState, FakeRelation } from './state.ts';

export interface DispatchEvent {
  /** `install`, `s3-credentials-relation-changed`, ... or `actions/<name>`; `hooks/<name>` is accepted too */
  event: string;
  /** for relation hooks: the relation id (must exist in the state) */
  relation?: string;
  remoteUnit?: string;
  /** for secret hooks */
  secret?: { id: string; label?: string; revision?: number };
  env?: Record<string, string>;
}

export function eventEnvironment(state: FakeJujuState, charmDir: string, event: DispatchEvent): Record<string, string> {
  const isAction = event.event.startsWith('actions/');
  const name = event.event.replace(/^(hooks|actions)\//, '');
  const env: Record<string, string> = {
    JUJU_DISPATCH_PATH: isAction ? event.event : `hooks/${name}`,
    JUJU_CHARM_DIR: charmDir,
    CHARM_DIR: charmDir,
    JUJU_UNIT_NAME: state.unit,
    JUJU_MODEL_NAME: 'kubeflow',
    JUJU_MODEL_UUID: '6f9a2b1c-1111-4a3b-8c3d-000000000001',
    JUJU_VERSION: '3.6.4',
    JUJU_HOOK_NAME: isAction ? '' : name,
    JUJU_CONTEXT_ID: `${state.unit}-${name}-1`,
  };
  if (isAction) {
    env.JUJU_ACTION_NAME = name;
    env.JUJU_ACTION_UUID = '1';
  }
  if (event.relation) {
    const relation: FakeRelation | undefined = state.relations.find((r) => r.id === event.relation);
    if (!relation) throw new Error(`the state has no relation ${event.relation}`);
    env.JUJU_RELATION = relation.endpoint;
    env.JUJU_RELATION_ID = relation.id;
    env.JUJU_REMOTE_APP = relation.remoteApp;
    const unit = event.remoteUnit ?? relation.remoteUnits[0];
    if (unit) env.JUJU_REMOTE_UNIT = unit;
  }
  if (event.secret) {
    env.JUJU_SECRET_ID = event.secret.id;
    if (event.secret.label) env.JUJU_SECRET_LABEL = event.secret.label;
    if (event.secret.revision !== undefined) env.JUJU_SECRET_REVISION = String(event.secret.revision);
  }
  return { ...env, ...event.env };
}

/** The status the unit ended with (the last unit status-set), or undefined. */
export function unitStatus(state: FakeJujuState): { status: string; message: string } | undefined {
  const last = state.statusHistory.filter((s) => !s.application).at(-1);
  return last ? { status: last.status, message: last.message } : undefined;
}
