// The prune-backups action: keeps the newest `backup-retention` complete backups (always the newest one; with
// `encryption-key`, authenticated ones only), deletes older ones and incomplete folders idle for over an hour, aborts
// stale multipart uploads and removes mover Jobs and Secrets a killed run left behind. A deleted backup's restic
// snapshots are forgotten and each repository pruned once (src/prune/restic.ts), never beside a backup being written
// or into a repository a live restic holds. With dry-run it reports the same lists and what would be forgotten, and
// changes nothing. The CLI's prune runs the same engine (src/prune/engine.ts).
import type { ActionContext } from '../action-context.ts';
import { describeInline } from '../../errors/index.ts';
import { ActionFailure } from '../action-context.ts';
import { moverConfig } from '../backup-steps.ts';
import { charmWording } from '../remedy-wording.ts';
import { refuseUnlessImmutable } from './backup-state.ts';
import { retainedSentence } from '../../prune/retention.ts';

export async function run(ctx: ActionContext<'prune-backups'>): Promise<void> {
  const s3 = await ctx.s3();
  await refuseUnlessImmutable(ctx, s3);
  const [{ pruneBackups }, { moverPortOf }, { openBackupStore }, { PruneRefusedError }, { resticRepositoriesOf }, { resticEngine }] = await Promise.all([
    import('../../prune/engine.ts'), import('../../prune/movers.ts'), import('../../store/open.ts'), import('../../prune/restic.ts'),
    import('../../volumes/restic/prune-repositories.ts'), import('../../volumes/engines.ts'),
  ]);
  const store = openBackupStore(s3);
  const dryRun = ctx.params['dry-run'];
  const notes: string[] = [];
  const encryptionKey = await ctx.encryptionKey();
  let movers;
  let restic;
  try {
    const kube = await ctx.kube();
    movers = moverPortOf(kube);
    const config = moverConfig(ctx.config);
    restic = resticRepositoriesOf(kube, s3, encryptionKey, {
      image: resticEngine.imageFor(config), startTimeoutSeconds: config.startTimeoutSeconds, resources: config.resources,
      // the control-plane copies' namespace: where a deleted profile's repository is pruned from
      fallbackNamespace: ctx.modelName,
    });
  } catch (error) {
    if (ActionFailure.isInstance(error)) throw error;
    notes.push('Volume-mover leftovers were not checked: the cluster could not be reached.');
  }
  let outcome;
  try {
    outcome = await pruneBackups(store, {
      retention: ctx.config['backup-retention'],
      dryRun,
      encryptionKey,
      deleteUnauthenticated: ctx.params['delete-unauthenticated'],
      removeForeignLocks: ctx.params['remove-foreign-locks'],
      wording: charmWording,
      ...(movers ? { movers } : {}),
      ...(restic ? { restic } : {}),
      progress: (message) => ctx.progress(message),
    });
  } catch (error) {
    if (PruneRefusedError.isInstance(error)) ctx.fail(error.message);
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
    reasons: Object.fromEntries([
      ...outcome.deleted.map((d) => [d.id, `${verb}: ${d.reason}`]), ...outcome.kept.map((k) => [k.id, `kept: ${k.why}`]),
      ...outcome.untrusted.map((u) => [u.id, `not authenticated, left as it is: ${u.why}`]),
    ]),
    // complete folders the encryption-key does not vouch for: never counted, kept in a real one's stead, or deleted unasked
    untrusted: outcome.untrusted.map((u) => u.id).join(',') || 'none',
    // what prune found and did not obey (folders, Jobs, locks), each with why
    ignored: outcome.ignored.map((i) => `${i.what}: ${i.why}`),
    ...(outcome.removedLocks.length > 0 ? { 'removed-locks': outcome.removedLocks } : {}),
    // backup-immutability: backups beyond retention the bucket still retains, each with the sentence of when it can go
    ...(outcome.retained.length > 0 ? { retained: Object.fromEntries(outcome.retained.map((r) => [r.id, retainedSentence(r)])) } : {}),
    ...(outcome.versions ? { 'old-versions-deleted': outcome.versions.versionsDeleted + outcome.versions.markersDeleted, 'old-version-bytes-freed': outcome.versions.bytesFreed } : {}),
    'aborted-uploads': outcome.abortedUploads,
    'removed-mover-jobs': outcome.movers.jobs,
    'removed-mover-secrets': outcome.movers.secrets,
    // per restic repository: what was (dry run: would be) forgotten, and the bytes its prune freed in the bucket
    restic: outcome.restic.map((r) => ({
      repository: r.repository,
      backups: r.backups.join(','),
      [dryRun ? 'snapshots-to-forget' : 'snapshots-forgotten']: r.snapshotsForgotten,
      ...(r.bytesFreed !== undefined ? { 'bytes-before': r.bytesBefore, 'bytes-after': r.bytesAfter, 'bytes-freed': r.bytesFreed } : {}),
      ...(r.resticTotal ? { 'restic-total-prune': r.resticTotal } : {}),
    })),
    notes: [...notes, ...outcome.notes],
  });
}
