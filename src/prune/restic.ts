// What deleting backups means for the restic repositories (src/volumes/restic): the snapshots a deleted backup's
// manifest pins are forgotten, by id, and each repository that held one is pruned once. The ids come only from
// manifests this run trusts (with `encryption-key` set: whose HMAC verifies under it), never from snapshot tags, which
// anyone who can write the bucket could put on a snapshot of their choosing (and, without a key, the repository
// password is published). Prune needs restic's exclusive lock: it never runs beside a backup its signed run record
// proves, and a repository a live restic holds (a lock that decrypts, within restic's stale timeout) keeps its backups
// for the next run while the others are pruned. A lock file that does not decrypt proves nothing.
import { unauthenticatedReason } from '../archive/authenticate.ts';
import type { Manifest } from '../archive/manifest.ts';
import { describeInline, KfuError } from '../errors/index.ts';
import { formatBytes } from '../format-bytes.ts';
import type { BackupStore } from '../store/backup-store.ts';
import type { ResticPruneMode, ResticPruneResult, SeenLock } from '../volumes/restic/prune.ts';
import type { Wording } from '../errors/remedy.ts';
import { CONTROL_PLANE_REPOSITORY } from '../controlplane/restic-password.ts';

/** How the engine reaches the repositories: a Job per repository in the cluster (src/volumes/restic/prune.ts). */
export interface ResticRepositories {
  /** the key in the bucket of a namespace's repository, as the movers write it (`<path>/restic/<namespace>`) */
  repositoryKey(namespace: string): string;
  /** the same relative to the backup location, to list its objects through the store */
  locationKey(namespace: string): string;
  /** the folder of the location that holds every namespace's repository (`restic/`) */
  readonly repositoriesFolder: string;
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

const NEEDS_LOCK = "pruning a restic repository needs restic's exclusive lock";

const wholeManifest = async (store: BackupStore, id: string, encryptionKey: string | Buffer | undefined) =>
  store.readManifest(id, { encryptionKey });

function pins(manifest: Manifest): Array<{ namespace: string; repository: string; snapshot: string }> {
  return [
    ...manifest.volumes.flatMap((v) => (v.restic ? [{ namespace: v.namespace, repository: v.restic.repository, snapshot: v.restic.snapshot }] : [])),
    // with a key, the control-plane copies: snapshots of the control-plane repository, named as a namespace's would be
    ...(manifest.extras.controlPlane?.entries ?? []).flatMap((e) => (e.restic ? [{ namespace: CONTROL_PLANE_REPOSITORY, repository: e.restic.repository, snapshot: e.restic.snapshot }] : [])),
  ];
}

/**
 * The snapshots the deleted backups pin, less any a kept backup pins too. A deleted backup whose manifest this run
 * cannot trust has nothing forgotten on its word; one note says so.
 */
export async function planResticForget(store: BackupStore, deleted: readonly string[], kept: readonly string[], encryptionKey: string | Buffer | undefined, restic: Pick<ResticRepositories, 'repositoryKey'> | undefined): Promise<ResticPlan> {
  const plan: ResticPlan = { forget: new Map(), notes: [] };
  const keyed = encryptionKey !== undefined && encryptionKey.length > 0;
  for (const id of deleted) {
    const read = await wholeManifest(store, id, encryptionKey);
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

/** restic's own: a lock older than this is stale (restic/restic internal/restic/lock.go staleTimeout) */
export const RESTIC_STALE_MS = 30 * 60 * 1000;
/** a lock dated further ahead than this was not written by a restic whose clock is the cluster's */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** A backup being written, as its run record proves it (authenticated with a key): restic prune must not run beside it. */
export interface RunningBackup {
  id: string;
  started: Date;
  expires: Date;
  /** who writes it, as its run record says (src/backup/lease.ts) */
  holder?: string;
}

/**
 * Why a restic prune cannot run now, as the one sentence that refuses it, or undefined: a backup being written, proven
 * by its run record (src/archive/run-record.ts). A folder without such a record, a mover Job or any other object in a
 * profile namespace proves nothing and holds nothing up (a running restic takes a lock, judged per repository below).
 */
export function resticBusy(running: readonly RunningBackup[], wording: Wording): string | undefined {
  const first = [...running].sort((a, b) => a.started.getTime() - b.started.getTime())[0];
  if (!first) return undefined;
  return `Nothing was pruned: backup ${first.id} is being written (started ${first.started.toISOString()}; its run record holds until ${first.expires.toISOString()}), and ${NEEDS_LOCK}; ${wording.remedy({ fix: 'prune-again' })} once that backup has finished, or after ${first.expires.toISOString()} if it was stopped.`;
}

/** What prune makes of one lock file a check found: a live restic's, or one restic would not have written. */
export type LockVerdict =
  | { id: string; kind: 'live'; since: Date; staleAt: Date; holder: string; exclusive: boolean }
  /** `honoured`: restic itself still obeys it (one dated ahead is never stale), so the repository cannot be pruned */
  | { id: string; kind: 'foreign'; honoured: boolean; why: string };

/**
 * Judges the locks a check Job read (src/volumes/restic/prune.ts): one that decrypts under the repository's key and
 * was taken within restic's stale timeout is a live restic's; one that does not decrypt was not written by a restic
 * holding the key (restic itself passes over it); one dated ahead of now was not written by a restic on this cluster's
 * clock, and restic would obey it forever.
 */
export function classifyLocks(locks: readonly SeenLock[], now: Date): LockVerdict[] {
  return locks.map((seen): LockVerdict => {
    if (!seen.lock) return { id: seen.id, kind: 'foreign', honoured: false, why: "it does not decrypt under the repository's key" };
    const since = typeof seen.lock.time === 'string' ? new Date(seen.lock.time) : undefined;
    if (!since || Number.isNaN(since.getTime())) return { id: seen.id, kind: 'foreign', honoured: false, why: 'it records no time' };
    if (since.getTime() > now.getTime() + CLOCK_SKEW_MS) {
      return { id: seen.id, kind: 'foreign', honoured: true, why: `it is dated ${since.toISOString()}, ahead of now, so restic would never take it to be stale` };
    }
    const host = typeof seen.lock.hostname === 'string' ? seen.lock.hostname.slice(0, 80) : 'an unknown host';
    const pid = typeof seen.lock.pid === 'number' ? ` pid ${seen.lock.pid}` : '';
    return { id: seen.id, kind: 'live', since, staleAt: new Date(since.getTime() + RESTIC_STALE_MS), holder: `${host}${pid}`, exclusive: seen.lock.exclusive === true };
  });
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
  /** complete backups the plan deletes, and the ones it keeps */
  deleted: readonly string[];
  kept: readonly string[];
  /** backups being written, as their run records prove it */
  running: readonly RunningBackup[];
  /** with a key, a manifest is trusted only when its HMAC verifies under it */
  encryptionKey: string | Buffer | undefined;
  restic: ResticRepositories | undefined;
  /** whether the cluster can be reached, to run restic's Jobs in */
  cluster: boolean;
  dryRun: boolean;
  /** removes the lock files restic would not have written (the operator's explicit choice) */
  removeForeignLocks: boolean;
  now: Date;
  wording: Wording;
  progress?: ((message: string) => Promise<void> | void) | undefined;
}

export interface RepositoriesOutcome {
  repositories: RepositoryPrune[];
  /** deleted backups that pin into a repository that could not be pruned: they stay, and a rerun tries again */
  held: Set<string>;
  /** what prune found and did not obey, and why: foreign locks */
  ignored: Array<{ what: string; why: string }>;
  /** foreign lock files removed (remove-foreign-locks) */
  removedLocks: string[];
  notes: string[];
}

const dryNote = (sentence: string) => sentence.replace(/^Nothing was pruned: /, 'A run now would refuse: ');

/**
 * Forgets the deleted backups' trusted pins and prunes each repository once. Throws a PruneRefusedError, having changed
 * nothing, when that cannot be done safely anywhere now: no cluster to run restic in, or a backup being written. A lock
 * holds only its own repository: the backups pinning into it stay, and every other repository is pruned.
 */
export async function pruneRepositories(store: BackupStore, input: RepositoriesInput): Promise<RepositoriesOutcome> {
  const forgetting = await planResticForget(store, input.deleted, input.kept, input.encryptionKey, input.restic);
  const outcome: RepositoriesOutcome = { repositories: [], held: new Set(), ignored: [], removedLocks: [], notes: [...forgetting.notes] };
  const restic = input.restic;
  // asked to, every repository's foreign locks go, whether or not this run forgets anything there
  if (input.removeForeignLocks && !input.dryRun && restic && input.cluster && !resticBusy(input.running, input.wording)) {
    await clearForeignLocks(store, restic, new Set(forgetting.forget.keys()), input, outcome);
  }
  if (forgetting.forget.size === 0) return outcome;
  if (!restic || !input.cluster) {
    const ids = [...new Set([...forgetting.forget.values()].flatMap((e) => [...e.backups]))].sort();
    const sentence = `Nothing was pruned: backups ${ids.join(', ')} hold restic snapshots, which only a restic Job in the cluster can forget, and the cluster could not be reached; ${input.wording.remedy({ fix: 'prune-again' })} once it can be.`;
    if (!input.dryRun) throw new PruneRefusedError(sentence);
    outcome.notes.push(dryNote(sentence));
    return outcome;
  }
  const busy = resticBusy(input.running, input.wording);
  if (busy && !input.dryRun) throw new PruneRefusedError(busy);
  if (busy) outcome.notes.push(dryNote(busy));
  const repositories = [...forgetting.forget].map(([namespace, entry]) => ({ namespace, entry, key: restic.locationKey(namespace), url: store.url(restic.locationKey(namespace)) }));
  if (input.dryRun) {
    outcome.repositories = repositories.map(({ namespace, entry, url }) => ({ namespace, repository: url, backups: [...entry.backups].sort(), snapshotsForgotten: entry.snapshots.size }));
    return outcome;
  }
  const failures: string[] = [];
  for (const { namespace, entry, key, url } of repositories) {
    const hold = (why: string) => {
      for (const id of entry.backups) outcome.held.add(id);
      failures.push(`${url} (${why})`);
    };
    let why: string | undefined;
    try {
      // restic ignores an empty lock file (internal/restic/lock.go ForAllLocks), and so does this look
      if (await holdsLockFiles(store, key)) {
        const blocked = await judgeLocks(store, restic, namespace, key, url, input, outcome);
        if (blocked) {
          for (const id of entry.backups) outcome.held.add(id);
          outcome.notes.push(`${blocked} Backups ${[...entry.backups].sort().join(', ')} were kept for now.`);
          continue;
        }
      }
      const snapshots = [...entry.snapshots].sort();
      const before = await repositoryBytes(store, key);
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
    hold(why);
  }
  if (failures.length > 0) {
    outcome.notes.push(`The restic repositories ${failures.join('; ')} were not pruned, so backups ${[...outcome.held].sort().join(', ')} were kept; ${input.wording.remedy({ fix: 'prune-again' })} once that is fixed.`);
  }
  return outcome;
}

/** The foreign locks of the repositories this run does not prune (the ones it prunes are judged as it goes). */
async function clearForeignLocks(store: BackupStore, restic: ResticRepositories, pruning: ReadonlySet<string>, input: RepositoriesInput, outcome: RepositoriesOutcome): Promise<void> {
  for await (const folder of store.listFolders(restic.repositoriesFolder)) {
    const namespace = folder.slice(restic.repositoriesFolder.length).replace(/\/$/, '');
    const key = restic.locationKey(namespace);
    if (!namespace || pruning.has(namespace) || !(await holdsLockFiles(store, key))) continue;
    const blocked = await judgeLocks(store, restic, namespace, key, store.url(key), input, outcome);
    if (blocked) outcome.notes.push(blocked);
  }
}

/**
 * Reads one repository's locks through a check Job and judges them: foreign ones are named (and removed when the
 * operator asked); a live restic's lock, or a foreign one restic still obeys, holds this repository. Returns the
 * sentence that says what holds it, where, since when and what clears it, or undefined when it can be pruned.
 */
async function judgeLocks(store: BackupStore, restic: ResticRepositories, namespace: string, key: string, url: string, input: RepositoriesInput, outcome: RepositoriesOutcome): Promise<string | undefined> {
  const checked = await restic.run(namespace, 'check', []);
  if (checked.state !== 'locks') throw new Error('the lock check Job answered something else than the locks it found');
  const verdicts = classifyLocks(checked.locks, input.now);
  let honouredForeign = false;
  for (const verdict of verdicts) {
    if (verdict.kind !== 'foreign') continue;
    const what = `restic lock ${verdict.id.slice(0, 12)} in ${url}`;
    if (input.removeForeignLocks) {
      await store.removeObject(`${folderOf(key)}locks/${verdict.id}`);
      outcome.removedLocks.push(`${url}/locks/${verdict.id}`);
      await input.progress?.(`removed ${what}: ${verdict.why}`);
      continue;
    }
    honouredForeign ||= verdict.honoured;
    outcome.ignored.push({
      what,
      why: `${verdict.why}; ${verdict.honoured ? 'restic itself obeys it, so this repository cannot be pruned while it is there' : 'restic itself passes over it, and so does prune'} (${input.wording.remedy({ fix: 'remove-foreign-locks' })} to remove it)`,
    });
  }
  const live = verdicts.filter((v): v is Extract<LockVerdict, { kind: 'live' }> => v.kind === 'live').sort((a, b) => a.since.getTime() - b.since.getTime());
  const first = live[0];
  if (first) {
    return `The restic repository ${url} is locked by a running restic (${first.exclusive ? 'an exclusive' : 'a'} lock held by ${first.holder} since ${first.since.toISOString()}${live.length > 1 ? `, and ${live.length - 1} more` : ''}; restic takes it to be stale at ${first.staleAt.toISOString()} if that restic is gone), and ${NEEDS_LOCK}; ${input.wording.remedy({ fix: 'prune-again' })} once it has finished.`;
  }
  if (checked.count > checked.locks.length) {
    return `The restic repository ${url} holds ${checked.count} lock files, more than the ${checked.locks.length} one check reads, and ${NEEDS_LOCK}; ${input.wording.remedy({ fix: 'remove-foreign-locks' })} to remove the ones restic would not have written, then ${input.wording.remedy({ fix: 'prune-again' })}.`;
  }
  if (honouredForeign) {
    return `The restic repository ${url} holds a lock restic obeys but no restic on this cluster's clock wrote (see ignored), and ${NEEDS_LOCK}; ${input.wording.remedy({ fix: 'remove-foreign-locks' })} to remove it.`;
  }
  return undefined;
}
