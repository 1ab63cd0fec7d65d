// The names of the metrics the workload's service serves, which the alert rules and the dashboard the charm sends to
// COS query: one list, so that a renamed metric breaks the build of both, not a dashboard in production.
export const METRIC = {
  /** 1 while backup-schedule is set */
  scheduleEnabled: 'kubeflow_upgrader_schedule_enabled',
  /** seconds between two slots of backup-schedule around now (0 without a schedule) */
  scheduleInterval: 'kubeflow_upgrader_schedule_interval_seconds',
  nextRun: 'kubeflow_upgrader_schedule_next_run_timestamp_seconds',
  /** when the newest backup the key vouches for was made (0: none ever) */
  lastSuccess: 'kubeflow_upgrader_backup_last_success_timestamp_seconds',
  lastAttempt: 'kubeflow_upgrader_backup_last_attempt_timestamp_seconds',
  /** 1 when the last scheduled attempt made a backup, 0 when it failed */
  lastAttemptSucceeded: 'kubeflow_upgrader_backup_last_attempt_succeeded',
  /** counter, label `result`: succeeded, failed, skipped (another backup held the lease) */
  attempts: 'kubeflow_upgrader_backup_attempts_total',
  duration: 'kubeflow_upgrader_backup_duration_seconds',
  objects: 'kubeflow_upgrader_backup_objects',
  /** the last backup's archive bytes */
  bytes: 'kubeflow_upgrader_backup_bytes',
  volumeBytes: 'kubeflow_upgrader_backup_volume_bytes',
  volumeBytesUploaded: 'kubeflow_upgrader_backup_volume_bytes_uploaded',
  /** label `namespace`: the last backup's volume bytes of each profile namespace */
  namespaceVolumeBytes: 'kubeflow_upgrader_backup_namespace_volume_bytes',
  /** counter: backups that failed because a volume mover Job failed */
  moverFailures: 'kubeflow_upgrader_volume_mover_failures_total',
  /** 1 when the last prune after a scheduled backup was refused or failed, 0 when it ran */
  pruneBlocked: 'kubeflow_upgrader_prune_blocked',
  pruneLast: 'kubeflow_upgrader_prune_last_timestamp_seconds',
  pruneDeleted: 'kubeflow_upgrader_prune_deleted_backups_total',
  /** when the last restore-state (not a dry run) ended (0: none since the workload container's files were made) */
  restoreLast: 'kubeflow_upgrader_restore_last_timestamp_seconds',
  /** 1 when that restore succeeded, 0 when it failed or there was none */
  restoreLastSucceeded: 'kubeflow_upgrader_restore_last_succeeded',
  restoreDuration: 'kubeflow_upgrader_restore_last_duration_seconds',
} as const;
