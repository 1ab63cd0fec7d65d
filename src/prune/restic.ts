// What deleting backups means for the restic repositories (src/volumes/restic): the snapshots a deleted backup's
// manifest pins are forgotten, by id, and each repository that held one is pruned once. The ids come only from
// manifests this run trusts (with `encryption-key` set: whose HMAC verifies under it), never from snapshot tags, which
// anyone who can write the bucket could put on a snapshot of their choosing (and, without a key, the repository
// password is published). Prune needs restic's exclusive lock, so it never runs beside a backup or a restore.
import { unauthenticatedReason } from '../archive/authenticate.ts';
import type { Manifest } from '../archive/manifest.ts';
import { describeInline, KfuError } from '../errors/index.ts';
import { formatBytes } from '../format-bytes.ts';
import { jobFinished } from '../jobs/outcome.ts';
import type { BackupFolder, BackupStore } from '../store/backup-store.ts';
import { moverSelector } from '../volumes/labels.ts';
import type { ResticPruneMode, ResticPruneResult } from '../volumes/restic/prune.ts';
import type { MoverPort } from './movers.ts';

/** How the engine reaches the repositories: a Job per repository in the cluster (src/volumes/restic/prune.ts). */
export interface ResticRepositories {
  /** the encryption key set now: with one, a manifest is trusted only when its HMAC verifies under it */
  encryptionKey?: string | Buffer | undefined;
  /** the key in the bucket of a namespace's repository, as the movers write it (`<path>/restic/<namespace>`) */
  repositoryKey(namespace: string): string;
  /** the same relative to the backup location, to list its objects through the store */
  locationKey(namespace: string): string;
  run(namespace: string, mode: ResticPruneMode, snapshots: readonly string[]): Promise<ResticPruneResult>;
}

/** prune-backups would have to run beside a backup or a restore: it refuses, in one sentence, having changed nothing. */
export class PruneRefusedError extends KfuError {
  static override readonly errorId = 'PruneRefusedError';
  constructor(sentence: string) {
    super(sentence, { kind: 'refused' });
  }
}

/** One repository's share of the run. */
export interface RepositoryPrune {
  namespace: string;
  /** `s3://bucket/<path>/restic/<namespace>` */
  repository: string;
  /** the deleted backups whose snapshots are forgotten here */
  backups: string[];
  /** snapshots forgotten (dry run: that would be) */
  snapshotsForgotten: number;
  /** the repository's objects before and after, summed from the bucket's listing; absent on a dry run */
  bytesBefore?: number;
  bytesAfter?: number;
  bytesFreed?: number;
  /** restic prune's own "total prune:" count of blobs and bytes */
  resticTotal?: string;
}

export interface ResticPlan {
  /** namespace → the snapshots to forget and the backups that pinned them */
  forget: Map<string, { snapshots: Set<string>; backups: Set<string> }>;
  notes: string[];
}

const wholeManifest = async (store: BackupStore, id: string, encryptionKey: string | Buffer | undefined) =>
  store.readManifest(id, { encryptionKey });

function pins(manifest: Manifest): Array<{ namespace: string; repository: string; snapshot: string }> {
  return manifest.volumes.flatMap((v) => (v.restic ? [{ namespace: v.namespace, repository: v.restic.repository, snapshot: v.restic.snapshot }] : []));
}

/**
 * The snapshots the deleted backups pin, less any a kept backup pins too. A deleted backup whose manifest this run
 * cannot trust has nothing forgotten on its word; one note says so.
 */
export async function planResticForget(store: BackupStore, deleted: readonly string[], kept: readonly string[], restic: Pick<ResticRepositories, 'encryptionKey' | 'repositoryKey'> | undefined): Promise<ResticPlan> {
  const plan: ResticPlan = { forget: new Map(), notes: [] };
  const keyed = restic?.encryptionKey !== undefined && restic.encryptionKey.length > 0;
  for (const id of deleted) {
    const read = await wholeManifest(store, id, restic?.encryptionKey);
    if (read.state === 'absent') continue; // a folder without our manifest pins nothing
    if (read.state === 'invalid') {
      plan.notes.push(`Backup ${id}'s manifest cannot be read (${read.reason}), so no restic snapshot was forgotten on its word; whatever data only its snapshots hold stays in the repositories.`);
      continue;
    }
    const claimed = pins(read.manifest);
    if (claimed.length === 0) continue;
    const untrusted = read.changed ?? (keyed && read.authentication !== 'authenticated' ? unauthenticatedReason(read.authentication === 'mismatch' ? 'mismatch' : 'no-hmac') : undefined);
    if (untrusted) {
      plan.notes.push(`Backup ${id} is not trusted (${untrusted}), so none of the ${claimed.length} restic snapshot(s) its manifest names was forgotten; whatever data only they hold stays in the repositories.`);
      continue;
    }
    for (const pin of claimed) {
      // A pin into another location's repository (the location's path changed since) is not this run's to prune.
      // Without the repositories at hand (no cluster), every pin counts, so that the run refuses rather than lose it.
      if (restic && pin.repository !== restic.repositoryKey(pin.namespace)) {
        plan.notes.push(`Backup ${id} pins a restic snapshot in ${pin.repository}, not in this location's repository of ${pin.namespace}; it was not forgotten.`);
        continue;
      }
      const entry = plan.forget.get(pin.namespace) ?? { snapshots: new Set<string>(), backups: new Set<string>() };
      entry.snapshots.add(pin.snapshot);
      entry.backups.add(id);
      plan.forget.set(pin.namespace, entry);
    }
  }
  if (plan.forget.size === 0) return plan;
  // Whatever a kept backup names stays, trusted or not: keeping a snapshot is never the unsafe side.
  for (const id of kept) {
    const read = await wholeManifest(store, id, undefined);
    if (read.state !== 'present') continue;
    for (const pin of pins(read.manifest)) plan.forget.get(pin.namespace)?.snapshots.delete(pin.snapshot);
  }
  for (const [namespace, entry] of plan.forget) if (entry.snapshots.size === 0) plan.forget.delete(namespace);
  return plan;
}

const minutes = (ms: number) => Math.max(1, Math.round(ms / 60_000));
const NEEDS_LOCK = "pruning a restic repository needs restic's exclusive lock";

/**
 * Why a restic prune cannot run now, as the one sentence that refuses it, or undefined: a backup still being written
 * (a folder without its marker written to within the grace period), a volume mover (backup or restore) not finished.
 */
export async function resticBusy(folders: readonly BackupFolder[], movers: MoverPort, graceMs: number, now: Date): Promise<string | undefined> {
  const running = folders.find((f) => f.ours && !f.complete && now.getTime() - Math.max(f.lastWrite?.getTime() ?? 0, f.created?.getTime() ?? 0) < graceMs);
  if (running) {
    const ago = now.getTime() - (running.lastWrite ?? running.created ?? now).getTime();
    return `Nothing was pruned: backup ${running.id} is still being written (written to ${minutes(ago)} minute(s) ago, and not committed), and ${NEEDS_LOCK}; run it again once that backup has finished.`;
  }
  const active = (await movers.list('jobs', moverSelector())).find((job) => !jobFinished(job));
  if (active) {
    return `Nothing was pruned: volume-mover Job ${active.metadata.namespace}/${active.metadata.name} is running (a backup or a restore), and ${NEEDS_LOCK}; run it again once it has finished.`;
  }
  return undefined;
}

export function lockedSentence(repository: string, locks: number): string {
  return `Nothing was pruned: the restic repository ${repository} holds ${locks} lock(s) of another restic (a backup or restore running, or one stopped less than 30 minutes ago), and ${NEEDS_LOCK}; run it again once it has finished.`;
}

const folderOf = (locationKey: string) => (locationKey.endsWith('/') ? locationKey : `${locationKey}/`);

/** The repository's size in the bucket: every object under its key, summed. */
export async function repositoryBytes(store: BackupStore, locationKey: string): Promise<{ bytes: number; objects: number }> {
  let bytes = 0;
  let objects = 0;
  for await (const object of store.listObjects(folderOf(locationKey))) {
    bytes += object.size;
    objects++;
  }
  return { bytes, objects };
}

/** Whether the repository holds any lock file (restic's `locks/`), live or stale: only then is a check Job needed. */
export async function holdsLockFiles(store: BackupStore, locationKey: string): Promise<boolean> {
  for await (const object of store.listObjects(`${folderOf(locationKey)}locks/`)) if (object.size > 0) return true;
  return false;
}

export interface RepositoriesInput {
  folders: readonly BackupFolder[];
  /** complete backups the plan deletes, and the ones it keeps */
  deleted: readonly string[];
  kept: readonly string[];
  restic: ResticRepositories | undefined;
  movers: MoverPort | undefined;
  dryRun: boolean;
  graceMs: number;
  now: Date;
  progress?: ((message: string) => Promise<void> | void) | undefined;
}

export interface RepositoriesOutcome {
  repositories: RepositoryPrune[];
  /** deleted backups that pin into a repository that could not be pruned: they stay, and a rerun tries again */
  held: Set<string>;
  notes: string[];
}

/**
 * Forgets the deleted backups' trusted pins and prunes each repository once. Throws a PruneRefusedError, having changed
 * nothing, when that cannot be done safely now: no cluster to run restic in, a backup or mover running, a live lock.
 */
export async function pruneRepositories(store: BackupStore, input: RepositoriesInput): Promise<RepositoriesOutcome> {
  const forgetting = await planResticForget(store, input.deleted, input.kept, input.restic);
  const outcome: RepositoriesOutcome = { repositories: [], held: new Set(), notes: [...forgetting.notes] };
  if (forgetting.forget.size === 0) return outcome;
  const restic = input.restic;
  if (!restic || !input.movers) {
    const ids = [...new Set([...forgetting.forget.values()].flatMap((e) => [...e.backups]))].sort();
    const sentence = `Nothing was pruned: backups ${ids.join(', ')} hold restic snapshots, which only a restic Job in the cluster can forget, and the cluster could not be reached.`;
    if (!input.dryRun) throw new PruneRefusedError(sentence);
    outcome.notes.push(sentence.replace(/^Nothing was pruned: /, 'A run now would refuse: '));
    return outcome;
  }
  const busy = await resticBusy(input.folders, input.movers, input.graceMs, input.now);
  if (busy && !input.dryRun) throw new PruneRefusedError(busy);
  if (busy) outcome.notes.push(busy.replace(/^Nothing was pruned: /, 'A run now would refuse: '));
  const repositories = [...forgetting.forget].map(([namespace, entry]) => ({ namespace, entry, key: restic.locationKey(namespace), url: store.url(restic.locationKey(namespace)) }));
  if (input.dryRun) {
    outcome.repositories = repositories.map(({ namespace, entry, url }) => ({ namespace, repository: url, backups: [...entry.backups].sort(), snapshotsForgotten: entry.snapshots.size }));
    return outcome;
  }
  // Locks first, in every repository, before anything is forgotten anywhere: a refusal then changes nothing.
  for (const { namespace, key, url } of repositories) {
    // restic ignores an empty lock file (internal/restic/lock.go ForAllLocks), and so does this look
    if (!(await holdsLockFiles(store, key))) continue;
    const checked = await restic.run(namespace, 'check', []);
    if (checked.state === 'locked') throw new PruneRefusedError(lockedSentence(url, checked.locks));
  }
  const failures: string[] = [];
  for (const { namespace, entry, key, url } of repositories) {
    const snapshots = [...entry.snapshots].sort();
    const before = await repositoryBytes(store, key);
    let why: string | undefined;
    try {
      const result = await restic.run(namespace, 'prune', snapshots);
      if (result.state === 'pruned') {
        const after = await repositoryBytes(store, key);
        const forgotten = snapshots.length - result.ignored;
        const freed = Math.max(0, before.bytes - after.bytes);
        outcome.repositories.push({
          namespace, repository: url, backups: [...entry.backups].sort(), snapshotsForgotten: forgotten,
          bytesBefore: before.bytes, bytesAfter: after.bytes, bytesFreed: freed, ...(result.totalPrune ? { resticTotal: result.totalPrune } : {}),
        });
        await input.progress?.(`pruned restic repository ${url}: ${forgotten} snapshot(s) forgotten, ${formatBytes(freed)} freed`);
        continue;
      }
      why = result.state === 'locked' ? 'another restic took a lock meanwhile' : 'restic did not prune it';
    } catch (error) {
      why = describeInline(error);
    }
    for (const id of entry.backups) outcome.held.add(id);
    failures.push(`${url} (${why})`);
  }
  if (failures.length > 0) {
    outcome.notes.push(`The restic repositories ${failures.join('; ')} were not pruned, so backups ${[...outcome.held].sort().join(', ')} were kept; run the prune again once that is fixed.`);
  }
  return outcome;
}
