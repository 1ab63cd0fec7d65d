// recover: backup-immutability's undo (src/store/version-reveal.ts). Someone holding the bucket key cannot delete a
// retained version, but can hide it behind a delete marker or write a new version over it; this makes every retained
// version under the location current again by removing what lies on top, which nothing of ours ever writes.
import { s3Options } from '../s3-options.ts';
import type { Command, CommandContext } from '../usage.ts';
import { UsageError } from '../usage.ts';
import { describeFailure, openStore, outputOptions } from './shared.ts';

export const recoverCommand: Command = {
  name: 'recover',
  summary: 'bring back the retained versions of immutable backups someone deleted or wrote over',
  synopsis: 'kubeflow-upgrader recover --s3-url s3://<bucket>/<prefix> --immutability <duration> [--json]',
  description:
    'With --immutability, every object a backup needs is under S3 Object Lock retention: no key can delete that ' +
    'version or shorten its retention, but a plain delete hides it behind a delete marker and a put writes a newer ' +
    'version over it. recover finds each retained version that is not current under the location (the backups ' +
    'folder and the restic repositories) and removes the delete markers and newer versions on top of it, so the ' +
    'backups list, verify and restore as they were written. A version on top that is itself retained cannot be ' +
    'removed and is named. `list` says when there is something to recover.',
  groups: [
    { title: 'S3', options: s3Options },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [],
  examples: ['kubeflow-upgrader recover --s3-url s3://kubeflow-backups/prod --immutability 30d'],
  exitCodes: { ok: 'every covered retained version is current again (or none was covered)', failed: 'the location could not be read, or a version on top could not be removed' },
  async run(ctx: CommandContext): Promise<number> {
    const { settings, store } = await openStore(ctx);
    if (!store.immutability) throw new UsageError('recover works on immutable backups: give --immutability as the backups were written with it.');
    try {
      const outcome = await store.uncoverRetained(new Date());
      if (!outcome) return 0;
      const lines = outcome.hidden + outcome.overwritten === 0
        ? [`nothing to recover in ${store.url()}: every retained version is current`]
        : [
            `recovered ${outcome.uncovered} retained object(s): ${outcome.hidden} were hidden by a delete marker, ${outcome.overwritten} written over`,
            ...(outcome.hiddenBackups.length > 0 ? [`listed again: ${outcome.hiddenBackups.join(', ')}`] : []),
            ...outcome.refused.map((r) => `not recovered: ${r}`),
          ];
      ctx.out.result(lines, { location: store.url(), ...outcome, until: outcome.until?.toISOString() });
      return outcome.refused.length > 0 ? 1 : 0;
    } catch (error) {
      ctx.out.error(`The retained versions could not be recovered: ${await describeFailure(error, settings)}`);
      return 1;
    }
  },
};
