// Runs the REAL ./dispatch of a charm directory for one event, with the fake hook tools on PATH:
// state in → event → state out, the shape of ops.testing.
import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFakeTools } from './fake-tools.ts';
import { startToolServer } from './tool-server.ts';
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

export interface DispatchOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  state: FakeJujuState;
  /** wall time of the dispatch process, for benchmarks only */
  wallMs: number;
}

let toolsDir: string | undefined;
/** The folder of fake hook tools, made once per test process. */
export function toolsBin(): string {
  toolsDir ??= installFakeTools(mkdtempSync(join(tmpdir(), 'fake-juju-tools-')));
  return toolsDir;
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

export async function runDispatch(charmDir: string, state: FakeJujuState, event: DispatchEvent): Promise<DispatchOutcome> {
  const work = mkdtempSync(join(tmpdir(), 'fake-juju-home-'));
  // Juju gives hooks a small, fixed environment: nothing of the test process leaks in (KUBECONFIG only if asked).
  const hookEnv = {
    PATH: `${toolsBin()}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    HOME: work,
    ...eventEnvironment(state, charmDir, event),
  };
  // The fake unit agent holds the state while the hook runs; its tools on PATH are clients of it.
  const agent = await startToolServer(state, hookEnv);
  try {
    const started = performance.now();
    const result = await execa(join(charmDir, 'dispatch'), [], { cwd: charmDir, env: { ...hookEnv, ...agent.env }, extendEnv: false, reject: false, timeout: 60_000 });
    const wallMs = performance.now() - started;
    return {
      exitCode: result.exitCode ?? -1,
      stdout: String(result.stdout ?? ''),
      stderr: String(result.stderr ?? ''),
      state: agent.state(),
      wallMs,
    };
  } finally {
    await agent.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The status the unit ended with (the last unit status-set), or undefined. */
export function unitStatus(state: FakeJujuState): { status: string; message: string } | undefined {
  const last = state.statusHistory.filter((s) => !s.application).at(-1);
  return last ? { status: last.status, message: last.message } : undefined;
}
