// The volume movers as the engines' volume steps, for backup and for restore: the one adapter the charm's actions and
// the CLI commands share, so both read the S3 settings the same way (AWS without an endpoint included) and report
// alike. What differs by how the data is stored is the engine's (./engine.ts): a backup asks the configured engine to
// prepare its run and word each PVC's entry; a restore fills each PVC with the engine holding its entry's data.
import type { ProgressSink, RestoreVolumeStep, VolumeStep } from '../steps.ts';
import type { KubeClient } from '../kube/client.ts';
import type { S3Settings } from '../store/settings.ts';
import type { VolumeProgress } from './mover.ts';
import { moverS3Settings } from './settings.ts';
import { formatBytes } from '../format-bytes.ts';
import type { ReuseTrust } from './reuse.ts';
import type { VolumeEntry } from '../archive/manifest.ts';
import type { GatewayImages, MoverConfig } from './engine.ts';
import { ALL_ENGINES, engineHolding, engineNamed } from './engines.ts';

export type { MoverConfig } from './engine.ts';

// The mover and its port load when a step runs, not when an action or command that may never copy a volume starts.
const mover = () => Promise.all([import('./mover.ts'), import('./kube-client-port.ts')]);

/** The movers' gateway, where the config gives it a namespace (restic/gateway.ts, files-gateway.ts). */
function gatewayOf(config: MoverConfig): (GatewayImages & { namespace: string }) | undefined {
  return config.jobNamespace && config.gateway ? { namespace: config.jobNamespace, ...config.gateway } : undefined;
}

function describe(verb: string, p: VolumeProgress): string {
  if (p.copying) {
    const c = p.copying;
    return `${verb} ${p.done}/${p.total} PVC(s); ${c.namespace}/${c.pvc}: ${c.files}/${c.totalFiles} files, ${formatBytes(c.bytes)} of ${formatBytes(c.totalBytes)} so far`;
  }
  // a backup's PVC read from its snapshot, a restore's PVC filled by hand-over or in its namespace
  const from = p.result?.copy?.from === 'snapshot' ? ', from its snapshot' : '';
  const how = p.result?.restoredBy === 'handover' ? `, handed over as volume ${p.result.volume}` : p.result?.restoredBy === 'in-namespace' ? ', by a mover in its namespace' : '';
  const what = p.result
    ? ` (${p.result.namespace}/${p.result.pvc}: ${p.result.skipped ? p.result.skipped : `${p.result.files} files${from}`}${how})`
    : p.failure ? ` (${p.failure.namespace}/${p.failure.pvc} failed)` : '';
  return `${verb} ${p.done}/${p.total} PVC(s)${what}`;
}

/**
 * Backup: each PVC's data into the bucket by the configured engine; a claim that was never bound is recorded as
 * unbound, with no data. Plain files: a PVC an earlier complete backup of this location holds is copied incrementally
 * (src/volumes/reuse.ts), its unchanged files copied inside the bucket, and the entry says how many bytes were uploaded
 * and how many reused. restic: each PVC a snapshot in its namespace's repository, its parent the PVC's snapshot in the
 * newest trusted backup. With the encryption key in `trust`, only backups whose HMAC verifies under it are started from.
 */
export function volumeBackupStep(kube: KubeClient, s3: S3Settings, config: MoverConfig, trust: ReuseTrust = {}): VolumeStep {
  return async (backupId, pvcs, progress) => {
    const [[{ backupVolumes }, { volumeKubeFromClient }], { openBackupStore }] = await Promise.all([mover(), import('../store/open.ts')]);
    const store = openBackupStore(s3);
    const engine = engineNamed(config.engine ?? 'rclone');
    const refs = pvcs.map(({ namespace, name }) => ({ namespace, name }));
    const prepared = await engine.prepareBackup({ kube, s3, config, trust, store, backupId, pvcs: refs });
    let results;
    try {
      results = await backupVolumes(volumeKubeFromClient(kube), {
        backupId,
        pvcs: refs,
        s3: moverS3Settings(s3),
        image: engine.imageFor(config),
        concurrency: config.concurrency,
        startTimeoutSeconds: config.startTimeoutSeconds,
        resources: config.resources,
        engine: engine.name,
        gateway: gatewayOf(config),
        // a PVC whose driver has a VolumeSnapshotClass is read from its snapshot, exposed in the run's own namespace
        ...(config.jobNamespace ? { snapshots: { namespace: config.jobNamespace, className: config.snapshotClass } } : {}),
        ...prepared.options,
        onProgress: (p) => void progress(describe(prepared.verb, p)),
      });
    } finally {
      prepared.close();
    }
    // each entry says how its data was read: a snapshot's point in time, or a live copy
    return Promise.all(results.map(async (r) => ({ ...await prepared.entry(r), ...(r.copy ? { copy: r.copy } : {}) })));
  };
}

/**
 * Restore: fills the PVCs the restore marked (src/volumes/fill-mark.ts) from the backup, each by the engine holding its
 * entry's data in the authenticated manifest (a pinned restic snapshot, opened with its repository's password from
 * `trust`; else the backup's copy of its files), so a backup of either kind stays restorable whatever the configured
 * engine. volume-mover-image names the configured engine's image only: the other engine runs its pinned one.
 */
export function volumeRestoreStep(kube: KubeClient, s3: S3Settings, config: MoverConfig, trust: ReuseTrust = {}): RestoreVolumeStep {
  const handover = handoverOf(config);
  const step = async (backupId: string, pvcs: Array<{ namespace: string; name: string }>, progress: ProgressSink, archived: readonly VolumeEntry[] = []) => {
    const [{ restoreVolumes }, { volumeKubeFromClient }] = await mover();
    const entries = new Map(archived.map((e) => [`${e.namespace}/${e.pvc}`, e]));
    const groups = ALL_ENGINES
      .map((engine) => ({ engine, pvcs: pvcs.filter((p) => engineHolding(entries.get(`${p.namespace}/${p.name}`)) === engine) }))
      .filter((group) => group.pvcs.length > 0);
    // every engine is ready (an older backup's repository gets its namespace's password first) before any PVC is filled
    const runs = [];
    for (const group of groups) {
      runs.push({ ...group, options: await group.engine.prepareRestore({ kube, s3, config, trust, backupId, pvcs: group.pvcs }, archived) });
    }
    const results = [];
    for (const run of runs) {
      results.push(...await restoreVolumes(volumeKubeFromClient(kube), {
        backupId,
        pvcs: run.pvcs,
        s3: moverS3Settings(s3),
        image: run.engine.imageFor(config),
        concurrency: config.concurrency,
        startTimeoutSeconds: config.startTimeoutSeconds,
        resources: config.resources,
        engine: run.engine.name,
        gateway: gatewayOf(config),
        ...(handover ? { handover } : {}),
        ...run.options,
        onProgress: (p: VolumeProgress) => void progress(describe('filled', p)),
      }));
    }
    return {
      restored: results.length, bytes: results.reduce((sum, r) => sum + r.bytes, 0),
      pvcs: results.map((r) => ({ namespace: r.namespace, pvc: r.pvc, restoredBy: r.restoredBy ?? 'in-namespace', ...(r.volume ? { volume: r.volume } : {}) })),
    };
  };
  // the restore creates each PVC it fills reserved for the hand-over (./fill-mark.ts) when this step hands over
  return Object.assign(step, { handsOver: handover !== undefined });
}

/** The model's namespace a restore fills claims in and hands them over from; none when the config says in-namespace. */
function handoverOf(config: MoverConfig): { namespace: string } | undefined {
  return config.jobNamespace && (config.restoreVolumesBy ?? 'handover') === 'handover' ? { namespace: config.jobNamespace } : undefined;
}
