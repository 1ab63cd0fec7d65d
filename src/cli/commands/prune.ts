// prune: the prune-backups action outside Juju — the newest --retention complete backups stay, older ones are deleted,
// their restic snapshots forgotten and those repositories pruned by a restic Job in the cluster (src/prune/restic.ts).
import { formatBytes } from '../output.ts';
import { s3Options } from '../s3-options.ts';
import { encryptionKeyFrom, encryptionOptions } from '../encryption-options.ts';
import { kubeClientFrom, kubeOptions } from '../kube-options.ts';
import type { Command, CommandContext } from '../usage.ts';
import { stringValue, UsageError } from '../usage.ts';
import type { PruneOutcome } from '../../prune/engine.ts';
import { moverConfigFrom, moverOptions } from './backup-options.ts';
import { describeFailure, jobNamespaceFrom, openStore, outputOptions } from './shared.ts';
import { cliWording } from '../remedy-wording.ts';

const DEFAULT_RETENTION = 7;

function retentionFrom(text: string | undefined): number {
  if (text === undefined) return DEFAULT_RETENTION;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 100_000) throw new UsageError(`--retention must be a whole number from 0 (keep all) to 100000, not "${text}".`);
  return n;
}

/** What a person reads: each backup deleted or kept and why, then each restic repository's share. */
export function pruneLines(outcome: PruneOutcome, dryRun: boolean): string[] {
  const verb = dryRun ? 'would delete' : 'deleted';
  const lines = [
    ...outcome.deleted.map((d) => `${verb} ${d.id}: ${d.reason}`),
    ...outcome.kept.map((k) => `kept ${k.id}: ${k.why}`),
    ...outcome.untrusted.map((u) => `not authenticated, left as it is: ${u.id} (${u.why})`),
  ];
  for (const r of outcome.restic) {
    const freed = r.bytesFreed === undefined ? '' : `, ${formatBytes(r.bytesFreed)} freed (${formatBytes(r.bytesBefore ?? 0)} → ${formatBytes(r.bytesAfter ?? 0)})`;
    lines.push(`restic ${r.repository}: ${r.snapshotsForgotten} snapshot(s) ${dryRun ? 'to forget' : 'forgotten'} of ${r.backups.join(', ')}${freed}`);
  }
  if (outcome.movers.jobs + outcome.movers.secrets > 0) lines.push(`removed ${outcome.movers.jobs} stale mover Job(s) and ${outcome.movers.secrets} Secret(s)`);
  for (const lock of outcome.removedLocks) lines.push(`removed foreign restic lock ${lock}`);
  for (const i of outcome.ignored) lines.push(`ignored ${i.what}: ${i.why}`);
  for (const note of outcome.notes) lines.push(`note: ${note}`);
  return lines.length > 0 ? lines : ['nothing to prune'];
}

export const pruneCommand: Command = {
  name: 'prune',
  summary: 'delete the backups beyond --retention, forgetting their restic snapshots',
  synopsis: 'kubeflow-upgrader prune --s3-url s3://<bucket>/<prefix> [--retention <n>] [--dry-run] [options]',
  description:
    'Keeps the newest --retention complete backups (the newest one always) and deletes older ones, marker first, and ' +
    'incomplete folders idle for an hour. With a key only backups whose HMAC verifies are counted, kept and ordered ' +
    '(by their manifests\' times); other complete folders are named and left, or deleted with --delete-unauthenticated. ' +
    'The restic snapshots a deleted backup\'s manifest pins (with a key: only a manifest whose HMAC verifies) are ' +
    'forgotten by id and each repository is pruned once, by a restic Job in the repository\'s namespace. Refused, with ' +
    'nothing changed, while a backup is being written (its run record, authenticated with a key, proves it); a ' +
    'repository a live restic lock holds is left for the next run, and lock files restic would not have written are ' +
    'named, or removed with --remove-foreign-locks. --dry-run names what would go and changes nothing.',
  groups: [
    {
      title: 'Pruning',
      options: {
        retention: { type: 'string', placeholder: '<n>', description: 'complete backups to keep (0 keeps all)', default: String(DEFAULT_RETENTION) },
        'dry-run': { type: 'boolean', description: 'report what would be deleted and forgotten; change nothing' },
        'delete-unauthenticated': { type: 'boolean', description: 'with a key, also delete complete folders whose HMAC does not verify' },
        'remove-foreign-locks': { type: 'boolean', description: "remove restic lock files restic would not have written (they do not decrypt, or are dated ahead)" },
      },
    },
    { title: 'Volume mover', options: moverOptions },
    { title: 'Kubernetes', options: kubeOptions },
    { title: 'S3', options: s3Options },
    {
      title: 'Secrets',
      options: {
        ...encryptionOptions,
        'job-namespace': { type: 'string', placeholder: '<namespace>', description: 'namespace of the restic Jobs of repositories whose profile namespace is gone, and of the restic key Job that gives repositories written before the passwords were per namespace their own; never a profile namespace', default: 'kubeflow' },
      },
    },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [],
  examples: [
    'kubeflow-upgrader prune --s3-url s3://kubeflow-backups/prod --retention 7 --dry-run',
    'kubeflow-upgrader prune --s3-url s3://kubeflow-backups/prod --retention 7 --encryption-key-file ~/.kfu-key',
  ],
  exitCodes: { ok: 'pruned (or, with --dry-run, reported)', failed: 'refused (a backup or restore is running) or the prune stopped; rerun it' },
  async run(ctx: CommandContext): Promise<number> {
    const { values, out } = ctx;
    const retention = retentionFrom(stringValue(values, 'retention'));
    const dryRun = values['dry-run'] === true;
    const mover = moverConfigFrom(values);
    const { settings, store } = await openStore(ctx);
    const encryptionKey = encryptionKeyFrom(values, ctx.env);
    out.hide(encryptionKey);
    const kube = await kubeClientFrom(values);
    let refused: { isInstance(value: unknown): boolean } | undefined;
    try {
      const [{ pruneBackups }, { moverPortOf }, { resticRepositoriesOf }, { resticEngine }, { PruneRefusedError }] = await Promise.all([
        import('../../prune/engine.ts'), import('../../prune/movers.ts'), import('../../volumes/restic/prune-repositories.ts'), import('../../volumes/engines.ts'),
        import('../../prune/restic.ts'),
      ]);
      refused = PruneRefusedError;
      const outcome = await pruneBackups(store, {
        retention,
        dryRun,
        encryptionKey,
        deleteUnauthenticated: values['delete-unauthenticated'] === true,
        removeForeignLocks: values['remove-foreign-locks'] === true,
        wording: cliWording,
        movers: moverPortOf(kube),
        restic: resticRepositoriesOf(kube, settings, encryptionKey, {
          image: resticEngine.imageFor(mover), startTimeoutSeconds: mover.startTimeoutSeconds, resources: mover.resources, fallbackNamespace: jobNamespaceFrom(ctx),
        }),
        progress: (m) => out.progress(m),
      });
      out.result(pruneLines(outcome, dryRun), { location: store.url(), dryRun, ...outcome });
      return 0;
    } catch (error) {
      // a refusal is already the one sentence, saying nothing changed
      if (refused?.isInstance(error)) out.error((error as Error).message);
      else out.error(`The prune stopped: ${await describeFailure(error, settings)}`);
      return 1;
    } finally {
      kube.close();
    }
  },
};
