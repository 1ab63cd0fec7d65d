// The verify-backup action: downloads a backup and re-checks every checksum; each problem is reported.
import { ActionFailure, type ActionContext } from '../action-context.ts';
import { describeInline } from '../../errors/index.ts';
import { NotAuthenticatedError, refuseAllowWithLatest } from '../../archive/authenticate.ts';
import { actionTrust } from '../trust.ts';

export async function run(ctx: ActionContext<'verify-backup'>): Promise<void> {
  const s3 = await ctx.s3();
  const [{ verifyBackup, latestWholeBackup, latestRefusal }, { openBackupStore }] = await Promise.all([import('../../catalog/verify.ts'), import('../../store/open.ts')]);
  const store = openBackupStore(s3);
  const trust = actionTrust(await ctx.encryptionKey(), ctx.params['allow-unauthenticated']);
  let id = ctx.params['backup-id'];
  try {
    refuseAllowWithLatest(id, trust);
    if (id === 'latest') {
      // the same choice restore-state, list-backups and pre-upgrade-check make: with a key, the newest authenticated one
      const newest = await latestWholeBackup(store, trust);
      if (!newest) ctx.fail(await latestRefusal(store, 'verify', trust));
      id = newest.listing.id;
      if (newest.warning) await ctx.progress(newest.warning);
      for (const note of newest.notes) await ctx.progress(note);
    }
    await ctx.progress(`verifying backup ${id}`);
    const report = await verifyBackup(store, id, trust);
    await ctx.setResults({
      'backup-id': id,
      status: report.status,
      authentication: report.authentication.note,
      sealing: report.sealing,
      ...(report.volumeData ? { 'volume-data': report.volumeData } : {}),
      'objects-checked': report.objectsChecked,
      problems: report.problems.map((p) => p.message),
    });
    if (report.status === 'corrupt') ctx.fail(`Backup ${id} is corrupt (${report.problems.length} problem(s), listed in the results); do not restore from it.`);
  } catch (error) {
    if (ActionFailure.isInstance(error)) throw error;
    // already one sentence naming the backup and the case
    if (NotAuthenticatedError.isInstance(error)) ctx.fail(error.message);
    ctx.fail(`Backup ${id} could not be verified: ${describeInline(error)}.`);
  }
}
