// A backup being written in an object store (the store's side of src/archive/pending-backup.ts): its run record, kept
// fresh while it runs, and the order of its commit (the files and manifest side by side, then what the movers wrote is
// retained under backup-immutability, then the marker last), or its abort. Split from backup-store.ts, which opens it.
import type { Readable } from 'node:stream';
import type { BackupCommit, PendingBackup } from '../archive/pending-backup.ts';
import { encodeRunRecord, RUN_RECORD_FILE } from '../archive/run-record.ts';
import { backupIdTime, type BackupKeys } from './layout.ts';
import type { BackupObjects, UploadHandle } from './objects.ts';
import type { ObjectLockPort, WriteLock } from './object-lock.ts';
import { retainFolders } from './retain.ts';
import { purgeVersions } from './version-purge.ts';

/** How a backup being written keeps its run record (src/archive/run-record.ts) in its folder. */
export interface BeginBackupOptions {
  /** the encryption key: with one the record is signed, and prune trusts only a signed one */
  encryptionKey?: string | Buffer | undefined;
  /** how long the record holds without a renewal; it is renewed three times per lease while the backup runs */
  leaseMs?: number;
  /** when the backup started (the record's `started`); the id's time when omitted */
  started?: Date;
  /** who writes the backup, kept in its run record (src/backup/lease.ts) */
  holder?: string;
}

/** A backup whose writer is gone stops renewing its record; after this, prune takes it to be gone. */
export const DEFAULT_RUN_LEASE_MS = 15 * 60 * 1000;

/**
 * Writes a backup's run record and renews it on a timer until stopped. A renewal that fails is tried again at the next
 * tick: the lease is three renewals long. Stopping waits for a renewal in flight, so none lands after the folder is
 * deleted or the record removed.
 */
export class RunRecordKeeper {
  private readonly leaseMs: number;
  private readonly started: Date;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly objects: BackupObjects, private readonly key: string, private readonly id: string, private readonly options: BeginBackupOptions) {
    this.leaseMs = options.leaseMs ?? DEFAULT_RUN_LEASE_MS;
    if (!Number.isFinite(this.leaseMs) || this.leaseMs < 3) throw new Error(`A backup's run lease must be a positive number of milliseconds, not ${this.leaseMs}.`);
    this.started = options.started ?? backupIdTime(id) ?? new Date();
  }

  write(): Promise<void> {
    const now = new Date();
    const bytes = encodeRunRecord({
      id: this.id, started: this.started, renewed: now, expires: new Date(now.getTime() + this.leaseMs), ...(this.options.holder ? { holder: this.options.holder } : {}),
    }, this.options.encryptionKey);
    return this.objects.put(this.key, bytes, 'application/json');
  }

  renewEvery(): void {
    this.timer = setInterval(() => {
      if (this.stopped) return;
      this.inFlight = this.inFlight.then(() => (this.stopped ? undefined : this.write())).catch(() => undefined);
    }, Math.floor(this.leaseMs / 3));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.inFlight;
  }

  /** after the marker: the folder is a backup now, and the record would only be a stale file in it */
  async remove(): Promise<void> {
    await this.stop();
    await this.objects.delete(this.key).catch(() => undefined);
  }
}

export class ObjectPendingBackup implements PendingBackup {
  readonly location: string;
  readonly home: string;
  readonly fileNames: PendingBackup['fileNames'];
  private tarball: UploadHandle | undefined;
  private state: 'open' | 'committed' | 'aborted' = 'open';

  constructor(private readonly objects: BackupObjects, readonly id: string, private readonly keys: BackupKeys, private readonly record: RunRecordKeeper, private readonly lock?: { write: WriteLock; port: ObjectLockPort }) {
    this.location = objects.url(keys.folder);
    this.home = objects.url();
    const name = (key: string) => key.slice(keys.folder.length);
    this.fileNames = { resourceList: name(keys.resourceList), logs: name(keys.logs), results: name(keys.results) };
  }

  uploadTarball(body: Readable): UploadHandle {
    if (this.tarball) throw new Error(`Backup ${this.id} already has its tarball upload.`);
    this.tarball = this.objects.startUpload(this.keys.tarball, body, 'application/gzip', 'data', undefined, this.lock?.write);
    return this.tarball;
  }

  async commit(commit: BackupCommit): Promise<void> {
    if (this.state !== 'open') throw new Error(`Backup ${this.id} is ${this.state}; it cannot be committed.`);
    if (!this.tarball) throw new Error(`Backup ${this.id} has no tarball to commit.`);
    try {
      await this.tarball.done();
      // The files before the marker do not depend on each other: they go up side by side, and all have settled before
      // the marker is written or an abort deletes the folder.
      const lock = this.lock?.write;
      const puts = commit.files.map((file) => this.objects.put(`${this.keys.folder}${file.name}`, file.content, file.contentType, lock));
      puts.push(this.objects.put(this.keys.manifest, commit.manifest, 'application/json', lock));
      const failed = (await Promise.allSettled(puts)).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      // what the movers and copy Jobs wrote into the folder (volumes/, control-plane/) is retained before the marker
      // says the backup is whole; the run record is not (it goes at once)
      if (this.lock) await retainFolders(this.objects, this.lock.port, [this.keys.folder], this.lock.write, (key) => key.endsWith(`/${RUN_RECORD_FILE}`));
      await this.objects.put(this.keys.marker, await commit.marker(), 'application/json', lock);
      this.state = 'committed';
      await this.record.remove();
    } catch (error) {
      // The original failure is the one worth reporting; cleanup problems would only hide it.
      await this.abort().catch(() => undefined);
      throw error;
    }
  }

  async abort(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'aborted';
    await this.record.stop();
    await this.tarball?.abort();
    // with immutability what is already retained stays, visible, until its date (a plain delete would only hide it
    // behind a delete marker, which reads as someone else's doing); prune deletes the folder after that date
    if (this.lock) await purgeVersions(this.lock.port, this.keys.folder, new Date(), { includeCurrent: true });
    else await this.objects.deleteFolder(this.keys.folder);
  }
}
