// verify: downloads a backup and re-checks every checksum against its manifest.
import { s3Options } from '../s3-options.ts';
import { allowUnauthenticatedOption, encryptionKeyFrom, encryptionOptions, trustFrom } from '../encryption-options.ts';
import type { Command, CommandContext } from '../usage.ts';
import { backupIdArgument, describeFailure, openStore, outputOptions, resolveBackupId } from './shared.ts';
import { NotAuthenticatedError, refuseAllowWithLatest } from '../../archive/authenticate.ts';

export const verifyCommand: Command = {
  name: 'verify',
  summary: 're-check every checksum of a backup before you rely on it',
  synopsis: 'kubeflow-upgrader verify <backup-id|latest> --s3-url s3://<bucket>/<prefix> [--encryption-key-file <path>] [--json]',
  description:
    'Reads the whole archive (items, resource list, volume index) and compares each sha256 with the manifest. Each problem ' +
    'is named: a missing or changed item, a truncated tarball, a manifest that does not parse. With a key, the manifest\'s ' +
    'HMAC is checked first (a backup without one is refused unless --allow-unauthenticated) and every sealed value is opened. ' +
    'Nothing is written.',
  groups: [
    { title: 'S3', options: s3Options },
    { title: 'Secrets', options: { ...encryptionOptions, ...allowUnauthenticatedOption } },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [{ name: '<backup-id|latest>', required: true, description: 'the backup to verify; latest for the newest complete one' }],
  examples: [
    'kubeflow-upgrader verify latest --s3-url s3://kubeflow-backups/prod',
    'kubeflow-upgrader verify kf-20250101-020000-a1b2c3 --s3-url s3://backups/kf --json | jq .status',
  ],
  exitCodes: { ok: 'the backup is intact', failed: 'the backup is corrupt or not verifiable, or could not be read' },
  async run(ctx: CommandContext): Promise<number> {
    const requested = backupIdArgument(ctx, true)!;
    const { settings, store } = await openStore(ctx);
    const encryptionKey = encryptionKeyFrom(ctx.values, ctx.env);
    ctx.out.hide(encryptionKey);
    const trust = trustFrom(ctx.values, encryptionKey);
    try {
      refuseAllowWithLatest(requested, trust);
      const id = await resolveBackupId(store, requested, (warning) => ctx.out.progress(warning), trust);
      ctx.out.progress(`verifying backup ${id}`);
      // Nothing at all under that id is a wrong id, not a corrupt backup: say so in one sentence.
      if (!(await store.holdsBackup(id))) {
        throw new Error(`there is no backup ${id} in ${store.url()}; kubeflow-upgrader list shows the complete ones.`);
      }
      const { verifyBackup } = await import('../../catalog/verify.ts');
      const report = await verifyBackup(store, id, trust);
      const lines = [
        `backup ${id}: ${report.status} (${report.objectsChecked} objects checked)`,
        `authentication: ${report.authentication.note}`,
        `secrets: ${report.sealing}`,
        ...(report.volumeData ? [`volume data: ${report.volumeData}`] : []),
        ...report.problems.map((p) => `  ${p.message}`),
      ];
      ctx.out.result(lines, { backupId: id, status: report.status, authentication: report.authentication, sealing: report.sealing, volumeData: report.volumeData, objectsChecked: report.objectsChecked, problems: report.problems });
      return report.status === 'ok' ? 0 : 1;
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
