// The verify-backup action: downloads a backup and re-checks every checksum; each problem is reported.
import { ActionFailure, type ActionContext } from '../action-context.ts';
import { describeInline } from '../../errors/index.ts';
import { NotAuthenticatedError } from '../../archive/authenticate.ts';

export async function run(ctx: ActionContext<'verify-backup'>): Promise<void> {
  const s3 = await ctx.s3();
  const [{ verifyBackup, latestWholeBackup }, { openBackupStore }] = await Promise.all([import('../../archive/verify.ts'), import('../../store/open.ts')]);
  const store = openBackupStore(s3);
  const encryptionKey = await ctx.encryptionKey();
  let id = ctx.params['backup-id'];
  try {
    if (id === 'latest') {
      const newest = await latestWholeBackup(store);
      if (!newest) ctx.fail(`There is no complete backup in ${store.url()} to verify.`);
      id = newest.listing.id;
      if (newest.warning) await ctx.progress(newest.warning);
    }
    await ctx.progress(`verifying backup ${id}`);
    const report = await verifyBackup(store, id, { encryptionKey, allowUnauthenticated: ctx.params['allow-unauthenticated'], allowHint: 'allow-unauthenticated=true' });
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
