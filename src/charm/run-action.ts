// Runs one action: params and config checked first (bad input changes nothing), then the action's module.
// Every way out is one sentence through action-fail and a non-zero exit, or success with exit 0.
import { createActionContext, ActionFailure, rateLimitedProgress, type ActionContext } from './action-context.ts';
import { actionModules, type ActionModule } from './actions/index.ts';
import { isActionName, parseParams, type ActionName } from './actions/params.ts';
import type { CharmRuntime } from './runtime.ts';
import { describeUnexpected } from './unexpected.ts';

export async function runAction(charm: CharmRuntime): Promise<number> {
  const name = charm.context.action?.name ?? charm.context.event;
  const failWith = async (sentence: string): Promise<number> => {
    await charm.tools.actionFail(sentence);
    return 1;
  };
  if (!isActionName(name)) return failWith(`This charm has no action "${name}".`);
  const progress = rateLimitedProgress((message) => charm.tools.actionLog(message));
  try {
    const params = parseParams(name, await charm.tools.actionGet());
    if (!params.ok) return failWith(params.problem);
    const config = await charm.config();
    if (!config.ok) return failWith(`The charm's ${config.problem}; fix it with juju config and retry.`);
    const module = (await actionModules[name]()) as ActionModule<ActionName>;
    const ctx = createActionContext(charm, name, params.params, config.config, progress) as ActionContext<ActionName>;
    await module.run(ctx);
    await progress.flush();
    return 0;
  } catch (error) {
    await progress.flush().catch(() => undefined);
    if (error instanceof ActionFailure) return failWith(error.message);
    await charm.log('DEBUG', `${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return failWith(`${name} stopped on an unexpected error (${describeUnexpected(error)}); see juju debug-log for details.`);
  }
}
