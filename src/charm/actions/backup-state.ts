// The backup-state action. Its engine plugs in here; the router and ActionContext stay as they are.
import type { ActionContext } from '../action-context.ts';
import { notAvailableYet } from './not-available.ts';

export async function run(ctx: ActionContext<'backup-state'>): Promise<void> {
  ctx.fail(notAvailableYet(ctx.action, 'the backup engine'));
}
