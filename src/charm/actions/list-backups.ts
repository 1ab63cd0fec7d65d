// The list-backups action: backups with their commit marker, newest first, from their manifests, each with the phase
// its marker records (only Completed and PartiallyFailed ones can be restored).
import type { ActionContext } from '../action-context.ts';
import { describeInline } from '../../errors/index.ts';
import { charmWording } from '../remedy-wording.ts';

export async function run(ctx: ActionContext<'list-backups'>): Promise<void> {
  const s3 = await ctx.s3();
  // With the key, each listed backup's HMAC is checked; without it, one that carries an HMAC is shown as unchecked.
  const encryptionKey = await ctx.encryptionKey();
  const [{ listBackups }, { openBackupStore }] = await Promise.all([import('../../catalog/verify.ts'), import('../../store/open.ts')]);
  let backups;
  let running;
  let covered;
  try {
    const store = openBackupStore(s3);
    const { surveyFolders } = await import('../../prune/folders.ts');
    backups = await listBackups(store, { limit: ctx.params.limit, encryptionKey });
    // backups being written, as their signed run records prove it (the lease: src/backup/lease.ts); after the listing,
    // whose first request learns the bucket's region, so that only one request is ever redirected
    ({ running } = await surveyFolders(store, encryptionKey, 0, new Date()));
    // backup-immutability: retained versions someone hid or wrote over (src/store/version-reveal.ts)
    covered = await (await import('../../catalog/covered.ts')).coveredNote(store, charmWording);
  } catch (error) {
    ctx.fail(`The backups could not be listed: ${describeInline(error)}.`);
  }
  await ctx.setResults({
    ...(covered ? { covered: { hidden: covered.report.hidden, overwritten: covered.report.overwritten, 'hidden-backups': covered.report.hiddenBackups.join(',') || 'none', warning: covered.sentence } } : {}),
    ...(running.length ? { running: running.map((r) => ({ id: r.id, started: r.started.toISOString(), 'holds-until': r.expires.toISOString() })) } : {}),
    count: backups.length,
    backups: backups.map((b) => ({
      id: b.id,
      phase: b.phase ?? 'unknown',
      created: b.created,
      scope: b.scope ? `${b.scope.action}: ${b.scope.namespaces?.length ?? 0} namespace(s), ${b.scope.profiles?.length ?? 0} Profile(s)` : b.format,
      objects: b.objects,
      bytes: b.bytes,
      encrypted: b.encrypted,
      authentication: b.authentication,
      ...(b.volumeData ? { 'volume-data': b.volumeData } : {}),
      ...(b.description ? { description: b.description } : {}),
      ...(b.problem ? { problem: b.problem } : {}),
    })),
  });
}
