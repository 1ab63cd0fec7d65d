// The snapshot-profiles action: Profiles and their KFAM contributors only, as a backup of their own.
import type { ActionContext } from '../action-context.ts';
import { actionLease, backupRequest } from '../backup-steps.ts';
import { describeBackupFailure } from '../backup-failure.ts';
import { refuseUnlessImmutable } from './backup-state.ts';

export async function run(ctx: ActionContext<'snapshot-profiles'>): Promise<void> {
  const s3 = await ctx.s3();
  await refuseUnlessImmutable(ctx, s3);
  const kube = await ctx.kube();
  const [{ runBackup }, { openBackupStore }] = await Promise.all([import('../../backup/engine.ts'), import('../../store/open.ts')]);
  let outcome;
  try {
    outcome = await runBackup(
      kube,
      openBackupStore(s3),
      backupRequest('snapshot-profiles', ctx.config, { name: ctx.modelName }, {
        profiles: ctx.params.profiles,
        includeVolumes: false,
        includeControlPlane: false,
        progress: (message) => ctx.progress(message),
        lease: actionLease(ctx.charm.context.unitName),
      }),
    );
  } catch (error) {
    ctx.fail(describeBackupFailure(error));
  }
  await ctx.setResults({
    'backup-id': outcome.backupId,
    location: outcome.location,
    profiles: outcome.profiles,
    contributors: outcome.contributors,
    objects: outcome.objects,
    'duration-seconds': outcome.durationSeconds,
  });
}
