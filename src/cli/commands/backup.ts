// backup: the backup-state action outside Juju — user state of the profile namespaces, and PVC data through mover Jobs.
import { cliWording } from '../remedy-wording.ts';
import type { BackupOutcome } from '../../backup/engine.ts';
import { encryptionKeyFrom, encryptionOptions, previousEncryptionKeyFrom, previousEncryptionOptions } from '../encryption-options.ts';
import { kubeClientFrom, kubeOptions } from '../kube-options.ts';
import { formatBytes, table } from '../output.ts';
import { s3Options } from '../s3-options.ts';
import { volumeBackupStep } from '../../volumes/steps.ts';
import type { Command, CommandContext } from '../usage.ts';
import { listValue, stringValue } from '../usage.ts';
import { DEFAULT_PROTECTED_GROUPS, DEFAULT_SELECTOR, moverConfigFrom, moverOptions, selectionOptions } from './backup-options.ts';
import { describeFailure, jobNamespaceFrom, openStore, outputOptions } from './shared.ts';
import { TOOL_VERSION } from '../version.ts';

export function backupLines(outcome: BackupOutcome): string[] {
  const kinds = Object.entries(outcome.counts).sort(([a], [b]) => a.localeCompare(b));
  return [
    `backup ${outcome.backupId} committed to ${outcome.location}`,
    '',
    ...table([['KIND', 'OBJECTS'], ...kinds.map(([k, n]) => [k, n] as [string, number])]),
    '',
    `objects: ${outcome.objects} (${formatBytes(outcome.bytes)}) from ${outcome.namespaces} namespace(s), ${outcome.profiles} Profile(s), ${outcome.contributors} contributor(s)`,
    // a copy inside the bucket is the plain-file mover's reuse; the restic mover's repository deduplicates instead
    `volumes: ${outcome.volumes.copied} PVC(s), ${formatBytes(outcome.volumes.bytes)} (${formatBytes(outcome.volumes.uploaded)} uploaded${outcome.volumes.reused > 0 ? `, ${formatBytes(outcome.volumes.reused)} copied inside the bucket from an earlier backup` : ''})${outcome.volumes.note ? ` — ${outcome.volumes.note}` : ''}`,
    `secrets: ${outcome.sealedSecrets ? `${outcome.sealedSecrets} sealed` : `${outcome.clearSecrets} stored in clear (pass --encryption-key-file to seal them)`}`,
    `skipped: ${outcome.skipped} object(s) that controllers make, the filters leave out or a restore would refuse`,
    ...outcome.leftOutNamespaces.map(({ namespace, reason }) => `left out: namespace ${namespace}: ${reason}`),
    ...outcome.leftOutObjects.map(({ object, reason }) => `left out: ${object}: ${reason}`),
    `took ${outcome.durationSeconds}s`,
  ];
}

export function backupJson(outcome: BackupOutcome): Record<string, unknown> {
  const { manifest: _manifest, ...rest } = outcome;
  return rest;
}

export const backupCommand: Command = {
  name: 'backup',
  summary: 'back up Profiles, user objects of profile namespaces and PVC data to S3',
  synopsis: 'kubeflow-upgrader backup --s3-url s3://<bucket>/<prefix> [options]',
  description:
    'Lists every Kubeflow state kind the cluster serves, keeps what no controller made in the chosen profile namespaces, and ' +
    'writes a Velero-format archive plus a kubeflow-upgrader manifest (checksums of every item) to S3. PVC contents are copied ' +
    'by one mover Job per PVC inside the cluster, so the S3 endpoint must be reachable from the cluster too. A backup exists ' +
    'only once its marker is written: a failed run leaves nothing that list or restore would use.',
  groups: [
    {
      title: 'What to back up',
      options: {
        namespaces: { type: 'string', placeholder: '<list>', description: 'profile namespaces to back up, comma-separated', default: 'every profile namespace' },
        'no-volumes': { type: 'boolean', description: 'do not copy PVC contents (the PVC objects are still backed up)' },
        description: { type: 'string', placeholder: '<text>', description: 'free text stored with the backup and shown by list' },
        ...selectionOptions,
      },
    },
    { title: 'Volume mover', options: moverOptions },
    { title: 'Kubernetes', options: kubeOptions },
    { title: 'S3', options: s3Options },
    {
      title: 'Secrets',
      options: {
        ...encryptionOptions,
        ...previousEncryptionOptions,
        'job-namespace': { type: 'string', placeholder: '<namespace>', description: 'namespace of the restic key Job (--previous-encryption-key-file; repositories written before the passwords were per namespace) and its credentials Secret; never a profile namespace', default: 'kubeflow' },
      },
    },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [],
  examples: [
    'export AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=...',
    'kubeflow-upgrader backup --s3-url s3://kubeflow-backups/prod --region eu-west-1 --encryption-key-file ~/.kfu-key',
    'kubeflow-upgrader backup --s3-url s3://backups/kf --endpoint http://minio.minio:9000 --path-style --namespaces alice,bob',
    'kubeflow-upgrader backup --s3-url s3://backups/kf --no-volumes --json | jq -r .backupId',
    'kubeflow-upgrader backup --s3-url s3://kubeflow-backups/prod --encryption-key-file ~/.kfu-key-2 --previous-encryption-key-file ~/.kfu-key',
  ],
  exitCodes: { ok: 'the backup is committed', failed: 'the backup failed; nothing was committed' },
  async run(ctx: CommandContext): Promise<number> {
    const { values, out } = ctx;
    const { settings, store } = await openStore(ctx);
    const encryptionKey = encryptionKeyFrom(values, ctx.env);
    out.hide(encryptionKey);
    const previousKey = previousEncryptionKeyFrom(values, encryptionKey);
    out.hide(previousKey);
    const jobNamespace = jobNamespaceFrom(ctx);
    const namespaces = listValue(values, 'namespaces');
    const mover = { ...moverConfigFrom(values), jobNamespace };
    const includeVolumes = values['no-volumes'] !== true;
    const kube = await kubeClientFrom(values);
    try {
      if (previousKey && encryptionKey) {
        const { addNewKeyToRepositories } = await import('./backup-rekey.ts');
        out.progress(await addNewKeyToRepositories(kube, settings, mover, { previousKey, newKey: encryptionKey, jobNamespace }));
      }
      const { runBackup } = await import('../../backup/engine.ts');
      const outcome = await runBackup(kube, store, {
        wording: cliWording,
        kind: 'backup-state',
        ...(namespaces ? { namespaces } : {}),
        includeVolumes,
        includeControlPlane: false,
        ...(stringValue(values, 'description') ? { description: stringValue(values, 'description')! } : {}),
        profileNamespaceSelector: stringValue(values, 'profile-namespace-selector') ?? DEFAULT_SELECTOR,
        includeResources: listValue(values, 'include-resources') ?? [],
        excludeResources: listValue(values, 'exclude-resources') ?? [],
        ...(encryptionKey ? { encryptionKey } : {}),
        protectedCrdGroups: listValue(values, 'protected-crd-groups') ?? DEFAULT_PROTECTED_GROUPS.split(','),
        toolVersion: TOOL_VERSION,
        ...(stringValue(values, 'context') ? { source: { cluster: stringValue(values, 'context')! } } : {}),
        ...(includeVolumes ? { volumes: volumeBackupStep(kube, settings, mover, { encryptionKey }) } : {}),
        progress: (m) => out.progress(m),
      });
      out.result(backupLines(outcome), backupJson(outcome));
      return 0;
    } catch (error) {
      out.error(`The backup failed: ${await describeFailure(error, settings)}`);
      return 1;
    } finally {
      kube.close();
    }
  },
};

