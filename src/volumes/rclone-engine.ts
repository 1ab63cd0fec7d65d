// The plain-file engine: each PVC's files copied by rclone into `backups/<id>/volumes/<ns>/<pvc>/` of the bucket, in
// clear, checked file by file by size and MD5 (./job.ts). A backup of a PVC an earlier complete backup holds starts
// from that copy, made inside the bucket (./reuse.ts). Through the run's plain-file gateway (./files-gateway.ts) the
// movers hold no bucket credential.
import { backupKeys } from '../store/layout.ts';
import { imageOf, PINNED_IMAGES, type VolumeEngine } from './engine.ts';
import { buildCredentialsSecret, buildMoverJob, statsPeriodSeconds } from './job.ts';
import { finishMover, gatewayDidNotStart, runMoverJob } from './mover-job.ts';
import { failureReason, parseMovedTree } from './outcome.ts';
import { remotePath } from './settings.ts';

export const rcloneEngine: VolumeEngine = {
  name: 'rclone',
  defaultImage: PINNED_IMAGES.rclone,
  keyed: false,
  gatewayNoun: 'plain-file gateway',
  imageFor: (config) => imageOf('rclone', config),
  holds: (entry) => entry.restic === undefined,

  async prepareBackup({ store, backupId, pvcs, trust }) {
    const { reusableBackups, reusedByListing } = await import('./reuse.ts');
    // a PVC an earlier complete (and, with a key, authenticated) backup holds starts from that copy
    const copyFrom = await reusableBackups(store, backupId, pvcs, trust);
    const keys = store.keys(backupId);
    return {
      options: { copyFrom },
      verb: 'copied the data of',
      close: () => undefined,
      async entry(r) {
        const key = keys.volume(r.namespace, r.pvc);
        const reused = r.skipped ? { files: 0, bytes: 0 }
          : r.reused ?? (r.reusedFrom ? await reusedByListing(store, key, store.keys(r.reusedFrom).volume(r.namespace, r.pvc)) : { files: 0, bytes: 0 });
        return {
          namespace: r.namespace, pvc: r.pvc, key, files: r.files, bytes: r.bytes,
          ...(r.skipped ? { unbound: true as const } : {}),
          bytesUploaded: Math.max(0, r.bytes - reused.bytes),
          bytesReused: reused.bytes,
          filesReused: reused.files,
          ...(r.reusedFrom ? { reusedFrom: r.reusedFrom } : {}),
        };
      },
    };
  },

  prepareRestore: async () => ({}),

  async open(kube, operation, request) {
    // a backup's gateway first copies, inside the bucket, the earlier backups' copies the movers sync onto
    const seeds = operation === 'backup'
      ? request.pvcs.flatMap((p) => { const from = request.copyFrom?.get(`${p.namespace}/${p.name}`); return from ? [{ namespace: p.namespace, pvc: p.name, from }] : []; })
      : [];
    // the gateway's keys load when a run opens, not with the engine's name and image
    const { startFilesGateway } = await import('./files-gateway.ts');
    const gateway = request.gateway
      ? await startFilesGateway(kube, { ...request.gateway, seeds }).catch(gatewayDidNotStart(operation, this.gatewayNoun, request.gateway.namespace))
      : undefined;
    return {
      secret: (name, namespace) => buildCredentialsSecret({
        name, namespace, backupId: request.backupId, operation, s3: request.s3, gateway: gateway?.access(namespace),
      }),
      opensAlone: () => false,
      async move(kube, task) {
        const { pvcRef } = task;
        const reusedFrom = operation === 'backup' ? request.copyFrom?.get(`${pvcRef.namespace}/${pvcRef.name}`) : undefined;
        const copyDestPath = reusedFrom ? remotePath(request.s3, backupKeys(reusedFrom).volume(pvcRef.namespace, pvcRef.name)) : undefined;
        // through the gateway the mover's root is its namespace's folder of the backup, and the gateway made the reused copy
        const access = gateway?.access(pvcRef.namespace);
        const job = buildMoverJob({
          ...task.job,
          image: request.image ?? PINNED_IMAGES.rclone,
          remotePath: access ? pvcRef.name : task.path,
          ...(access ? { gateway: access, seeded: reusedFrom !== undefined } : {}),
          nodeName: task.nodeName,
          statsPeriodSeconds: statsPeriodSeconds(request.progressIntervalMs),
          ...(copyDestPath && !access ? { copyDestPath } : {}),
        });
        const { jobName, message } = await runMoverJob(kube, task, job, request, {
          failureReason: (text) => failureReason(text, [request.s3.secretKey, ...(gateway?.secrets ?? [])]),
        });
        const moved = parseMovedTree(message);
        if (!moved) throw new Error(`mover Job ${jobName} completed without reporting what it copied`);
        await finishMover(kube, task, jobName);
        return {
          ...task.base, ...moved, durationMs: Date.now() - task.started,
          ...(task.nodeName ? { node: task.nodeName } : {}),
          ...(reusedFrom ? { reusedFrom } : {}),
        };
      },
      close: async () => { await gateway?.stop(); },
    };
  },
};
