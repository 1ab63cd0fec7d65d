// What a run of volume movers takes and gives, whichever engine stores the data: shared by the orchestration
// (./mover.ts) and the engines (./engine.ts) without either importing the other's code.
import type { MoveOperation } from './labels.ts';
import type { CopyProgress } from './outcome.ts';
import type { SnapshotLister } from './restic/snapshot-id.ts';

export interface PvcRef {
  namespace: string;
  name: string;
}

export interface VolumeResult {
  namespace: string;
  pvc: string;
  operation: MoveOperation;
  /** s3://bucket/prefix/backups/<id>/volumes/<ns>/<pvc>/ */
  location: string;
  files: number;
  bytes: number;
  /** the engine checked what it moved: rclone every file's size and MD5 on both sides, restic every blob's MAC */
  checksumVerified: boolean;
  durationMs: number;
  /** the node the copy ran on when it was pinned next to a ReadWriteOnce user */
  node?: string;
  /** set when nothing was copied, and why (e.g. a PVC that was never bound holds no data) */
  skipped?: string;
  /** backup: the earlier backup whose copy of this PVC the new one started from (copied inside the bucket) */
  reusedFrom?: string;
  /** backup: files and bytes copied inside the bucket from `reusedFrom`, when rclone counted them apart */
  reused?: { files: number; bytes: number };
  /**
   * backup: how the data was read, from a CSI snapshot exposed in the model's namespace (point in time: `takenAt`) or
   * from the live volume while its users may write (and why no snapshot was taken); unset when snapshots were not asked
   */
  copy?: { from: 'snapshot' | 'live'; pointInTime: boolean; takenAt?: string; volumeSnapshotClass?: string; reason?: string };
  /**
   * restore: how the data reached the claim: 'handover', filled in the model's namespace and its volume handed to the
   * claim (src/volumes/rebind.ts); 'in-namespace', by a mover in the claim's own namespace
   */
  restoredBy?: 'handover' | 'in-namespace';
  /** restore by hand-over: the PersistentVolume the claim is bound to */
  volume?: string;
  /** restic mover: the snapshot written (backup) or restored, and its repository's key prefix */
  restic?: { snapshot: string; repository: string; dataAdded?: number; filesUnmodified?: number };
}

export interface VolumeFailure {
  namespace: string;
  pvc: string;
  reason: string;
}

export interface VolumeProgress {
  done: number;
  total: number;
  result?: VolumeResult;
  failure?: VolumeFailure;
  /** a running mover's latest stats (rclone's, or restic's status lines) */
  copying?: CopyProgress & { namespace: string; pvc: string };
}

/**
 * The restic engine's part of a run: the repository password and, per `namespace/pvc`, the backup's parent or the
 * restore's snapshot with its size as the backup counted it (`sizes`: files and bytes, from the authenticated manifest;
 * a restore reports them, the mover counting nothing again).
 */
export interface ResticMoveOptions {
  /** each namespace's repository password (src/volumes/restic/password.ts): its mover Secret holds that one only */
  password: (namespace: string) => string;
  parents?: ReadonlyMap<string, string>;
  snapshots?: ReadonlyMap<string, string>;
  sizes?: ReadonlyMap<string, { files: number; bytes: number }>;
  /**
   * backup: lists the bucket (keys from its root) with the caller's own S3 client, which turns each snapshot's short
   * id into its full one; without it, a client for `s3` as the movers get it
   */
  listBucket?: SnapshotLister;
  /**
   * the run's repository gateway (src/volumes/restic/gateway.ts): started in `namespace` (the model's, never a
   * profile's) with an rclone `image`, it is all the movers reach; their Secrets then hold no bucket credential
   */
  gateway?: GatewayImages & { namespace: string };
}

/**
 * The gateways' images: rclone for the backups' (and plain-file restores'), and for a restic restore the node image
 * its own gateway runs on (NODE_GATEWAY_IMAGE unless a setting names a mirror), each with the setting that names it.
 */
export interface GatewayImages {
  image: string;
  imageSetting: string;
  restoreImage?: string | undefined;
  restoreImageSetting?: string | undefined;
}
