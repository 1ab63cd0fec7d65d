// What Juju tells the charm about this dispatch, read once from the environment and validated.
import { z } from 'zod';
import { KfuError } from '../errors/index.ts';

const nonEmpty = z.string().min(1);
const optional = z.string().optional().transform((value) => (value ? value : undefined));

const EnvSchema = z.object({
  JUJU_DISPATCH_PATH: nonEmpty,
  JUJU_UNIT_NAME: z.string().regex(/^[a-z][a-z0-9-]*\/\d+$/, 'is not a unit name like kubeflow-upgrader/0'),
  JUJU_CHARM_DIR: optional,
  CHARM_DIR: optional,
  JUJU_MODEL_NAME: z.string().default(''),
  JUJU_MODEL_UUID: z.string().default(''),
  JUJU_VERSION: z.string().default(''),
  JUJU_HOOK_NAME: optional,
  JUJU_CONTEXT_ID: optional,
  JUJU_RELATION: optional,
  JUJU_RELATION_ID: optional,
  JUJU_REMOTE_UNIT: optional,
  JUJU_REMOTE_APP: optional,
  JUJU_DEPARTING_UNIT: optional,
  JUJU_ACTION_NAME: optional,
  JUJU_ACTION_UUID: optional,
  JUJU_SECRET_ID: optional,
  JUJU_SECRET_LABEL: optional,
  JUJU_SECRET_REVISION: optional,
  KUBECONFIG: optional,
  KUBEFLOW_UPGRADER_PEBBLE_SOCKET: optional,
  KUBEFLOW_UPGRADER_WORKLOAD_ROOT: optional,
  KUBEFLOW_UPGRADER_METRICS_PORT: optional,
});

export interface RelationInfo {
  endpoint: string;
  id: string;
  remoteUnit?: string;
  remoteApp?: string;
  departingUnit?: string;
}

export interface DispatchContext {
  /** `hooks/<name>` or `actions/<name>` */
  dispatchPath: string;
  kind: 'hook' | 'action';
  /** the hook or action name */
  event: string;
  unitName: string;
  appName: string;
  charmDir: string;
  model: { name: string; uuid: string };
  jujuVersion: string;
  relation?: RelationInfo;
  action?: { name: string; uuid?: string };
  secret?: { id: string; label?: string; revision?: number };
  kubeconfig?: string;
  /**
   * Where the workload container is reached when not where Juju puts it: the demo and the tests run Pebble on this
   * machine (KUBEFLOW_UPGRADER_PEBBLE_SOCKET, KUBEFLOW_UPGRADER_WORKLOAD_ROOT, KUBEFLOW_UPGRADER_METRICS_PORT).
   */
  workload: { socket?: string; root?: string; metricsPort?: number };
}

export class DispatchContextError extends KfuError {
  static override readonly errorId = 'DispatchContextError';
  constructor(sentence: string) {
    super(sentence, { kind: 'input' });
  }
}

export function parseDispatchContext(env: NodeJS.ProcessEnv, cwd = process.cwd()): DispatchContext {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DispatchContextError(`The Juju environment is incomplete: ${issue?.path.join('.')} ${issue?.message ?? 'is invalid'}.`);
  }
  const e = parsed.data;
  const match = /^(hooks|actions)\/([a-z0-9][a-z0-9-]*)$/.exec(e.JUJU_DISPATCH_PATH);
  if (!match) throw new DispatchContextError(`JUJU_DISPATCH_PATH "${e.JUJU_DISPATCH_PATH}" is neither hooks/<name> nor actions/<name>.`);
  const kind = match[1] === 'hooks' ? 'hook' : 'action';
  const event = match[2]!;
  const context: DispatchContext = {
    dispatchPath: e.JUJU_DISPATCH_PATH,
    kind,
    event,
    unitName: e.JUJU_UNIT_NAME,
    appName: e.JUJU_UNIT_NAME.split('/')[0]!,
    charmDir: e.JUJU_CHARM_DIR ?? e.CHARM_DIR ?? cwd,
    model: { name: e.JUJU_MODEL_NAME, uuid: e.JUJU_MODEL_UUID },
    jujuVersion: e.JUJU_VERSION,
    workload: {},
  };
  if (e.JUJU_RELATION_ID) {
    context.relation = {
      endpoint: e.JUJU_RELATION ?? e.JUJU_RELATION_ID.split(':')[0]!,
      id: e.JUJU_RELATION_ID,
      ...(e.JUJU_REMOTE_UNIT ? { remoteUnit: e.JUJU_REMOTE_UNIT } : {}),
      ...(e.JUJU_REMOTE_APP ? { remoteApp: e.JUJU_REMOTE_APP } : {}),
      ...(e.JUJU_DEPARTING_UNIT ? { departingUnit: e.JUJU_DEPARTING_UNIT } : {}),
    };
  }
  if (kind === 'action') context.action = { name: e.JUJU_ACTION_NAME ?? event, ...(e.JUJU_ACTION_UUID ? { uuid: e.JUJU_ACTION_UUID } : {}) };
  if (e.JUJU_SECRET_ID) {
    const revision = Number(e.JUJU_SECRET_REVISION);
    context.secret = {
      id: e.JUJU_SECRET_ID,
      ...(e.JUJU_SECRET_LABEL ? { label: e.JUJU_SECRET_LABEL } : {}),
      ...(Number.isInteger(revision) && e.JUJU_SECRET_REVISION ? { revision } : {}),
    };
  }
  if (e.KUBECONFIG) context.kubeconfig = e.KUBECONFIG;
  const port = Number(e.KUBEFLOW_UPGRADER_METRICS_PORT);
  context.workload = {
    ...(e.KUBEFLOW_UPGRADER_PEBBLE_SOCKET ? { socket: e.KUBEFLOW_UPGRADER_PEBBLE_SOCKET } : {}),
    ...(e.KUBEFLOW_UPGRADER_WORKLOAD_ROOT ? { root: e.KUBEFLOW_UPGRADER_WORKLOAD_ROOT } : {}),
    ...(Number.isInteger(port) && port > 0 ? { metricsPort: port } : {}),
  };
  return context;
}
