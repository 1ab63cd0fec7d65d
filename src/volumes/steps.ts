// The volume mover as the engines' volume steps, for backup and for restore: the one adapter the charm's actions and the
// CLI commands share, so both read the S3 settings the same way (AWS without an endpoint included) and report alike.
import type { RestoreVolumeStep, VolumeStep } from '../steps.ts';
import type { KubeClient } from '../kube/client.ts';
import type { S3Settings } from '../store/settings.ts';
import type { VolumeProgress } from './mover.ts';
import { moverS3Settings } from './settings.ts';
import { formatBytes } from '../format-bytes.ts';
import type { ReuseTrust } from './reuse.ts';
import type { VolumeEntry } from '../archive/manifest.ts';
import { resticPassword } from './restic/password.ts';
import type { EngineName } from './engine.ts';
import { engineNamed, rcloneEngine, resticEngine } from './engines.ts';

// The mover and its port load when a step runs, not when an action or command that may never copy a volume starts.
const mover = () => Promise.all([import('./mover.ts'), import('./kube-client-port.ts')]);

/** How mover Jobs are run: `volume-mover-*` config of the charm, `--mover-*` flags of the CLI. */
export interface MoverConfig {
  /**
   * `volume-mover-image`, `--mover-image`: the image of the configured engine's Jobs; '' for the engine's pinned image
   * (the resolution is the engines' one rule, ./engine.ts imageOf)
   */
  image: string;
  concurrency: number;
  /** seconds a mover's Pod may take to start running */
  startTimeoutSeconds: number;
  /** requests = limits of each mover, e.g. `cpu=1,memory=1Gi`; '' sets none */
  resources: string;
  /**
   * 'restic' (volume-mover-engine, the charm's and the CLI's default): volume data in per-namespace restic
   * repositories; 'rclone' or unset: plain files
   */
  engine?: EngineName;
  /**
   * where the restic key Job runs (the charm's model namespace, the CLI's --job-namespace): it gives repositories
   * written before the passwords were per namespace their own (src/volumes/restic/rekey.ts), and never runs in a
   * profile namespace
   */
  jobNamespace?: string;
  /**
   * an image with rclone for the movers' gateway (the charm's control-plane-rclone-image), and the setting that names
   * it; the gateway runs in `jobNamespace`, so that no bucket credential enters a profile namespace
   */
  gateway?: { image: string; imageSetting: string };
}

/** The movers' gateway, where the config gives it a namespace (restic/gateway.ts, files-gateway.ts). */
function gatewayOf(config: MoverConfig): { namespace: string; image: string; imageSetting: string } | undefined {
  return config.jobNamespace && config.gateway ? { namespace: config.jobNamespace, ...config.gateway } : undefined;
}

/**
 * Before the movers open `namespaces`' repositories with their namespace's password: those whose repository exists get
 * it, in one Job in the job namespace (src/volumes/restic/rekey.ts migrateToNamespacePasswords). Without a key there
 * is nothing to do.
 */
async function migrateRepositories(kube: KubeClient, s3: S3Settings, config: MoverConfig, encryptionKey: string | Buffer | undefined, namespaces: readonly string[], runId: string): Promise<void> {
  const [{ isKeyed }, { migrateToNamespacePasswords }, { volumeKubeFromClient }, { openObjectStore }, { existingRepositories }] = await Promise.all([
    import('./restic/password.ts'), import('./restic/rekey.ts'), import('./kube-client-port.ts'), import('../store/open.ts'), import('./restic/repositories.ts'),
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
    image: resticEngine.imageFor(config), startTimeoutSeconds: config.startTimeoutSeconds,
  });
}

function describe(verb: string, p: VolumeProgress): string {
  if (p.copying) {
    const c = p.copying;
    return `${verb} ${p.done}/${p.total} PVC(s); ${c.namespace}/${c.pvc}: ${c.files}/${c.totalFiles} files, ${formatBytes(c.bytes)} of ${formatBytes(c.totalBytes)} so far`;
  }
  const what = p.result
    ? ` (${p.result.namespace}/${p.result.pvc}: ${p.result.skipped ? p.result.skipped : `${p.result.files} files`})`
    : p.failure ? ` (${p.failure.namespace}/${p.failure.pvc} failed)` : '';
  return `${verb} ${p.done}/${p.total} PVC(s)${what}`;
}

/**
 * Backup: each PVC's files into the bucket; a claim that was never bound is recorded as unbound, with no data. A PVC
 * an earlier complete backup of this location holds is copied incrementally (src/volumes/reuse.ts): its unchanged
 * files are copied inside the bucket, and the entry says how many bytes were uploaded and how many reused. With the
 * encryption key in `trust`, only backups whose HMAC verifies under it are copied from.
 */
export function volumeBackupStep(kube: KubeClient, s3: S3Settings, config: MoverConfig, trust: ReuseTrust = {}): VolumeStep {
  return async (backupId, pvcs, progress) => {
    const [[{ backupVolumes }, { volumeKubeFromClient }], { reusableBackups, reusedByListing, resticParents }, { openBackupStore }] =
      await Promise.all([mover(), import('./reuse.ts'), import('../store/open.ts')]);
    const store = openBackupStore(s3);
    const engine = engineNamed(config.engine ?? 'rclone');
    if (engine === resticEngine) {
      await migrateRepositories(kube, s3, config, trust.encryptionKey, pvcs.map((p) => p.namespace), `backup ${backupId}`);
      const parents = await resticParents(store, backupId, pvcs, trust);
      // the bucket from its root, through this process's own client (the repositories' keys include the path)
      const { openObjectStore } = await import('../store/open.ts');
      const bucket = openObjectStore({ ...s3, path: '' });
      const results = await backupVolumes(volumeKubeFromClient(kube), {
        backupId,
        pvcs: pvcs.map(({ namespace, name }) => ({ namespace, name })),
        s3: moverS3Settings(s3),
        image: engine.imageFor(config),
        concurrency: config.concurrency,
        startTimeoutSeconds: config.startTimeoutSeconds,
        resources: config.resources,
        engine: engine.name,
        restic: { password: (namespace) => resticPassword(trust.encryptionKey, namespace), parents, listBucket: (prefix) => bucket.list(prefix), gateway: gatewayOf(config) },
        onProgress: (p) => void progress(describe('backed up the data of', p)),
      }).finally(() => bucket.client.destroy());
      return results.map((r) => ({
        // the repository's folder relative to the location prefix, as every entry's key is
        namespace: r.namespace, pvc: r.pvc, key: r.restic ? `restic/${r.namespace}` : store.keys(backupId).volume(r.namespace, r.pvc), files: r.files, bytes: r.bytes,
        ...(r.skipped ? { unbound: true as const } : {}),
        ...(r.restic ? { bytesUploaded: r.restic.dataAdded ?? 0, restic: { repository: r.restic.repository, snapshot: r.restic.snapshot } } : {}),
      }));
    }
    const copyFrom = await reusableBackups(store, backupId, pvcs, trust);
    const results = await backupVolumes(volumeKubeFromClient(kube), {
      copyFrom,
      backupId,
      pvcs: pvcs.map(({ namespace, name }) => ({ namespace, name })),
      s3: moverS3Settings(s3),
      image: engine.imageFor(config),
      concurrency: config.concurrency,
      startTimeoutSeconds: config.startTimeoutSeconds,
      resources: config.resources,
      gateway: gatewayOf(config),
      onProgress: (p) => void progress(describe('copied the data of', p)),
    });
    const keys = store.keys(backupId);
    return Promise.all(results.map(async (r) => {
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
    }));
  };
}

/**
 * Restore: fills the PVCs the restore marked (src/volumes/fill-mark.ts) from the backup: a PVC whose entry in the
 * authenticated manifest pins a restic snapshot from that snapshot (its repository's password from `trust`), any other
 * from the backup's copy of its files (the plain-file mover's backups stay restorable).
 */
export function volumeRestoreStep(kube: KubeClient, s3: S3Settings, config: MoverConfig, trust: ReuseTrust = {}): RestoreVolumeStep {
  return async (backupId, pvcs, progress, archived: readonly VolumeEntry[] = []) => {
    const [{ restoreVolumes }, { volumeKubeFromClient }] = await mover();
    const snapshots = new Map(archived.flatMap((e): Array<[string, string]> => (e.restic ? [[`${e.namespace}/${e.pvc}`, e.restic.snapshot]] : [])));
    // what the backup's restic counted (its summary), recorded beside the pinned id: what the restore reports
    const sizes = new Map(archived.flatMap((e): Array<[string, { files: number; bytes: number }]> => (e.restic ? [[`${e.namespace}/${e.pvc}`, { files: e.files, bytes: e.bytes }]] : [])));
    const inRestic = pvcs.filter((p) => snapshots.has(`${p.namespace}/${p.name}`));
    const asFiles = pvcs.filter((p) => !snapshots.has(`${p.namespace}/${p.name}`));
    const common = {
      backupId,
      s3: moverS3Settings(s3),
      concurrency: config.concurrency,
      startTimeoutSeconds: config.startTimeoutSeconds,
      resources: config.resources,
      onProgress: (p: VolumeProgress) => void progress(describe('filled', p)),
    };
    // an older backup's repository may still open with the shared password only: it gets its namespace's first
    if (inRestic.length > 0) await migrateRepositories(kube, s3, config, trust.encryptionKey, inRestic.map((p) => p.namespace), `restore ${backupId}`);
    const results = [
      ...(asFiles.length > 0 ? await restoreVolumes(volumeKubeFromClient(kube), {
        ...common, pvcs: asFiles, image: rcloneEngine.imageFor(config), gateway: gatewayOf(config),
      }) : []),
      ...(inRestic.length > 0 ? await restoreVolumes(volumeKubeFromClient(kube), {
        // volume-mover-image names the configured engine's image; the other engine runs its pinned one (imageFor)
        ...common, pvcs: inRestic, image: resticEngine.imageFor(config), engine: resticEngine.name,
        restic: { password: (namespace) => resticPassword(trust.encryptionKey, namespace), snapshots, sizes, gateway: gatewayOf(config) },
      }) : []),
    ];
    return { restored: results.length, bytes: results.reduce((sum, r) => sum + r.bytes, 0) };
  };
}
