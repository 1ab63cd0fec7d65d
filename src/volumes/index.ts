// The volume mover: PVC contents copied to and from the backup bucket by Kubernetes Jobs running rclone.
export { backupVolumes, restoreVolumes, cleanupVolumeMovers, VolumeMoveError } from './mover.ts';
export type { PvcRef, VolumeResult, VolumeFailure, VolumeProgress, MoveVolumesOptions } from './mover.ts';
export type { VolumeKube, MoverResource, WaitOptions } from './kube-port.ts';
export { JOBS, PODS, PVCS, SECRETS } from './kube-port.ts';
export { buildMoverJob, buildCredentialsSecret, MOVER_SCRIPT } from './job.ts';
export { moverSelector, moverLabels, LABEL_BACKUP_ID } from './labels.ts';
export { DEFAULT_MOVER_IMAGE, DEFAULT_MOVER_CONCURRENCY, moverS3Settings, type MoverS3Settings } from './settings.ts';
export { volumeKubeFromClient } from './kube-client-port.ts';
export { volumeBackupStep, volumeRestoreStep, type MoverConfig } from './steps.ts';
export { FILL_SELECTOR, LABEL_FILL, ANNOTATION_FILL_FROM, withFillMark, hasFillMark } from './fill-mark.ts';
export { DEFAULT_MOVER_RESOURCES, parseMoverResources } from './resources.ts';
