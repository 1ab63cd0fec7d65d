// check: pre-upgrade-check outside Juju — go/no-go for an in-place refresh, with every reason at once.
import { cliWording } from '../remedy-wording.ts';
import { parseDuration } from '../../guard/duration.ts';
import { parseProtectedGroups } from '../../guard/policy.ts';
import { kubeClientFrom, kubeOptions } from '../kube-options.ts';
import { table } from '../output.ts';
import { s3Options } from '../s3-options.ts';
import { encryptionKeyFrom, encryptionOptions } from '../encryption-options.ts';
import type { Command, CommandContext } from '../usage.ts';
import { stringValue, UsageError } from '../usage.ts';
import { DEFAULT_PROTECTED_GROUPS } from './backup-options.ts';
import { describeFailure, openStore, outputOptions } from './shared.ts';
import { cliProblemSentence } from '../s3-wording.ts';

export const checkCommand: Command = {
  name: 'check',
  summary: 'go/no-go before `juju refresh`: guard, backup store, backup age, CRD storage versions, Profiles',
  synopsis: 'kubeflow-upgrader check --s3-url s3://<bucket>/<prefix> [--max-backup-age 24h] [options]',
  description:
    'Checks that the CRD guard (installed by the kubeflow-upgrader charm) is active, that the backup store answers, that ' +
    'the newest complete backup is recent enough, that every protected CRD is Established with no objects left in an old ' +
    'stored version, and that every Profile\'s namespace is Active. Prints every reason at once, so all can be fixed in ' +
    'one round. Writes nothing.',
  groups: [
    {
      title: 'Check',
      options: {
        'max-backup-age': { type: 'string', placeholder: '<duration>', description: 'the newest backup must be younger than this (30m, 24h, 7d)', default: '24h' },
        'protected-crd-groups': { type: 'string', placeholder: '<list>', description: 'API groups whose CRDs are inspected', default: DEFAULT_PROTECTED_GROUPS },
        'no-guard': { type: 'boolean', description: 'do not require the CRD guard (when the charm is not deployed)' },
      },
    },
    { title: 'Kubernetes', options: kubeOptions },
    { title: 'S3', options: s3Options },
    { title: 'Secrets', options: encryptionOptions },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [],
  examples: [
    'kubeflow-upgrader check --s3-url s3://kubeflow-backups/prod && juju refresh jupyter-controller --channel 1.10/stable',
    'kubeflow-upgrader check --s3-url s3://backups/kf --max-backup-age 2h --json | jq -r .reasons[]',
  ],
  exitCodes: { ok: 'go: it is safe to refresh now', failed: 'no-go: the reasons are listed (or the check could not run)' },
  async run(ctx: CommandContext): Promise<number> {
    const { values, out } = ctx;
    let maxAgeMs: number;
    let groups: string[];
    try {
      maxAgeMs = parseDuration(stringValue(values, 'max-backup-age') ?? '24h', '--max-backup-age');
      groups = parseProtectedGroups(stringValue(values, 'protected-crd-groups') ?? DEFAULT_PROTECTED_GROUPS);
    } catch (error) {
      throw new UsageError(await describeFailure(error));
    }
    const { settings, store } = await openStore(ctx);
    const encryptionKey = encryptionKeyFrom(values, ctx.env);
    out.hide(encryptionKey);
    const kube = await kubeClientFrom(values);
    try {
      out.progress('checking the guard, the backup store, the newest backup, the CRDs and the Profiles');
      const [{ preUpgradeCheck }, { checkBucket }, { newestForCheck }] = await Promise.all([
        import('../../guard/preflight.ts'), import('../../store/s3-client.ts'), import('../../catalog/latest.ts'),
      ]);
      const result = await preUpgradeCheck({
        wording: cliWording,
        kube,
        guard: { protectCrds: true, protectedCrdGroups: groups, protectProfiles: false },
        maxBackupAgeMs: maxAgeMs,
        checkS3: async () => {
          const checked = await checkBucket(settings);
          if (!checked.ok) throw new Error(cliProblemSentence(checked.problem));
        },
        // the backup `restore latest` would take: with a key, the newest authenticated one (one scrypt per backup)
        newestCompleteBackup: () => newestForCheck(store, encryptionKey),
      });
      // Without the charm there is no guard to find; --no-guard drops that one reason, never the others.
      const reasons = values['no-guard'] === true ? result.reasons.filter((r) => !/^The CRD guard /.test(r)) : result.reasons;
      const verdict = reasons.length === 0 ? 'go' : 'no-go';
      const lines = [
        `verdict: ${verdict}`,
        ...reasons.map((r) => `  - ${r}`),
        ...result.warnings.map((w) => `  warning: ${w}`),
        '',
        ...table([['CRD', 'STORAGE', 'STORED', 'ESTABLISHED', 'OWNER', 'OK'], ...result.crds.map((c) => [c.name, c.storageVersion, c.storedVersions.join(','), String(c.established), c.owner, c.problems.length ? 'no' : 'yes'])]),
      ];
      out.result(lines, { verdict, reasons, warnings: result.warnings, crds: result.crds });
      return verdict === 'go' ? 0 : 1;
    } catch (error) {
      out.error(`The check could not run: ${await describeFailure(error, settings)}`);
      return 1;
    } finally {
      kube.close();
    }
  },
};
