// list: backups with their commit marker, newest first, with the phase the marker records (Velero writes the marker
// of unfinished and failed backups too; restore and `latest` take only Completed and PartiallyFailed ones).
import { formatBytes, table } from '../output.ts';
import { s3Options } from '../s3-options.ts';
import { encryptionKeyFrom, encryptionOptions } from '../encryption-options.ts';
import type { Command, CommandContext } from '../usage.ts';
import { positiveInteger } from '../usage.ts';
import { describeFailure, openStore, outputOptions } from './shared.ts';
import { cliWording } from '../remedy-wording.ts';

export const listCommand: Command = {
  name: 'list',
  summary: 'list complete backups in S3, newest first',
  synopsis: 'kubeflow-upgrader list --s3-url s3://<bucket>/<prefix> [--limit <n>] [--json]',
  description:
    'Lists the backups whose commit marker exists — an interrupted backup is never listed — with the phase the marker ' +
    'records, their scope, size, whether their Secrets are sealed and whether they are authenticated (with a key, each ' +
    'HMAC is checked; without one, a backup that carries an HMAC shows as hmac-unchecked). Foreign Velero backups in the same location are ' +
    'listed with format "velero"; only Completed and PartiallyFailed ones can be restored.',
  groups: [
    { title: 'Listing', options: { limit: { type: 'string', placeholder: '<n>', description: 'show at most this many backups', default: 'all' } } },
    { title: 'S3', options: s3Options },
    { title: 'Secrets', options: encryptionOptions },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [],
  examples: [
    'kubeflow-upgrader list --s3-url s3://kubeflow-backups/prod',
    'kubeflow-upgrader list --s3-url s3://backups/kf --endpoint https://minio.example.com --path-style --limit 5 --json',
  ],
  exitCodes: { ok: 'the backups were listed (possibly none)', failed: 'the location could not be read' },
  async run(ctx: CommandContext): Promise<number> {
    const limit = ctx.values.limit === undefined ? undefined : positiveInteger(ctx.values, 'limit', 1);
    const { settings, store } = await openStore(ctx);
    const encryptionKey = encryptionKeyFrom(ctx.values, ctx.env);
    ctx.out.hide(encryptionKey);
    try {
      const { listBackups } = await import('../../catalog/verify.ts');
      const backups = await listBackups(store, { ...(limit === undefined ? {} : { limit }), encryptionKey });
      const rows = backups.map((b) => [
        b.id,
        b.phase ?? '-',
        b.created.replace(/\.\d+Z$/, 'Z'),
        b.scope ? `${b.scope.action} ${b.scope.namespaces?.length ?? 0} ns ${b.scope.profiles?.length ?? 0} profiles` : b.format,
        b.objects ?? 0,
        b.bytes === undefined ? '-' : formatBytes(b.bytes),
        b.encrypted ? 'sealed' : 'clear',
        b.authentication,
        b.volumeData ?? '-',
        b.problem ?? b.description ?? '',
      ]);
      const lines = backups.length === 0
        ? [`no complete backup in ${store.url()}`]
        : table([['ID', 'PHASE', 'CREATED', 'SCOPE', 'OBJECTS', 'SIZE', 'SECRETS', 'AUTHENTICATION', 'VOLUMES', 'DESCRIPTION'], ...rows]);
      // with --immutability: retained versions someone hid or wrote over are said, and how they come back
      const { coveredNote } = await import('../../catalog/covered.ts');
      const covered = await coveredNote(store, cliWording);
      if (covered) lines.push(`warning: ${covered.sentence}`);
      ctx.out.result(lines, { location: store.url(), count: backups.length, backups, ...(covered ? { covered: { ...covered.report, until: covered.report.until?.toISOString() }, warning: covered.sentence } : {}) });
      return 0;
    } catch (error) {
      ctx.out.error(`The backups could not be listed: ${await describeFailure(error, settings)}`);
      return 1;
    }
  },
};
