// What the writer (writer.ts) hands its encoded files to: one backup being written. The store implements it
// (src/store/backup-store.ts) and alone knows where the files go; the format only says what they are.
import type { Readable } from 'node:stream';

/** The tarball's streaming upload: settles once every part is stored, or is abandoned. */
export interface TarballUpload {
  done(): Promise<void>;
  abort(): Promise<void>;
}

/** A file of a backup beside its tarball and manifest: its name in the backup folder, its bytes and content type. */
export interface BackupFile {
  name: string;
  content: Buffer;
  contentType: string;
}

/** What a backup commits once its tarball is stored. */
export interface BackupCommit {
  /** Velero's side files and ours; they and the manifest are stored side by side */
  files: BackupFile[];
  /** the manifest's bytes as they are written */
  manifest: Readable;
  /** the marker's bytes, asked for once every file and the manifest are stored (it records the manifest's digests) */
  marker: () => Buffer | Promise<Buffer>;
}

/**
 * One backup being written. The tarball goes up while items are still added; `commit` stores the other files and the
 * marker last; `abort` (also what a failed commit does) deletes the folder, so no marker and no partial data remain.
 */
export interface PendingBackup {
  readonly id: string;
  /** `s3://…/backups/<id>/`, for results and sentences */
  readonly location: string;
  /** `s3://bucket/prefix/`: the location every backup of this installation goes to (it salts the key id, seal.ts) */
  readonly home: string;
  /** the names in the backup folder of Velero's side files, which the manifest records by name */
  readonly fileNames: { resourceList: string; logs: string; results: string };
  /** starts the tarball's streaming upload; the body is read as the upload's parts fill */
  uploadTarball(body: Readable): TarballUpload;
  commit(files: BackupCommit): Promise<void>;
  abort(): Promise<void>;
}
