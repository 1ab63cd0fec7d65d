// The restore-state action: params and config in, the restore engine run, counts (or the plan, on dry-run) out.
// Every stop is one sentence: the engine's own errors already are, anything else goes to the runner's fallback.
import { charmWording } from '../remedy-wording.ts';
import type { ActionContext } from '../action-context.ts';
import { openBackupStore } from '../../store/open.ts';
import { runRestore } from '../../restore/engine.ts';
import { RestoreInputError, RestoreRefusedError, RestoreStoppedError } from '../../restore/errors.ts';
import { volumeRestoreStep } from '../../volumes/steps.ts';
import { VolumeMoveError } from '../../volumes/mover.ts';
import { controlPlaneImages, moverConfig } from '../backup-steps.ts';
import { readControlPlane } from '../control-plane.ts';
import { controlPlaneRestoreStep } from '../../controlplane/steps.ts';
import { actionTrust } from '../trust.ts';
import { ControlPlaneError } from '../../controlplane/engine.ts';

/** A restore (not a dry run) leaves how it ended for the workload service's metrics, whichever way it ended. */
export async function run(ctx: ActionContext<'restore-state'>): Promise<void> {
  if (ctx.params['dry-run']) return restore(ctx);
  const started = Date.now();
  let result: 'succeeded' | 'failed' = 'failed';
  try {
    await restore(ctx);
    result = 'succeeded';
  } finally {
    const { recordRestore } = await import('../workload.ts');
    await recordRestore(ctx.charm, { at: new Date().toISOString(), result, durationSeconds: (Date.now() - started) / 1000 });
  }
}

async function restore(ctx: ActionContext<'restore-state'>): Promise<void> {
  const params = ctx.params;
  // Checked first: a bucket in another region fails here, not in a Job halfway through.
  const s3 = await ctx.s3ForJobs();
  const kube = await ctx.kube();
  const trust = actionTrust(await ctx.encryptionKey(), params['allow-unauthenticated']);
  const store = openBackupStore(s3);
  // AWS itself has no endpoint in the relation: the movers then use its regional endpoint (moverS3Settings).
  const volumes = params['include-volumes'] ? volumeRestoreStep(kube, s3, { ...moverConfig(ctx.config), jobNamespace: ctx.modelName }, { encryptionKey: trust.encryptionKey }) : undefined;
  // Opt-in only: loading a dump overwrites the live KFP and Katib databases and MinIO buckets.
  const controlPlane = params['include-control-plane']
    ? controlPlaneRestoreStep(kube, s3, controlPlaneImages(ctx.config), await readControlPlane(ctx.charm, ctx.config), ctx.modelName, trust.encryptionKey)
    : undefined;
  let outcome;
  try {
    outcome = await runRestore(kube, store, {
      wording: charmWording,
      backupId: params['backup-id'],
      profiles: params.profiles,
      namespaces: params.namespaces,
      conflictPolicy: params['conflict-policy'],
      dryRun: params['dry-run'],
      includeVolumes: params['include-volumes'],
      trust,
      waitTimeoutMs: ctx.config['restore-wait-timeout'] * 1000,
      protectedNamespaces: [ctx.modelName],
      skipRefused: params['skip-refused'],
      skipUnserved: params['skip-unserved'],
      includeResources: ctx.config['include-resources'],
      excludeResources: ctx.config['exclude-resources'],
      storageClassMap: params['storage-class-map'],
      ...(volumes ? { volumes } : {}),
      ...(controlPlane ? { controlPlane } : {}),
      progress: (message) => ctx.progress(message),
    });
  } catch (error) {
    if (error instanceof RestoreRefusedError) {
      await ctx.setResults({ offenders: error.offenders });
      ctx.fail(error.message);
    }
    if (error instanceof RestoreInputError || error instanceof RestoreStoppedError) ctx.fail(error.message);
    // A database or bucket copy that failed: its own sentence says which and why.
    // A PVC that could not be filled keeps its fill mark: the rerun fills it, and only it.
    if (VolumeMoveError.isInstance(error)) ctx.fail(`${error.message.replace(/\.$/, '')}; fix that and rerun restore-state, which fills every PVC still waiting for its data.`);
    if (ControlPlaneError.isInstance(error)) ctx.fail(`${error.message} Profiles and namespaced objects were not restored; fix it and rerun.`);
    throw error;
  }
  for (const warning of outcome.warnings) await ctx.log('WARNING', warning);
  await ctx.setResults({
    'backup-id': outcome.backupId,
    authentication: outcome.authentication,
    ...outcome.totals,
    ...(outcome.dryRun ? { plan: outcome.plan } : {}),
    ...(outcome.warnings.length ? { warnings: outcome.warnings } : {}),
    ...(outcome.storageClasses.length ? { 'storage-classes': outcome.storageClasses } : {}),
    ...(outcome.recurringRuns.length ? { 'recurring-runs': outcome.recurringRuns } : {}),
    ...(outcome.skippedObjects.length ? { 'skipped-objects': capped(outcome.skippedObjects) } : {}),
    ...(outcome.unserved.length ? { unserved: outcome.unserved } : {}),
    ...(outcome.mappings.length ? { mapped: outcome.mappings } : {}),
    ...(outcome.dropped.length ? { dropped: capped(outcome.dropped) } : {}),
    ...(outcome.dryRun && outcome.failures.length ? { refusals: outcome.failures } : {}),
    ...(outcome.predicted.length ? { predicted: capped(outcome.predicted) } : {}),
    ...(outcome.refused.length ? { refused: outcome.refused.length > 50 ? [...outcome.refused.slice(0, 50), `and ${outcome.refused.length - 50} more`] : outcome.refused } : {}),
    ...(outcome.volumes.note ? { volumes: outcome.volumes.note } : { volumes: `${outcome.volumes.restored} PVC(s) filled` }),
    'control-plane': outcome.controlPlane.note ?? (params['include-control-plane'] ? `${outcome.controlPlane.restored} part(s) restored` : 'not restored (include-control-plane=false)'),
    'duration-seconds': outcome.durationSeconds,
  });
  if (outcome.totals.failed > 0 && outcome.dryRun) {
    ctx.fail(`The dry run found ${outcome.totals.failed} object(s) the target would refuse (first: ${outcome.failures[0] ?? 'see the results'}); nothing was written.`);
  }
  if (outcome.totals.failed > 0) {
    ctx.fail(`${outcome.totals.failed} object(s) could not be restored (first: ${outcome.failures[0] ?? 'see the results'}); fix the cause and rerun — objects already restored are left as they are.`);
  }
}

/** a list for the results: at most 50 entries, then how many more */
function capped(list: readonly string[]): string[] {
  return list.length > 50 ? [...list.slice(0, 50), `and ${list.length - 50} more`] : [...list];
}
