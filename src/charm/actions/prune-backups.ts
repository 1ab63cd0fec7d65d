// The prune-backups action: keeps the newest `backup-retention` complete backups (always the newest one), deletes
// older ones and incomplete folders idle for over an hour, aborts stale multipart uploads and removes mover Jobs and
// Secrets a killed run left behind. With dry-run it reports the same lists and changes nothing.
import type { ActionContext } from '../action-context.ts';
import { describeInline } from '../../errors/index.ts';
import { ActionFailure } from '../action-context.ts';

export async function run(ctx: ActionContext<'prune-backups'>): Promise<void> {
  const s3 = await ctx.s3();
  const [{ pruneBackups }, { moverPortOf }, { openBackupStore }] = await Promise.all([
    import('../../prune/engine.ts'), import('../../prune/movers.ts'), import('../../store/open.ts'),
  ]);
  const store = openBackupStore(s3);
  const dryRun = ctx.params['dry-run'];
  const notes: string[] = [];
  let movers;
  try {
    movers = moverPortOf(await ctx.kube());
  } catch (error) {
    if (ActionFailure.isInstance(error)) throw error;
    notes.push('Volume-mover leftovers were not checked: the cluster could not be reached.');
  }
  let outcome;
  try {
    outcome = await pruneBackups(store, {
      retention: ctx.config['backup-retention'],
      dryRun,
      ...(movers ? { movers } : {}),
      progress: (message) => ctx.progress(message),
    });
  } catch (error) {
    ctx.fail(`Pruning ${store.url('backups/')} stopped: ${describeInline(error)}; rerun prune-backups once that is fixed (a half-pruned backup is left without its marker and removed next time).`);
  }
  const verb = dryRun ? 'would delete' : 'deleted';
  await ctx.setResults({
    'dry-run': dryRun,
    // Comma lists, so `juju run … prune-backups` shows both lists whole even when empty.
    deleted: outcome.deleted.map((d) => d.id).join(',') || 'none',
    kept: outcome.kept.map((k) => k.id).join(',') || 'none',
    'deleted-count': outcome.deleted.length,
    'kept-count': outcome.kept.length,
    reasons: Object.fromEntries([...outcome.deleted.map((d) => [d.id, `${verb}: ${d.reason}`]), ...outcome.kept.map((k) => [k.id, `kept: ${k.why}`])]),
    'aborted-uploads': outcome.abortedUploads,
    'removed-mover-jobs': outcome.movers.jobs,
    'removed-mover-secrets': outcome.movers.secrets,
    notes: [...notes, ...outcome.notes],
  });
}
