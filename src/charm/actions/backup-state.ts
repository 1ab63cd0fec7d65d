// The backup-state action: all Kubeflow state of the chosen profile namespaces into a new backup in S3.
import type { ActionContext } from '../action-context.ts';
import { actionLease, backupRequest, controlPlaneImages, moverConfig } from '../backup-steps.ts';
import { volumeBackupStep } from '../../volumes/steps.ts';
import { describeBackupFailure } from '../backup-failure.ts';
import { emptyDatabasesState, readControlPlane, type ControlPlaneView } from '../control-plane.ts';
import { controlPlaneBackupStep } from '../../controlplane/steps.ts';
import { lastBackupState } from '../last-backup.ts';
import type { BackupHandoff } from '../../workload/settings.ts';
import type { S3Settings } from '../../store/settings.ts';

/**
 * What the control-plane step copied, by relation: `kfp-db (database mlpipeline)`, `object-storage (bucket …)`.
 * `copied` names what the step reports copied: a database found without tables is dumped but never covered.
 */
function coveredParts(view: ControlPlaneView, copied: readonly string[]): string[] {
  const parts: string[] = [];
  for (const part of ['kfp-db', 'katib-db'] as const) if (view.targets[part] && copied.includes(part)) parts.push(`${part} (database ${view.targets[part].database})`);
  const storage = view.targets['object-storage'];
  if (storage && copied.some((name) => name.startsWith('minio/'))) parts.push(`object-storage (bucket${storage.buckets.length === 1 ? '' : 's'} ${storage.buckets.join(', ')})`);
  if (copied.includes('mlmd')) parts.push('mlmd (SQLite mlmd.db)');
  return parts;
}

/** backup-immutability set but not usable (a bad value, a bucket without Object Lock): nothing is written. */
export async function refuseUnlessImmutable(ctx: Pick<ActionContext<'backup-state' | 'snapshot-profiles' | 'prune-backups'>, 'charm' | 'fail'>, s3: S3Settings): Promise<void> {
  const { immutabilityRefusal } = await import('../immutability.ts');
  const refusal = await immutabilityRefusal(ctx.charm, s3);
  if (refusal) ctx.fail(refusal);
}

/**
 * wait=false: the backup goes to the workload container's service (src/service), which runs it as it runs a scheduled
 * one, under the same lease; the action names its id at once. The request is a file of mode 0600 pushed through Pebble.
 */
async function handOver(ctx: ActionContext<'backup-state'>): Promise<void> {
  const s3 = await ctx.s3();
  await refuseUnlessImmutable(ctx, s3);
  const [{ workloadOf }, { newBackupId }, { openBackupStore }, { SERVICE_NAME, workloadPaths, WORKLOAD_CONTAINER }] = await Promise.all([
    import('../workload.ts'), import('../../store/layout.ts'), import('../../store/open.ts'), import('../../workload/settings.ts'),
  ]);
  const { client, root } = workloadOf(ctx.charm);
  let running = false;
  let why = '';
  try {
    running = (await client.services([SERVICE_NAME]))[0]?.current === 'active';
    if (!running) why = 'its service is not active';
  } catch (error) {
    why = (error as Error).message;
  }
  if (!running) ctx.fail(`backup-state wait=false hands the backup to the ${WORKLOAD_CONTAINER} container's service, which cannot take it (${why}); run backup-state with wait=true, or again once the container is up.`);
  const id = newBackupId(new Date());
  const store = openBackupStore(s3);
  const handoff: BackupHandoff = {
    backupId: id, namespaces: [...ctx.params.namespaces], includeVolumes: ctx.params['include-volumes'], includeControlPlane: ctx.params['include-control-plane'],
    description: ctx.params.description,
  };
  await client.push(`${workloadPaths(root).requests}/${id}.json`, `${JSON.stringify(handoff)}\n`, { makeDirs: true, permissions: '600' });
  await ctx.setResults({
    'backup-id': id,
    location: store.url(store.keys(id).folder),
    status: 'handed to the service: list-backups shows it under running until it is committed, then among the backups',
    notes: ['it starts within seconds, or once the backup being written now (if any) has finished'],
  });
}

export async function run(ctx: ActionContext<'backup-state'>): Promise<void> {
  if (!ctx.params.wait) return handOver(ctx);
  // Checked first: a bucket in another region fails here, not in a Job halfway through.
  const s3 = await ctx.s3ForJobs();
  await refuseUnlessImmutable(ctx, s3);
  const kube = await ctx.kube();
  // A changed encryption-key first goes into the restic repositories, so this backup opens them with it.
  const { convergeResticKey } = await import('../restic-key.ts');
  const key = await convergeResticKey(ctx.charm);
  // only an engine whose data is encrypted under the key cannot back up before the key is in its store
  const { engineNamed } = await import('../../volumes/engines.ts');
  if (!key.done && key.blocksBackup && ctx.params['include-volumes'] && engineNamed(ctx.config['volume-mover-engine']).keyed) {
    ctx.fail(key.sentence ?? 'The new encryption-key is not in the restic repositories yet, so nothing was backed up.');
  }
  const encryptionKey = await ctx.encryptionKey();
  const [{ runBackup }, { openBackupStore }] = await Promise.all([import('../../backup/engine.ts'), import('../../store/open.ts')]);
  const store = openBackupStore(s3);
  const params = ctx.params;
  const controlPlane = params['include-control-plane'] ? await readControlPlane(ctx.charm, ctx.config) : undefined;
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
        ...(params['include-volumes'] ? { volumes: volumeBackupStep(kube, s3, { ...moverConfig(ctx.config), jobNamespace: ctx.modelName }, { encryptionKey }) } : {}),
        ...(controlPlane ? { controlPlane: controlPlaneBackupStep(kube, s3, controlPlaneImages(ctx.config), controlPlane, ctx.modelName, { encryptionKey }) } : {}),
        progress: (message) => ctx.progress(message),
        lease: actionLease(ctx.charm.context.unitName),
      }),
    );
  } catch (error) {
    ctx.fail(describeBackupFailure(error));
  }
  // For the status's "last backup" age: update-status then need not list S3.
  await ctx.stateSet({
    ...lastBackupState({ id: outcome.backupId, completed: new Date().toISOString() }),
    // For the status: a related database found empty stays said until a backup finds it holding tables.
    ...(controlPlane ? emptyDatabasesState(outcome.controlPlane.empty) : {}),
  }).catch(() => undefined);
  await ctx.setResults({
    'backup-id': outcome.backupId,
    location: outcome.location,
    objects: outcome.objects,
    bytes: outcome.bytes,
    volumes: outcome.volumes.copied,
    'volume-bytes': outcome.volumes.bytes,
    'volume-bytes-uploaded': outcome.volumes.uploaded,
    'volume-bytes-reused': outcome.volumes.reused,
    skipped: outcome.skipped,
    ...(outcome.leftOutNamespaces.length ? { 'left-out': leftOutLines(outcome.leftOutNamespaces) } : {}),
    ...(outcome.leftOutObjects.length ? { 'left-out-objects': leftOutObjectLines(outcome.leftOutObjects) } : {}),
    'duration-seconds': outcome.durationSeconds,
    namespaces: outcome.namespaces,
    profiles: outcome.profiles,
    contributors: outcome.contributors,
    secrets: encryptionKey ? `${outcome.sealedSecrets} sealed with the encryption-key` : `${outcome.clearSecrets} stored in clear: set encryption-key to seal them`,
    ...(controlPlane ? { 'control-plane': { covered: coveredParts(controlPlane, outcome.controlPlane.names).join('; ') || 'nothing', 'not-covered': outcome.controlPlane.notCovered, bytes: outcome.controlPlane.bytes } } : {}),
    notes: [outcome.volumes.note, outcome.controlPlane.note, ...outcome.controlPlane.notCovered].filter(Boolean),
  });
}

/** one line per namespace left out of the backup, with its reason; the manifest holds them all */
function leftOutLines(leftOut: ReadonlyArray<{ namespace: string; reason: string }>): string[] {
  const MAX = 50;
  const lines = leftOut.slice(0, MAX).map(({ namespace, reason }) => `${namespace}: ${reason}`);
  if (leftOut.length > MAX) lines.push(`and ${leftOut.length - MAX} more (listed in the backup's manifest)`);
  return lines;
}

/** one line per object left out of the backup that no controller makes, with its reason; the manifest holds them all */
function leftOutObjectLines(leftOut: ReadonlyArray<{ object: string; reason: string }>): string[] {
  const MAX = 100;
  const lines = leftOut.slice(0, MAX).map(({ object, reason }) => `${object}: ${reason}`);
  if (leftOut.length > MAX) lines.push(`and ${leftOut.length - MAX} more (listed in the backup's manifest)`);
  return lines;
}
