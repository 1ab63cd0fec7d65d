// From JUJU_DISPATCH_PATH to the code that handles it. Hooks without a handler are acknowledged and ignored
// (Juju sends many events a charm does not care about); an unknown action is a user-visible failure.
import type { DispatchContext } from './context.ts';

export type Handler = (context: DispatchContext) => Promise<number | void>;

export interface Routes {
  hooks: Record<string, Handler>;
  /** Called for an action name; must itself fail the action when the name is unknown. */
  action: Handler;
  /** Called for hooks with no entry (e.g. relation hooks of endpoints not handled yet). */
  otherHook?: Handler;
}

export async function dispatch(context: DispatchContext, routes: Routes): Promise<number> {
  if (context.kind === 'action') return (await routes.action(context)) ?? 0;
  const handler = routes.hooks[context.event] ?? routes.otherHook;
  if (!handler) return 0;
  return (await handler(context)) ?? 0;
}
