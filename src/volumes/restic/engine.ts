// The restic engine: each PVC into its namespace's restic repository (`<prefix>/restic/<namespace>`, ./job.ts), as a
// snapshot tagged with the backup, namespace and PVC, encrypted and authenticated under the namespace's password
// (./password.ts), deduplicated against everything the repository holds. A restore writes the snapshot the
// authenticated manifest pins; restic checks the MAC of every blob it reads. Through the run's repository gateway
// (./gateway.ts) the movers hold no bucket credential.
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import { imageOf, PINNED_IMAGES, type EngineRunRequest, type MoverConfig, type VolumeEngine } from '../engine.ts';
import { nodeAffinity, statsPeriodSeconds } from '../job.ts';
import type { ResticMoveOptions } from '../move-types.ts';
import { finishMover, gatewayDidNotStart, gatewayFailure, runMoverJob } from '../mover-job.ts';
import { buildResticJob, buildResticSecret, resticRepositoryKey } from './job.ts';
import { parseResticBackup, parseResticProgress, parseResticRestore, resticFailureReason } from './outcome.ts';

function resticOptions(request: Pick<EngineRunRequest, 'restic'>): ResticMoveOptions {
  if (!request.restic) throw new Error('The restic mover needs the repository password.');
  return request.restic;
}

/**
 * Before the movers open `namespaces`' repositories with their namespace's password: those whose repository exists get
 * it, in one Job in the job namespace (./rekey.ts migrateToNamespacePasswords). Without a key there is nothing to do.
 */
async function migrateRepositories(kube: KubeClient, s3: S3Settings, config: MoverConfig, encryptionKey: string | Buffer | undefined, namespaces: readonly string[], runId: string): Promise<void> {
  const [{ isKeyed }, { migrateToNamespacePasswords }, { volumeKubeFromClient }, { openObjectStore }, { existingRepositories }, { moverS3Settings }] = await Promise.all([
    import('./password.ts'), import('./rekey.ts'), import('../kube-client-port.ts'), import('../../store/open.ts'), import('./repositories.ts'), import('../settings.ts'),
  ]);
  if (!isKeyed(encryptionKey) || namespaces.length === 0) return;
  const objects = openObjectStore(s3);
  let existing: string[];
  try {
    existing = await existingRepositories(objects, namespaces);
  } finally {
    objects.client.destroy();
  }
  if (existing.length === 0) return;
  if (!config.jobNamespace) throw new Error('The restic repositories need their own passwords before they are used, and no namespace was given for the restic key Job that sets them.');
  await migrateToNamespacePasswords(volumeKubeFromClient(kube), {
    jobNamespace: config.jobNamespace, namespaces: existing, s3: moverS3Settings(s3), encryptionKey, runId,
    image: imageOf('restic', config), startTimeoutSeconds: config.startTimeoutSeconds,
  });
}

export const resticEngine: VolumeEngine = {
  name: 'restic',
  defaultImage: PINNED_IMAGES.restic,
  keyed: true,
  gatewayNoun: 'repository gateway',
  imageFor: (config) => imageOf('restic', config),
  holds: (entry) => entry.restic !== undefined,

  async prepareBackup({ kube, s3, config, trust, store, backupId, pvcs }) {
    const [{ resticParents }, { openObjectStore }, { resticPassword }] = await Promise.all([import('../reuse.ts'), import('../../store/open.ts'), import('./password.ts')]);
    // a repository still opening with the shared password only gets its namespace's first
    await migrateRepositories(kube, s3, config, trust.encryptionKey, pvcs.map((p) => p.namespace), `backup ${backupId}`);
    // each PVC's snapshot in the newest trusted backup is its new snapshot's parent
    const parents = await resticParents(store, backupId, pvcs, trust);
    // the bucket from its root, through this process's own client (the repositories' keys include the path)
    const bucket = openObjectStore({ ...s3, path: '' });
    return {
      options: { restic: { password: (namespace) => resticPassword(trust.encryptionKey, namespace), parents, listBucket: (prefix) => bucket.list(prefix) } },
      verb: 'backed up the data of',
      close: () => bucket.client.destroy(),
      entry: async (r) => ({
        // the repository's folder relative to the location prefix, as every entry's key is
        namespace: r.namespace, pvc: r.pvc, key: r.restic ? `restic/${r.namespace}` : store.keys(backupId).volume(r.namespace, r.pvc), files: r.files, bytes: r.bytes,
        ...(r.skipped ? { unbound: true as const } : {}),
        ...(r.restic ? { bytesUploaded: r.restic.dataAdded ?? 0, restic: { repository: r.restic.repository, snapshot: r.restic.snapshot } } : {}),
      }),
    };
  },

  async prepareRestore({ kube, s3, config, trust, backupId, pvcs }, archived) {
    const { resticPassword } = await import('./password.ts');
    // an older backup's repository may still open with the shared password only: it gets its namespace's first
    await migrateRepositories(kube, s3, config, trust.encryptionKey, pvcs.map((p) => p.namespace), `restore ${backupId}`);
    const snapshots = new Map(archived.flatMap((e): Array<[string, string]> => (e.restic ? [[`${e.namespace}/${e.pvc}`, e.restic.snapshot]] : [])));
    // what the backup's restic counted (its summary), recorded beside the pinned id: what the restore reports
    const sizes = new Map(archived.flatMap((e): Array<[string, { files: number; bytes: number }]> => (e.restic ? [[`${e.namespace}/${e.pvc}`, { files: e.files, bytes: e.bytes }]] : [])));
    return { restic: { password: (namespace) => resticPassword(trust.encryptionKey, namespace), snapshots, sizes } };
  },

  async open(kube, operation, request) {
    const restic = resticOptions(request);
    // the gateway's certificates and the bucket client load when a run opens, not with the engine's name and image
    // a backup's gateway passes the bytes through (rclone serve restic --append-only); a restore's redirects each read to
    // the bucket (./restore-gateway.ts)
    const [{ startGateway }, { startRestoreGateway }, { bucketLister, resolveSnapshotId }] = await Promise.all([
      import('./gateway.ts'), import('./restore-gateway.ts'), import('./snapshot-id.ts'),
    ]);
    const start = operation === 'restore' ? startRestoreGateway : startGateway;
    const noun = operation === 'restore' ? 'restore gateway' : this.gatewayNoun;
    const gateway = request.gateway ? await start(kube, request.gateway).catch(gatewayDidNotStart(operation, noun, request.gateway.namespace)) : undefined;
    // The restore gateway is not waited for: its Pod and the movers' start together, the movers retrying its refused
    // connections for as long as it may take to start (RunningGateway.waitSeconds). Should it fail, the movers are stopped and
    // the run says why in the gateway's words.
    const gatewayFailed = new AbortController();
    gateway?.ready?.catch((error: unknown) => gatewayFailed.abort(error));
    const moverSignal = request.signal ? AbortSignal.any([request.signal, gatewayFailed.signal]) : gatewayFailed.signal;
    const access = (namespace: string) => (gateway
      ? { repository: gateway.repository(namespace), certificate: gateway.certificate, systemRoots: gateway.systemRoots, waitSeconds: gateway.waitSeconds }
      : undefined);
    // one S3 client per backup run, unless the caller lists with its own: it turns each snapshot's short id into its full one
    const lister = operation === 'backup' && !restic.listBucket ? bucketLister(request.s3) : undefined;
    const listBucket = restic.listBucket ?? lister?.list;
    // restic's `init` is not atomic on S3: two movers creating one namespace's repository at once each write a key and
    // a config, and the config left is one the other key cannot open ("config or key ... is damaged"). So the first
    // backup mover of each namespace runs alone, creating the repository if needed; the others follow it, at once. A
    // restore never creates one, and a namespace with a parent snapshot has one already: those start together.
    const hasRepository = (namespace: string) => operation === 'restore'
      || [...(restic.parents?.keys() ?? [])].some((id) => id.startsWith(`${namespace}/`));
    return {
      secret: (name, namespace) => buildResticSecret({
        name, namespace, backupId: request.backupId, operation, s3: request.s3, password: restic.password(namespace), gateway: access(namespace),
      }),
      opensAlone: (namespace) => !hasRepository(namespace),
      async move(kube, task) {
        const { pvcRef, nodeName } = task;
        const id = `${pvcRef.namespace}/${pvcRef.name}`;
        const snapshot = operation === 'restore' ? restic.snapshots?.get(id) : undefined;
        if (operation === 'restore' && !snapshot) throw new Error('the backup pins no restic snapshot for this PVC');
        const repository = resticRepositoryKey(request.s3, pvcRef.namespace);
        const job = buildResticJob({
          ...task.job,
          image: request.image ?? PINNED_IMAGES.restic,
          ...(nodeName ? { nodeAffinity: nodeAffinity(nodeName) } : {}),
          parent: operation === 'backup' ? restic.parents?.get(id) : undefined,
          snapshot,
          progressFps: 1 / statsPeriodSeconds(request.progressIntervalMs),
          gateway: access(pvcRef.namespace),
        });
        const { jobName, message } = await runMoverJob(kube, task, job, { ...request, signal: moverSignal }, {
          parseProgress: parseResticProgress,
          failureReason: (text) => resticFailureReason(text, [request.s3.secretKey, restic.password(pvcRef.namespace), ...(gateway?.secrets ?? [])]),
        }).catch((error: unknown) => {
          if (gatewayFailed.signal.aborted && request.gateway) throw new Error(gatewayFailure(noun, request.gateway.namespace, gatewayFailed.signal.reason));
          throw error;
        });
        const location = `s3://${request.s3.bucket}/${repository}`;
        if (operation === 'backup') {
          const outcome = parseResticBackup(message);
          if (!outcome) throw new Error(`mover Job ${jobName} completed without reporting its restic snapshot`);
          const full = outcome.snapshot ?? (listBucket ? await resolveSnapshotId(listBucket, repository, outcome.shortId) : undefined);
          if (!full) throw new Error(`mover Job ${jobName} reported restic snapshot ${outcome.shortId}, and the bucket was not listed for its full id`);
          await finishMover(kube, task, jobName);
          return {
            ...task.base, location, files: outcome.files, bytes: outcome.bytes, checksumVerified: true, durationMs: Date.now() - task.started,
            ...(nodeName ? { node: nodeName } : {}),
            restic: { snapshot: full, repository, dataAdded: outcome.dataAdded, filesUnmodified: outcome.filesUnmodified },
          };
        }
        const outcome = parseResticRestore(message);
        if (!outcome || outcome.snapshot !== snapshot) throw new Error(`mover Job ${jobName} completed without reporting the restic snapshot it restored`);
        await finishMover(kube, task, jobName);
        // the size the backup counted (the manifest's), else what a Job of an earlier version counted, else unknown: 0
        const size = restic.sizes?.get(id) ?? outcome.size ?? { files: 0, bytes: 0 };
        return {
          ...task.base, location, files: size.files, bytes: size.bytes, checksumVerified: true, durationMs: Date.now() - task.started,
          restic: { snapshot: outcome.snapshot, repository },
        };
      },
      close: async () => {
        lister?.close();
        await gateway?.stop();
      },
    };
  },
};
