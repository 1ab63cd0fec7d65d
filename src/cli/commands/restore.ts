// restore: the restore-state action outside Juju — Profiles first, then namespaced objects in Kubeflow's order, then
// the PVC data of PVCs it created; every object compared before it is written, so a rerun converges.
import { cliWording } from '../remedy-wording.ts';
import type { ConflictPolicy, RestoreOutcome } from '../../restore/engine.ts';
import { RestoreInputError, RestoreRefusedError } from '../../restore/errors.ts';
import { allowUnauthenticatedOption, encryptionKeyFrom, encryptionOptions, trustFrom } from '../encryption-options.ts';
import { kubeClientFrom, kubeOptions } from '../kube-options.ts';
import { table } from '../output.ts';
import { s3Options } from '../s3-options.ts';
import { volumeRestoreStep } from '../../volumes/steps.ts';
import type { Command, CommandContext } from '../usage.ts';
import { listValue, positiveInteger, stringValue, UsageError } from '../usage.ts';
import { moverConfigFrom, moverOptions } from './backup-options.ts';
import { backupIdArgument, describeFailure, jobNamespaceFrom, openStore, outputOptions } from './shared.ts';

const POLICIES: readonly ConflictPolicy[] = ['skip', 'update', 'fail'];

export function restoreLines(outcome: RestoreOutcome): string[] {
  const t = outcome.totals;
  const kinds = Object.entries(outcome.byKind).sort(([a], [b]) => a.localeCompare(b));
  const verb = outcome.dryRun ? 'would restore (dry run: nothing was written)' : 'restored';
  return [
    `backup ${outcome.backupId} ${verb}`,
    '',
    ...table([
      ['KIND', 'CREATED', 'UPDATED', 'UNCHANGED', 'SKIPPED', 'FAILED'],
      ...kinds.map(([k, v]) => [k, v.created, v.updated, v.unchanged, v.skipped, v.failed] as [string, number, number, number, number, number]),
    ]),
    '',
    `total: ${t.created} created, ${t.updated} updated, ${t.unchanged} unchanged, ${t.skipped} skipped, ${t.failed} failed (${outcome.objectsChecked} objects verified)`,
    `authentication: ${outcome.authentication}`,
    `volumes: ${outcome.volumes.restored} PVC(s) filled${outcome.volumes.note ? ` — ${outcome.volumes.note}` : ''}`,
    ...outcome.recurringRuns.map((r) => `recurring run to recreate through KFP: ${r}`),
    ...outcome.storageClasses.map((c) => `storage class ${outcome.dryRun ? 'would change' : 'changed'}: ${c}`),
    ...(outcome.dryRun ? planLines(outcome) : []),
    ...outcome.failures.map((f) => `failed: ${f}`),
    ...outcome.predicted.map((p) => `predicted, not asked: ${p}`),
    ...outcome.refused.map((r) => `refused (not written): ${r}`),
    // the plan of a dry run gives the reasons already; the items skip-refused left out are listed as refused above
    ...(outcome.dryRun ? [] : outcome.skippedObjects.filter((s) => !s.includes(': refused: ')).map((s) => `skipped (not written): ${s}`)),
    ...outcome.unserved.map((u) => `not served by the target${outcome.dryRun ? '' : ' (left out)'}: ${u}`),
    ...outcome.mappings.map((m) => `restored through another served version: ${m}`),
    ...outcome.warnings.map((w) => `note: ${w}`),
    `took ${outcome.durationSeconds}s`,
  ];
}

function planLines(outcome: RestoreOutcome): string[] {
  const lines = ['', 'plan (namespace, kind: create/update/unchanged/skip/fail):'];
  for (const e of outcome.plan) {
    lines.push(`  ${e.namespace || '(cluster)'} ${e.kind}: ${e.create}/${e.update}/${e.unchanged}/${e.skip}/${e.fail}`);
    for (const reason of e.reasons) lines.push(`    - ${reason}`);
  }
  return lines;
}

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'restore a backup into this cluster (rollback) or a fresh one (blue/green)',
  synopsis: 'kubeflow-upgrader restore <backup-id|latest> --s3-url s3://<bucket>/<prefix> [options]',
  description:
    'Verifies the whole archive first (checksums, the allow-list, kinds the target serves) and refuses before any write if ' +
    'something is wrong. Then restores Profiles, waits for the profile controller to make their namespaces, and restores ' +
    'namespaced objects in Kubeflow\'s order (ServiceAccounts, Secrets, ConfigMaps, PVCs and their data, RoleBindings, ' +
    'AuthorizationPolicies, PodDefaults, then workloads). Objects that already exist and match are left alone; ones that ' +
    'differ follow --conflict-policy. A rerun after any interruption converges. Use --dry-run to see the plan first.',
  groups: [
    {
      title: 'What to restore',
      options: {
        profiles: { type: 'string', placeholder: '<list>', description: 'only these Profiles and their namespaces', default: 'every Profile in the backup' },
        namespaces: { type: 'string', placeholder: '<list>', description: 'only these profile namespaces', default: 'every namespace in the backup' },
        'conflict-policy': { type: 'string', placeholder: '<skip|update|fail>', description: 'what to do with an existing object that differs from the backup: keep it, overwrite it, or stop before any write', default: 'skip' },
        'dry-run': { type: 'boolean', description: 'ask the target with dryRun=All: the plan, what it refuses, the fields it would drop, the kinds it does not serve; write nothing' },
        'no-volumes': { type: 'boolean', description: 'create PVCs empty instead of filling them with their archived data' },
        'volumes-in-namespace': { type: 'boolean', description: 'fill each new PVC by a mover in its own namespace instead of filling a claim in --job-namespace and handing its volume over (for a cluster that refuses the hand-over)' },
        'wait-timeout': { type: 'string', placeholder: '<seconds>', description: 'how long to wait for the profile controller to make each profile namespace', default: '300' },
        'storage-class-map': { type: 'string', placeholder: '<old=new,...>', description: 'restored PVCs that ask for an old storage class ask for the new one (like Velero\'s change-storage-class)', default: 'no change' },
        'skip-refused': { type: 'boolean', description: 'restore everything the allow-list accepts and list what it refuses, instead of refusing the whole backup' },
        'skip-unserved': { type: 'boolean', description: 'restore every kind the target serves and name the ones it serves in no version, instead of refusing the whole backup' },
        'include-resources': { type: 'string', placeholder: '<list>', description: 'only restore these resources (e.g. notebooks.kubeflow.org,persistentvolumeclaims); Profiles always', default: 'every resource in the backup' },
        'exclude-resources': { type: 'string', placeholder: '<list>', description: 'never restore these resources (e.g. secrets); Profiles cannot be left out', default: 'none' },
      },
    },
    { title: 'Volume mover', options: moverOptions },
    { title: 'Kubernetes', options: kubeOptions },
    { title: 'S3', options: s3Options },
    {
      title: 'Secrets',
      options: {
        ...encryptionOptions,
        ...allowUnauthenticatedOption,
        'job-namespace': { type: 'string', placeholder: '<namespace>', description: 'namespace of the restic key Job that gives repositories written before the passwords were per namespace their own, and of its credentials Secret; never a profile namespace', default: 'kubeflow' },
      },
    },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [{ name: '<backup-id|latest>', required: true, description: 'the backup to restore, as `list` shows it; latest for the newest complete one' }],
  examples: [
    'kubeflow-upgrader restore latest --s3-url s3://kubeflow-backups/prod --dry-run',
    'kubeflow-upgrader restore kf-20250101-020000-a1b2c3 --s3-url s3://kubeflow-backups/prod --encryption-key-file ~/.kfu-key',
    'kubeflow-upgrader restore latest --s3-url s3://backups/kf --profiles alice --conflict-policy update --context green',
  ],
  exitCodes: { ok: 'every object was restored, unchanged or skipped by the policy (or the dry run planned it)', failed: 'the restore was refused or stopped, or some objects failed (listed)' },
  async run(ctx: CommandContext): Promise<number> {
    const { values, out } = ctx;
    const id = backupIdArgument(ctx, true)!;
    const policy = (stringValue(values, 'conflict-policy') ?? 'skip') as ConflictPolicy;
    if (!POLICIES.includes(policy)) throw new UsageError(`--conflict-policy must be skip, update or fail, not "${policy}".`);
    const { settings, store } = await openStore(ctx);
    const encryptionKey = encryptionKeyFrom(values, ctx.env);
    out.hide(encryptionKey);
    const trust = trustFrom(values, encryptionKey);
    const profiles = listValue(values, 'profiles');
    const namespaces = listValue(values, 'namespaces');
    const waitSeconds = positiveInteger(values, 'wait-timeout', 300, 86_400);
    const mover = { ...moverConfigFrom(values), jobNamespace: jobNamespaceFrom(ctx), restoreVolumesBy: values['volumes-in-namespace'] === true ? 'in-namespace' as const : 'handover' as const };
    const includeVolumes = values['no-volumes'] !== true;
    const kube = await kubeClientFrom(values);
    try {
      const { runRestore } = await import('../../restore/engine.ts');
      const outcome = await runRestore(kube, store, {
        wording: cliWording,
        backupId: id,
        ...(profiles ? { profiles } : {}),
        ...(namespaces ? { namespaces } : {}),
        conflictPolicy: policy,
        dryRun: values['dry-run'] === true,
        includeVolumes,
        trust,
        waitTimeoutMs: waitSeconds * 1000,
        skipRefused: values['skip-refused'] === true,
        skipUnserved: values['skip-unserved'] === true,
        includeResources: listValue(values, 'include-resources') ?? [],
        excludeResources: listValue(values, 'exclude-resources') ?? [],
        storageClassMap: stringValue(values, 'storage-class-map') ?? '',
        ...(includeVolumes ? { volumes: volumeRestoreStep(kube, settings, mover, { encryptionKey }) } : {}),
        progress: (m) => out.progress(m),
      });
      out.result(restoreLines(outcome), outcome);
      return outcome.totals.failed > 0 ? 1 : 0;
    } catch (error) {
      if (error instanceof RestoreInputError) throw new UsageError(await describeFailure(error));
      const offenders = error instanceof RestoreRefusedError ? error.offenders : [];
      out.error(`The restore ${error instanceof RestoreRefusedError ? 'was refused' : 'failed'}: ${await describeFailure(error, settings)}`);
      for (const o of offenders.slice(0, 20)) out.error(`  ${o}`);
      return 1;
    } finally {
      kube.close();
    }
  },
};
