// verify: downloads a backup and re-checks every checksum against its manifest; the restic repositories a backup pins
// snapshots in are checked by Jobs in the cluster (src/volumes/restic/check.ts).
import { s3Options } from '../s3-options.ts';
import { allowUnauthenticatedOption, encryptionKeyFrom, encryptionOptions, trustFrom } from '../encryption-options.ts';
import type { Command, CommandContext } from '../usage.ts';
import { backupIdArgument, describeFailure, jobNamespaceFrom, openStore, outputOptions } from './shared.ts';
import { NotAuthenticatedError, refuseAllowWithLatest } from '../../archive/authenticate.ts';
import { kubeClientFrom, kubeOptions } from '../kube-options.ts';
import { cliWording } from '../remedy-wording.ts';
import { stringValue, UsageError } from '../usage.ts';
import { moverConfigFrom, moverOptions } from './backup-options.ts';
import { parseReadData, READ_DATA_FORMS, type ReadData } from '../../volumes/restic/read-data.ts';
import { repositoryProblemSentence, verdictWithRepositories } from '../../volumes/restic/check.ts';

function readDataFrom(ctx: CommandContext): ReadData {
  const text = stringValue(ctx.values, 'read-data') ?? 'none';
  const parsed = parseReadData(text);
  if (!parsed) throw new UsageError(`--read-data must be ${READ_DATA_FORMS}, not "${text}".`);
  return parsed;
}

export const verifyCommand: Command = {
  name: 'verify',
  summary: 're-check every checksum of a backup before you rely on it',
  synopsis: 'kubeflow-upgrader verify <backup-id|latest> --s3-url s3://<bucket>/<prefix> [--encryption-key-file <path>] [--read-data none|full|<x>%|<n>/<t>|<size>] [--json]',
  description:
    'Reads the whole archive (items, resource list, volume index) and compares each sha256 with the manifest. Each problem ' +
    'is named: a missing or changed item, a truncated tarball, a manifest that does not parse. With a key, the manifest\'s ' +
    'HMAC is checked first (a backup without one is refused unless --allow-unauthenticated) and every sealed value is opened. ' +
    'Volume data in restic repositories (a backup made with --mover-engine restic) is checked by restic in one Job per ' +
    'repository in --job-namespace of the cluster: the index, snapshots and trees, each pinned snapshot looked up, and with ' +
    '--read-data the data packs, all or a part. Nothing is written to the bucket.',
  groups: [
    { title: 'S3', options: s3Options },
    { title: 'Secrets', options: { ...encryptionOptions, ...allowUnauthenticatedOption } },
    {
      title: 'Restic repositories',
      options: {
        'read-data': { type: 'string', placeholder: '<amount>', description: 'how much data restic reads back: none (the structure only), full, a percentage of the packs (10%), a group n/t (1/5) or a size (500M)', default: 'none' },
        'job-namespace': { type: 'string', placeholder: '<namespace>', description: 'namespace of the check Jobs and their credentials Secret', default: 'kubeflow' },
      },
    },
    { title: 'Volume mover', options: moverOptions },
    { title: 'Kubernetes', options: kubeOptions },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [{ name: '<backup-id|latest>', required: true, description: 'the backup to verify; latest for the newest complete one' }],
  examples: [
    'kubeflow-upgrader verify latest --s3-url s3://kubeflow-backups/prod',
    'kubeflow-upgrader verify kf-20250101-020000-a1b2c3 --s3-url s3://backups/kf --json | jq .status',
    'kubeflow-upgrader verify latest --s3-url s3://kubeflow-backups/prod --encryption-key-file ~/.kfu-key --read-data 10%',
  ],
  exitCodes: { ok: 'the backup is intact', failed: 'the backup is corrupt or not verifiable, or could not be read' },
  async run(ctx: CommandContext): Promise<number> {
    const requested = backupIdArgument(ctx, true)!;
    const readData = readDataFrom(ctx);
    const jobNamespace = jobNamespaceFrom(ctx);
    const config = moverConfigFrom(ctx.values);
    const { settings, store } = await openStore(ctx);
    const encryptionKey = encryptionKeyFrom(ctx.values, ctx.env);
    ctx.out.hide(encryptionKey);
    const trust = trustFrom(ctx.values, encryptionKey);
    try {
      refuseAllowWithLatest(requested, trust);
      // the one answer to `latest` (catalog/latest.ts): a PartiallyFailed backup and the newer ones passed over are said
      const { resolveBackupId } = await import('../../catalog/latest.ts');
      const resolved = await resolveBackupId(store, requested, { encryptionKey: trust.encryptionKey, doing: 'verify' });
      for (const note of resolved.notes) ctx.out.progress(note);
      const id = resolved.id;
      ctx.out.progress(`verifying backup ${id}`);
      // Nothing at all under that id is a wrong id, not a corrupt backup: say so in one sentence.
      if (!(await store.holdsBackup(id))) {
        // with --immutability, a backup someone hid is still there underneath: say so rather than that it is not
        const { coveredNote } = await import('../../catalog/covered.ts');
        const covered = await coveredNote(store, cliWording);
        if (covered?.report.hiddenBackups.includes(id)) throw new Error(`backup ${id} is hidden: ${covered.sentence}`);
        throw new Error(`there is no backup ${id} in ${store.url()}; kubeflow-upgrader list shows the complete ones.`);
      }
      const { verifyBackup } = await import('../../catalog/verify.ts');
      const report = await verifyBackup(store, id, trust);
      const { checkPinnedRepositories } = await import('../../volumes/restic/verify-step.ts');
      const repositories = await checkPinnedRepositories(report.volumes, {
        backupId: id, kube: () => kubeClientFrom(ctx.values), s3: settings, config, encryptionKey, readData, jobNamespace, wording: cliWording,
        imageSetting: '--mover-image', resourcesSetting: '--mover-resources', progress: (line) => ctx.out.progress(line),
      }, report.controlPlane);
      const status = verdictWithRepositories(report.status, repositories);
      const resticProblems = repositories.flatMap((r) => repositoryProblemSentence(r) ?? []);
      // a damaged backup may be one whose retained versions someone wrote over or hid (backup-immutability)
      const damaged = repositories.some((r) => r.status === 'damaged');
      const covered = status === 'ok' ? undefined : await (await import('../../catalog/covered.ts')).coveredNote(store, cliWording, { repositoryDamaged: damaged });
      if (covered) resticProblems.push(covered.sentence);
      const lines = [
        `backup ${id}: ${status} (${report.objectsChecked} objects checked)`,
        `authentication: ${report.authentication.note}`,
        `secrets: ${report.sealing}`,
        ...(report.volumeData ? [`volume data: ${report.volumeData}`] : []),
        ...repositories.map((r) => `restic repository ${r.repository}: ${r.status}, ${r.checked}, ${r.snapshots} pinned snapshot(s)`),
        ...report.problems.map((p) => `  ${p.message}`),
        ...resticProblems.map((p) => `  ${p}`),
      ];
      ctx.out.result(lines, {
        backupId: id, status, authentication: report.authentication, sealing: report.sealing, volumeData: report.volumeData, objectsChecked: report.objectsChecked,
        ...(repositories.length > 0 ? { resticRepositories: repositories } : {}),
        problems: [...report.problems, ...resticProblems.map((message) => ({ kind: 'restic-repository', message }))],
      });
      return status === 'ok' ? 0 : 1;
    } catch (error) {
      if (NotAuthenticatedError.isInstance(error)) {
        ctx.out.error(error.message);
        return 1;
      }
      ctx.out.error(`Backup ${requested} could not be verified: ${await describeFailure(error, settings)}`);
      return 1;
    }
  },
};
