// The charm's program: one dispatch of one hook or action. Returns the exit code for Juju.
import { DispatchContextError, parseDispatchContext, type DispatchContext } from '../juju/context.ts';
import { HookTools, processRunner, type ToolRunner } from '../juju/hook-tools.ts';
import { Redactor } from '../juju/redact.ts';
import { dispatch } from '../juju/router.ts';
import { hookHandlers } from './hooks.ts';
import { CharmRuntime } from './runtime.ts';
import { describeUnexpected } from './unexpected.ts';
import { config as zodConfig } from 'zod';

// A hook parses a few small documents once (the dispatch context, config, relation data) and exits. zod's default
// compiles a parser per object schema with new Function on first use (and probes navigator to learn whether it may):
// work no compile cache keeps, and more than a parse this small costs.
zodConfig({ jitless: true });

/** `runner` runs the hook tools: child processes under Juju; tests pass one that answers in process (runEvent). */
export async function main(env: NodeJS.ProcessEnv, runner: ToolRunner = processRunner): Promise<number> {
  let context: DispatchContext;
  try {
    context = parseDispatchContext(env);
  } catch (error) {
    process.stderr.write(`${error instanceof DispatchContextError ? error.message : describeUnexpected(error)}\n`);
    return 1;
  }
  const redactor = new Redactor();
  const charm = new CharmRuntime(context, new HookTools(runner, redactor), redactor);
  try {
    return await dispatch(context, {
      hooks: hookHandlers(charm),
      // Loaded only for an action: the params' schemas are built when their module loads, which hooks never need.
      action: async () => (await import('./run-action.ts')).runAction(charm),
      // Events the charm does not act on (e.g. relation-departed, stop).
      otherHook: async () => 0,
    });
  } catch (error) {
    const sentence = `${context.event} failed: ${describeUnexpected(error)}`;
    await charm.log('ERROR', sentence);
    await charm.log('DEBUG', error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.stderr.write(`${redactor.redact(sentence)}\n`);
    return 1;
  }
}
