// The recover-backups action: backup-immutability's undo, as the CLI's recover (src/cli/commands/recover.ts). Every
// retained version under the location that a delete marker hides or a newer version covers becomes current again.
import type { ActionContext } from '../action-context.ts';
import { describeInline } from '../../errors/index.ts';

export async function run(ctx: ActionContext<'recover-backups'>): Promise<void> {
  const s3 = await ctx.s3();
  if (!s3.immutability) ctx.fail('recover-backups works on immutable backups, and backup-immutability is not set; nothing was changed.');
  const { openBackupStore } = await import('../../store/open.ts');
  const store = openBackupStore(s3);
  let outcome;
  try {
    outcome = await store.uncoverRetained(new Date());
  } catch (error) {
    ctx.fail(`The retained versions could not be recovered: ${describeInline(error)}.`);
  }
  if (!outcome) return;
  await ctx.setResults({
    recovered: outcome.uncovered,
    hidden: outcome.hidden,
    overwritten: outcome.overwritten,
    'listed-again': outcome.hiddenBackups.join(',') || 'none',
    ...(outcome.refused.length > 0 ? { 'not-recovered': outcome.refused } : {}),
  });
  if (outcome.refused.length > 0) ctx.fail(`${outcome.refused.length} retained object(s) could not be recovered: a version written over them is retained too (see not-recovered).`);
}
