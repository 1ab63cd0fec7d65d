// The verify-backup action: downloads a backup and re-checks every checksum; each problem is reported. A backup whose
// volume data (or, with a key, control-plane data) is in restic repositories also has each of those repositories
// checked by a Job (restic check, with read-data as much of the data as asked), and every snapshot it pins looked up.
import { ActionFailure, type ActionContext } from '../action-context.ts';
import { describeInline } from '../../errors/index.ts';
import { NotAuthenticatedError, refuseAllowWithLatest } from '../../archive/authenticate.ts';
import { actionTrust } from '../trust.ts';
import { moverConfig } from '../backup-steps.ts';
import { charmWording } from '../remedy-wording.ts';
import { parseReadData } from '../../volumes/restic/read-data.ts';
import { repositoryProblemSentence, verdictWithRepositories } from '../../volumes/restic/check.ts';

export async function run(ctx: ActionContext<'verify-backup'>): Promise<void> {
  const s3 = await ctx.s3();
  const [{ verifyBackup }, { resolveBackupId, NoWholeBackupError }, { openBackupStore }] = await Promise.all([import('../../catalog/verify.ts'), import('../../catalog/latest.ts'), import('../../store/open.ts')]);
  const store = openBackupStore(s3);
  const trust = actionTrust(await ctx.encryptionKey(), ctx.params['allow-unauthenticated']);
  let id = ctx.params['backup-id'];
  try {
    refuseAllowWithLatest(id, trust);
    // the same choice restore-state, list-backups and pre-upgrade-check make: with a key, the newest authenticated one
    const resolved = await resolveBackupId(store, id, { encryptionKey: trust.encryptionKey, doing: 'verify' })
      .catch((error: unknown) => (NoWholeBackupError.isInstance(error) ? ctx.fail(error.message) : Promise.reject(error)));
    id = resolved.id;
    for (const note of resolved.notes) await ctx.progress(note);
    await ctx.progress(`verifying backup ${id}`);
    const report = await verifyBackup(store, id, trust);
    const { checkPinnedRepositories } = await import('../../volumes/restic/verify-step.ts');
    const repositories = await checkPinnedRepositories(report.volumes, {
      backupId: id, kube: () => ctx.kube(), s3, config: moverConfig(ctx.config), encryptionKey: trust.encryptionKey,
      readData: parseReadData(ctx.params['read-data'])!, jobNamespace: ctx.modelName, wording: charmWording,
      imageSetting: 'volume-mover-image', resourcesSetting: 'volume-mover-resources', progress: (line) => ctx.progress(line),
    }, report.controlPlane);
    const status = verdictWithRepositories(report.status, repositories);
    const problems = [...report.problems.map((p) => p.message), ...repositories.flatMap((r) => repositoryProblemSentence(r) ?? [])];
    // a damaged backup may be one whose retained versions someone wrote over or hid (backup-immutability)
    if (status !== 'ok') {
      const damaged = repositories.some((r) => r.status === 'damaged');
      const covered = await (await import('../../catalog/covered.ts')).coveredNote(store, charmWording, { repositoryDamaged: damaged });
      if (covered) problems.push(covered.sentence);
    }
    await ctx.setResults({
      'backup-id': id,
      status,
      authentication: report.authentication.note,
      sealing: report.sealing,
      ...(report.volumeData ? { 'volume-data': report.volumeData } : {}),
      'objects-checked': report.objectsChecked,
      ...(repositories.length > 0 ? {
        'restic-repositories': repositories.map((r) => ({ namespace: r.namespace, repository: r.repository, status: r.status, checked: r.checked, pinnedSnapshots: r.snapshots, ...(r.problem ? { problem: r.problem } : {}) })),
      } : {}),
      problems,
    });
    if (status === 'corrupt') ctx.fail(`Backup ${id} is corrupt (${problems.length} problem(s), listed in the results); do not restore from it.`);
    const unchecked = repositories.filter((r) => r.status === 'not-checked');
    if (unchecked.length > 0) {
      const which = unchecked.map((r) => `${r.namespace} (${r.problem})`).join('; ');
      ctx.fail(`Backup ${id} could not be verified whole: the restic ${unchecked.length === 1 ? 'repository' : 'repositories'} of ${which} ${unchecked.length === 1 ? 'was' : 'were'} not checked.`);
    }
  } catch (error) {
    if (ActionFailure.isInstance(error)) throw error;
    // already one sentence naming the backup and the case
    if (NotAuthenticatedError.isInstance(error)) ctx.fail(error.message);
    ctx.fail(`Backup ${id} could not be verified: ${describeInline(error)}.`);
  }
}
