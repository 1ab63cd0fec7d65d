// The service's Prometheus metrics (prom-client), named in src/observability/metric-names.ts, which the alert rules
// and the dashboard query: the scheduled backups' and retention's, and the last restore-state's the charm recorded.
import { readFileSync } from 'node:fs';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { METRIC } from '../observability/metric-names.ts';
import { LastRestoreSchema, type LastRestore } from '../workload/settings.ts';

/** The charm's record of the last restore-state, or undefined when there is none (or it cannot be read). */
function readLastRestore(file: string | undefined): LastRestore | undefined {
  if (!file) return undefined;
  try {
    return LastRestoreSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}

/**
 * `lastRestoreFile`: where the charm writes how its last restore-state ended (restores run as actions, not here); it
 * is read at each scrape, so a restore shows at the next scrape without the service being told.
 */
export function serviceMetrics(lastRestoreFile?: string) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kubeflow_upgrader_service_' });
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames, registers: [registry] });
  const metrics = {
    registry,
    scheduleEnabled: gauge(METRIC.scheduleEnabled, '1 while backup-schedule is set'),
    scheduleInterval: gauge(METRIC.scheduleInterval, 'Seconds between the two slots of backup-schedule around now (0 without a schedule)'),
    nextRun: gauge(METRIC.nextRun, 'When the next scheduled backup starts (0 without a schedule)'),
    lastSuccess: gauge(METRIC.lastSuccess, 'When the newest complete backup (authenticated, with encryption-key) was made; 0 when there is none'),
    lastAttempt: gauge(METRIC.lastAttempt, 'When the last scheduled backup attempt ended'),
    lastAttemptSucceeded: gauge(METRIC.lastAttemptSucceeded, '1 when the last scheduled attempt made a backup, 0 when it failed'),
    attempts: counter(METRIC.attempts, 'Scheduled backup attempts by result: succeeded, failed, skipped (another backup held the lease)', ['result']),
    duration: gauge(METRIC.duration, 'Seconds the last scheduled backup took'),
    objects: gauge(METRIC.objects, 'Objects in the last scheduled backup'),
    bytes: gauge(METRIC.bytes, 'Archive bytes of the last scheduled backup'),
    volumeBytes: gauge(METRIC.volumeBytes, 'Volume bytes the last scheduled backup holds'),
    volumeBytesUploaded: gauge(METRIC.volumeBytesUploaded, 'Volume bytes the last scheduled backup uploaded (the rest was reused)'),
    namespaceVolumeBytes: gauge(METRIC.namespaceVolumeBytes, 'Volume bytes of each profile namespace in the last scheduled backup', ['namespace']),
    moverFailures: counter(METRIC.moverFailures, 'Scheduled backups that failed because a volume mover Job failed'),
    pruneBlocked: gauge(METRIC.pruneBlocked, '1 when the last retention run after a scheduled backup was refused or failed'),
    pruneLast: gauge(METRIC.pruneLast, 'When retention last ran after a scheduled backup'),
    pruneDeleted: counter(METRIC.pruneDeleted, 'Backups deleted by retention after scheduled backups'),
  };
  const restoreGauge = (name: string, help: string, value: (last: LastRestore | undefined) => number) => new Gauge({
    name, help, registers: [registry],
    collect() {
      this.set(value(readLastRestore(lastRestoreFile)));
    },
  });
  restoreGauge(METRIC.restoreLast, 'When the last restore-state (not a dry run) ended; 0 when there was none', (last) => (last ? Date.parse(last.at) / 1000 : 0));
  restoreGauge(METRIC.restoreLastSucceeded, '1 when the last restore-state succeeded, 0 when it failed or there was none', (last) => (last?.result === 'succeeded' ? 1 : 0));
  restoreGauge(METRIC.restoreDuration, 'Seconds the last restore-state took', (last) => last?.durationSeconds ?? 0);
  for (const result of ['succeeded', 'failed', 'skipped']) metrics.attempts.inc({ result }, 0);
  metrics.moverFailures.inc(0);
  metrics.pruneDeleted.inc(0);
  return metrics;
}

export type ServiceMetrics = ReturnType<typeof serviceMetrics>;
