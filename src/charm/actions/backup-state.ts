// The backup-state action: all Kubeflow state of the chosen profile namespaces into a new backup in S3.
import type { ActionContext } from '../action-context.ts';
import { backupRequest, volumeStep } from '../backup-steps.ts';
import { describeBackupFailure } from '../backup-failure.ts';

export async function run(ctx: ActionContext<'backup-state'>): Promise<void> {
  const s3 = await ctx.s3();
  const kube = await ctx.kube();
  const encryptionKey = await ctx.encryptionKey();
  const [{ runBackup }, { openObjectStore }] = await Promise.all([import('../../backup/engine.ts'), import('../../store/open.ts')]);
  const store = openObjectStore(s3);
  const params = ctx.params;
  let outcome;
  try {
    outcome = await runBackup(
      kube,
      store,
      backupRequest('backup-state', ctx.config, { name: ctx.modelName }, {
        namespaces: params.namespaces,
        includeVolumes: params['include-volumes'],
        includeControlPlane: params['include-control-plane'],
        description: params.description,
        ...(encryptionKey ? { encryptionKey } : {}),
        ...(params['include-volumes'] ? { volumes: volumeStep(kube, s3, ctx.config) } : {}),
        progress: (message) => ctx.progress(message),
      }),
    );
  } catch (error) {
    ctx.fail(describeBackupFailure(error));
  }
  await ctx.setResults({
    'backup-id': outcome.backupId,
    location: outcome.location,
    objects: outcome.objects,
    bytes: outcome.bytes,
    volumes: outcome.volumes.copied,
    'volume-bytes': outcome.volumes.bytes,
    skipped: outcome.skipped,
    'duration-seconds': outcome.durationSeconds,
    namespaces: outcome.namespaces,
    profiles: outcome.profiles,
    contributors: outcome.contributors,
    secrets: encryptionKey ? `${outcome.sealedSecrets} sealed with the encryption-key` : `${outcome.clearSecrets} stored in clear: set encryption-key to seal them`,
    notes: [outcome.volumes.note, outcome.controlPlane.note, ...outcome.controlPlane.notCovered].filter(Boolean),
  });
}
