// The persistence seam: everything the engines store or read of a backup goes through a BackupStore, which alone knows
// the key layout (layout.ts) and the order in which a backup's files are committed. The shape follows Velero's
// BackupStore (vmware-tanzu/velero pkg/persistence/object_store.go: ListBackups, PutBackup, GetBackupMetadata,
// GetBackupContents, DeleteBackup, over an ObjectStore plugin, keys from pkg/persistence/object_store_layout.go);
// the commit differs on purpose: Velero's PutBackup writes velero-backup.json before the tarball, ours writes it last,
// so a folder without the marker is never a backup for list, restore or Velero (docs/architecture.md, "The archive").
// One implementation serves both backends: S3 (ObjectStore) and a Map (MemoryObjects) for engine tests and benches.
import type { Readable } from 'node:stream';
import { decodeManifest, decodeMarker, type ManifestRead, type MarkerRead } from '../archive/reader.ts';
import type { PendingBackup } from '../archive/pending-backup.ts';
import { RUN_RECORD_FILE } from '../archive/run-record.ts';
import { backupIdTime, backupKeys, backupNameOfFolder, BACKUPS_FOLDER, isBackupId, type BackupKeys } from './layout.ts';
import { MemoryObjects } from './memory-objects.ts';
// the writer's side of a backup being written, which the store implements
export type { BackupCommit, BackupFile, PendingBackup } from '../archive/pending-backup.ts';
import type { BackupObjects, ObjectInfo, ObjectStore } from './objects.ts';
import { retainUntil, type Immutability } from './immutability.ts';
import { S3ObjectLock, type ObjectLockPort, type WriteLock } from './object-lock.ts';
import { ObjectPendingBackup, RunRecordKeeper, type BeginBackupOptions } from './pending-writes.ts';
import { purgeVersions, type PurgeOutcome } from './version-purge.ts';
import { retainFolders, type RetainOutcome } from './retain.ts';
import { coveredReport, findCovered, uncover, type CoveredReport, type UncoverOutcome } from './version-reveal.ts';
export type { CoveredReport } from './version-reveal.ts';
export type { BackupObjects } from './objects.ts';
import { StoreError } from './objects.ts';

/** A folder under backups/, committed or not: what prune plans with and what reuse picks from. */
export interface BackupFolder {
  id: string;
  /** its velero-backup.json exists */
  complete: boolean;
  /** when the backup started (from its id); for a foreign name, the newest write; undefined when unknown */
  created: Date | undefined;
  /** the newest object in the folder: a running backup keeps this recent */
  lastWrite: Date | undefined;
  /** one of our ids (kf-…); foreign Velero backups in the same location are never pruned */
  ours: boolean;
}

export interface ReadManifestOptions {
  /** the user's encryption key: checks the marker's HMAC over the manifest's bytes as they arrive */
  encryptionKey?: string | Buffer | undefined;
  /** the marker already read, so it is not read again */
  marker?: MarkerRead;
}

export { DEFAULT_RUN_LEASE_MS, type BeginBackupOptions } from './pending-writes.ts';

export interface BackupStore {
  /** `s3://bucket/prefix/<key>` for a key relative to the location: where something lives, for sentences */
  url(key?: string): string;
  /** where each file of backup `id` lives, relative to the location: problems and results name files by these */
  keys(id: string): BackupKeys;
  /** the names of the folders under backups/, committed or not (Velero's ListBackups) */
  listBackupIds(): Promise<string[]>;
  /** every folder under backups/ with whether its marker is present and when it was written to */
  listBackupFolders(): Promise<BackupFolder[]>;
  /** whether anything of the backup itself is there (its marker, manifest or tarball): a wrong id finds none */
  holdsBackup(id: string): Promise<boolean>;
  readMarker(id: string): Promise<MarkerRead>;
  /** the typed manifest, its sha256 compared with the marker's and, with a key, its HMAC checked */
  readManifest(id: string, options?: ReadManifestOptions): Promise<ManifestRead>;
  /** the tarball's bytes, or undefined when there is none (Velero's GetBackupContents) */
  openTarball(id: string): Promise<Readable | undefined>;
  tarballSize(id: string): Promise<number | undefined>;
  /** a file of the backup folder by its name there (side files, the data-files index), or undefined when absent */
  openFile(id: string, name: string): Promise<Readable | undefined>;
  /** a small file of the backup folder, whole, or undefined when absent */
  readFile(id: string, name: string): Promise<Buffer | undefined>;
  /** the objects under a folder of the location (a backup's volumes/ or control-plane/), keys relative to the location */
  listObjects(folder: string): AsyncIterable<ObjectInfo>;
  /** the immediate sub-folders of a folder of the location (`restic/<namespace>/` under `restic/`), relative to it */
  listFolders(folder: string): AsyncIterable<string>;
  /**
   * opens a new backup; refuses an id whose folder holds anything, so a retried action never mixes two backups. The
   * backup's run record is written before it returns and renewed until the backup is committed or aborted.
   */
  beginBackup(id: string, options?: BeginBackupOptions): Promise<PendingBackup>;
  /** removes one object of the location by its key (a foreign restic lock prune was told to remove) */
  removeObject(key: string): Promise<void>;
  /** removes a backup, marker first: an interruption leaves an incomplete folder, never a backup with missing files */
  deleteBackup(id: string): Promise<void>;
  /** aborts (or with dryRun counts) unfinished multipart uploads under backups/ started before `startedBefore` */
  abortStaleUploads(startedBefore: Date, dryRun: boolean): Promise<number>;
  /** backup-immutability as this location applies it; undefined: off */
  readonly immutability: Immutability | undefined;
  /**
   * With immutability: retains every current object under each folder (a backup's restic repositories, `restic/<ns>/`),
   * restic's `locks/` excepted, at least as long as backup `id` (begun here) is retained. Without: does nothing.
   */
  retainBackupData(id: string, folders: readonly string[]): Promise<RetainOutcome>;
  /** the retention of backup `id` as the bucket holds it (its marker's, else its manifest's or tarball's); undefined when none */
  retainedUntil(id: string): Promise<{ mode: string; until: Date } | undefined>;
  /** with immutability: deletes the versions under the location that nothing retains any more (version-purge.ts) */
  purgeExpiredVersions(now: Date): Promise<PurgeOutcome | undefined>;
  /** with immutability: the retained objects hidden by a delete marker or a newer version, and the backups hidden so */
  coveredObjects(now: Date): Promise<CoveredReport | undefined>;
  /** with immutability: makes every covered retained version current again (version-reveal.ts) */
  uncoverRetained(now: Date): Promise<(CoveredReport & UncoverOutcome) | undefined>;
}

/** A BackupStore over any object store that answers like S3 (Velero's objectBackupStore over its ObjectStore plugin). */
export class ObjectBackupStore implements BackupStore {
  /** each backup begun here, by id: the date its objects are retained until (with immutability) */
  private readonly retention = new Map<string, WriteLock>();

  readonly immutability: Immutability | undefined;

  constructor(readonly objects: BackupObjects, immutability?: Immutability, private readonly lock?: ObjectLockPort) {
    this.immutability = immutability;
    if (immutability && !lock) throw new Error('This object store cannot hold immutable backups: it has no Object Lock.');
  }

  url(key = ''): string {
    return this.objects.url(key);
  }

  keys(id: string): BackupKeys {
    return backupKeys(id);
  }

  async listBackupIds(): Promise<string[]> {
    const ids: string[] = [];
    for await (const folder of this.objects.listFolders(BACKUPS_FOLDER)) {
      const id = backupNameOfFolder(folder);
      if (id) ids.push(id);
    }
    return ids;
  }

  async listBackupFolders(): Promise<BackupFolder[]> {
    const folders: BackupFolder[] = [];
    for (const id of await this.listBackupIds()) {
      const keys = backupKeys(id);
      let complete = false;
      let lastWrite: Date | undefined;
      for await (const object of this.objects.list(keys.folder)) {
        if (object.key === keys.marker) complete = true;
        if (object.lastModified && (!lastWrite || object.lastModified > lastWrite)) lastWrite = object.lastModified;
      }
      folders.push({ id, complete, created: backupIdTime(id) ?? lastWrite, lastWrite, ours: isBackupId(id) });
    }
    return folders;
  }

  async holdsBackup(id: string): Promise<boolean> {
    const keys = backupKeys(id);
    return (await this.objects.exists(keys.marker)) || (await this.objects.exists(keys.manifest)) || this.objects.exists(keys.tarball);
  }

  // One GET each, a not-found answer meaning absent, rather than HEAD then GET: a restore reads both before anything
  // else, one round trip after another.
  async readMarker(id: string): Promise<MarkerRead> {
    const bytes = await this.tryGetBytes(backupKeys(id).marker);
    return bytes ? decodeMarker(bytes) : { state: 'absent' };
  }

  async readManifest(id: string, options: ReadManifestOptions = {}): Promise<ManifestRead> {
    // the marker (when not given) and the manifest are asked for at once: the manifest's answer waits in its stream
    const [marker, answer] = await Promise.allSettled([options.marker ?? this.readMarker(id), this.tryGetSized(backupKeys(id).manifest)]);
    if (marker.status === 'rejected') {
      if (answer.status === 'fulfilled') answer.value?.body.destroy();
      throw marker.reason;
    }
    if (answer.status === 'rejected') throw answer.reason;
    if (!answer.value) return { state: 'absent' };
    return decodeManifest(answer.value.body, id, marker.value, options.encryptionKey, answer.value.size);
  }

  async openTarball(id: string): Promise<Readable | undefined> {
    return this.tryGet(backupKeys(id).tarball);
  }

  async tarballSize(id: string): Promise<number | undefined> {
    return (await this.objects.head(backupKeys(id).tarball))?.size;
  }

  async openFile(id: string, name: string): Promise<Readable | undefined> {
    return this.tryGet(`${backupKeys(id).folder}${name}`);
  }

  async readFile(id: string, name: string): Promise<Buffer | undefined> {
    return this.tryGetBytes(`${backupKeys(id).folder}${name}`);
  }

  listObjects(folder: string): AsyncIterable<ObjectInfo> {
    return this.objects.list(folder);
  }

  listFolders(folder: string): AsyncIterable<string> {
    return this.objects.listFolders(folder);
  }

  private tryGetSized(key: string): Promise<{ body: Readable; size: number | undefined } | undefined> {
    return unlessNotFound(this.objects.getSized(key));
  }

  private tryGetBytes(key: string): Promise<Buffer | undefined> {
    return unlessNotFound(this.objects.getBytes(key));
  }

  // Velero's tryGet asks whether the object exists first; one GET that may answer not-found is one round trip less.
  private tryGet(key: string): Promise<Readable | undefined> {
    return unlessNotFound(this.objects.getStream(key));
  }

  async beginBackup(id: string, options: BeginBackupOptions = {}): Promise<PendingBackup> {
    const keys = backupKeys(id);
    for await (const existing of this.objects.list(keys.folder)) {
      throw new Error(`Backup ${id} already exists at ${this.objects.url(existing.key)}; choose another id.`);
    }
    const record = new RunRecordKeeper(this.objects, `${keys.folder}${RUN_RECORD_FILE}`, id, options);
    // the run record is never retained: it is renewed while the backup runs and removed once it is committed
    await record.write();
    record.renewEvery();
    const lock = this.immutability ? { mode: this.immutability.mode, until: retainUntil(this.immutability, options.started ?? new Date()) } : undefined;
    if (lock) this.retention.set(id, lock);
    return new ObjectPendingBackup(this.objects, id, keys, record, lock && this.lock ? { write: lock, port: this.lock } : undefined);
  }

  async retainBackupData(id: string, folders: readonly string[]): Promise<RetainOutcome> {
    const lock = this.retention.get(id);
    if (!lock || !this.lock) return { extended: 0, kept: 0 };
    return retainFolders(this.objects, this.lock, folders, lock, (key) => /(^|\/)locks\//.test(key));
  }

  async retainedUntil(id: string): Promise<{ mode: string; until: Date } | undefined> {
    if (!this.immutability) return undefined;
    const keys = backupKeys(id);
    for (const key of [keys.marker, keys.manifest, keys.tarball]) {
      const head = await this.objects.head(key);
      if (!head) continue;
      return head.retainUntil ? { mode: head.lockMode ?? this.immutability.mode, until: head.retainUntil } : undefined;
    }
    return undefined;
  }

  async purgeExpiredVersions(now: Date): Promise<PurgeOutcome | undefined> {
    if (!this.immutability || !this.lock) return undefined;
    return purgeVersions(this.lock, '', now, { includeCurrent: false });
  }

  async removeObject(key: string): Promise<void> {
    await this.objects.delete(key);
  }

  async coveredObjects(now: Date): Promise<CoveredReport | undefined> {
    if (!this.immutability || !this.lock) return undefined;
    return coveredReport(await findCovered(this.lock, '', now));
  }

  async uncoverRetained(now: Date): Promise<(CoveredReport & UncoverOutcome) | undefined> {
    if (!this.immutability || !this.lock) return undefined;
    const covered = await findCovered(this.lock, '', now);
    return { ...coveredReport(covered), ...(await uncover(this.lock, covered, now)) };
  }

  async deleteBackup(id: string): Promise<void> {
    const keys = backupKeys(id);
    await this.objects.delete(keys.marker);
    // in a lock-enabled bucket a plain delete only hides: every version goes, but one still retained (prune asks
    // retainedUntil first, so only an object retained longer than its backup, which then stays hidden)
    if (this.immutability && this.lock) await purgeVersions(this.lock, keys.folder, new Date(), { includeCurrent: true });
    else await this.objects.deleteFolder(keys.folder);
  }

  abortStaleUploads(startedBefore: Date, dryRun: boolean): Promise<number> {
    return this.objects.abortUploadsUnder(BACKUPS_FOLDER, startedBefore, dryRun);
  }
}


/** What a read gives, or undefined when the store answered that the object does not exist. */
async function unlessNotFound<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof StoreError && error.condition === 'not-found') return undefined;
    throw error;
  }
}

/** The backup store of an S3 location. */
export class S3BackupStore extends ObjectBackupStore {
  constructor(override readonly objects: ObjectStore, immutability?: Immutability) {
    super(objects, immutability, immutability ? new S3ObjectLock(objects.client, objects.bucket, (key) => objects.fullKey(key)) : undefined);
  }
}

/** A backup store whose objects live in memory; `objects` lets a test tamper with them. */
export class MemoryBackupStore extends ObjectBackupStore {
  constructor(override readonly objects: MemoryObjects = new MemoryObjects()) {
    super(objects);
  }
}
