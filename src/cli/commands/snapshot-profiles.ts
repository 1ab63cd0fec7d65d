// snapshot-profiles: Profiles and their KFAM contributors only — quick to take before touching the profile controller.
import { cliWording } from '../remedy-wording.ts';
import { kubeClientFrom, kubeOptions } from '../kube-options.ts';
import { s3Options } from '../s3-options.ts';
import type { Command, CommandContext } from '../usage.ts';
import { listValue, stringValue } from '../usage.ts';
import { TOOL_VERSION } from '../version.ts';
import { DEFAULT_PROTECTED_GROUPS, DEFAULT_SELECTOR } from './backup-options.ts';
import { describeFailure, openStore, outputOptions } from './shared.ts';

export const snapshotProfilesCommand: Command = {
  name: 'snapshot-profiles',
  summary: 'back up Profiles and their contributors (RoleBindings and AuthorizationPolicies) only',
  synopsis: 'kubeflow-upgrader snapshot-profiles --s3-url s3://<bucket>/<prefix> [--profiles <list>] [options]',
  description:
    'A small backup of its own holding the Profiles and the two halves of each KFAM contributor, nothing else. Take one ' +
    'before refreshing kubeflow-profiles or the dashboard; restore it with `restore <id>` like any backup.',
  groups: [
    {
      title: 'What to snapshot',
      options: {
        profiles: { type: 'string', placeholder: '<list>', description: 'only these Profiles', default: 'every Profile' },
        'profile-namespace-selector': { type: 'string', placeholder: '<selector>', description: 'label selector that marks profile namespaces', default: DEFAULT_SELECTOR },
      },
    },
    { title: 'Kubernetes', options: kubeOptions },
    { title: 'S3', options: s3Options },
    { title: 'Output', options: outputOptions },
  ],
  positionals: [],
  examples: [
    'kubeflow-upgrader snapshot-profiles --s3-url s3://kubeflow-backups/prod',
    'kubeflow-upgrader snapshot-profiles --s3-url s3://backups/kf --profiles alice,bob --json',
  ],
  exitCodes: { ok: 'the snapshot is committed', failed: 'the snapshot failed; nothing was committed' },
  async run(ctx: CommandContext): Promise<number> {
    const { values, out } = ctx;
    const { settings, store } = await openStore(ctx);
    const profiles = listValue(values, 'profiles');
    const kube = await kubeClientFrom(values);
    try {
      const { runBackup } = await import('../../backup/engine.ts');
      const outcome = await runBackup(kube, store, {
        wording: cliWording,
        kind: 'snapshot-profiles',
        ...(profiles ? { profiles } : {}),
        includeVolumes: false,
        includeControlPlane: false,
        profileNamespaceSelector: stringValue(values, 'profile-namespace-selector') ?? DEFAULT_SELECTOR,
        protectedCrdGroups: DEFAULT_PROTECTED_GROUPS.split(','),
        toolVersion: TOOL_VERSION,
        progress: (m) => out.progress(m),
      });
      out.result(
        [`snapshot ${outcome.backupId} committed to ${outcome.location}`, `${outcome.profiles} Profile(s), ${outcome.contributors} contributor object(s), ${outcome.objects} objects in all, took ${outcome.durationSeconds}s`],
        { backupId: outcome.backupId, location: outcome.location, profiles: outcome.profiles, contributors: outcome.contributors, objects: outcome.objects, durationSeconds: outcome.durationSeconds },
      );
      return 0;
    } catch (error) {
      out.error(`The snapshot failed: ${await describeFailure(error, settings)}`);
      return 1;
    } finally {
      kube.close();
    }
  },
};
