// The volume movers: PVC contents copied to and from the backup bucket by Kubernetes Jobs, one per PVC, run by a
// volume engine (./engine.ts): rclone's plain files (./rclone-engine.ts) or restic repositories (./restic/engine.ts).
export { backupVolumes, restoreVolumes, cleanupVolumeMovers, VolumeMoveError } from './mover.ts';
export type { PvcRef, VolumeResult, VolumeFailure, VolumeProgress, MoveVolumesOptions } from './mover.ts';
export type { VolumeKube, MoverResource, WaitOptions } from './kube-port.ts';
export { JOBS, PODS, PVCS, SECRETS } from './kube-port.ts';
export { buildMoverJob, buildCredentialsSecret, MOVER_SCRIPT } from './job.ts';
export { moverSelector, moverLabels, LABEL_BACKUP_ID } from './labels.ts';
export { DEFAULT_MOVER_CONCURRENCY, moverS3Settings, type MoverS3Settings } from './settings.ts';
export { ENGINE_NAMES, PINNED_IMAGES, RCLONE_IMAGE, RESTIC_IMAGE, imageOf, parseEngineName, type EngineName, type VolumeEngine } from './engine.ts';
export { engineNamed } from './engines.ts';
export { volumeKubeFromClient } from './kube-client-port.ts';
export { volumeBackupStep, volumeRestoreStep, type MoverConfig } from './steps.ts';
export { FILL_SELECTOR, LABEL_FILL, ANNOTATION_FILL_FROM, withFillMark, hasFillMark } from './fill-mark.ts';
export { DEFAULT_MOVER_RESOURCES, parseMoverResources } from './resources.ts';
