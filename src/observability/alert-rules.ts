// The alert rules the charm sends over metrics-endpoint, in the standard Prometheus rules format that COS's
// prometheus_scrape library forwards (canonical/prometheus-k8s-operator lib/charms/prometheus_k8s/v0/prometheus_scrape.py,
// cos-lib src/cosl/rules.py; ../shared/reference/cos-and-pebble.md §1). Every rule carries the juju_* topology labels,
// so the Prometheus charm injects the matching label matchers into each expr itself (it runs cos-tool; we carry none).
//
// The rules read the metrics through last_over_time over a week: a service that stopped (the pod gone, Pebble's
// service stopped) leaves no fresh sample, and an alert on the live series alone would go quiet exactly when the
// backups stop.
import { METRIC } from './metric-names.ts';
import type { JujuTopology } from './topology.ts';

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: { summary: string; description: string };
}

export interface RulesFile {
  groups: Array<{ name: string; rules: AlertRule[] }>;
}

const WINDOW = '7d';
const last = (metric: string) => `last_over_time(${metric}[${WINDOW}])`;

/** The rules without topology labels: what promtool tests, and what alertRules labels. */
export function ruleBodies(): Array<Omit<AlertRule, 'labels'> & { severity: string }> {
  return [
    {
      alert: 'KubeflowUpgraderBackupTooOld',
      // older than two schedule intervals plus ten minutes: one slot may fail or be skipped without an alert
      expr: `(time() - ${last(METRIC.lastSuccess)}) > 2 * ${last(METRIC.scheduleInterval)} + 600 and ${last(METRIC.lastSuccess)} > 0 and ${last(METRIC.scheduleInterval)} > 0`,
      for: '5m',
      severity: 'critical',
      annotations: {
        summary: 'The newest Kubeflow backup is older than its schedule allows',
        description: 'The newest complete backup of {{ $labels.juju_model }} was made {{ $value | humanizeDuration }} ago, more than two intervals of backup-schedule. Check the unit status and `pebble logs kubeflow-upgrader` in the upgrader container.',
      },
    },
    {
      alert: 'KubeflowUpgraderBackupFailed',
      expr: `${last(METRIC.lastAttemptSucceeded)} == 0 and ${last(METRIC.lastAttempt)} > 0`,
      for: '0m',
      severity: 'warning',
      annotations: {
        summary: 'The last scheduled Kubeflow backup failed',
        description: 'The last scheduled backup of {{ $labels.juju_model }} failed; the unit status and `pebble logs kubeflow-upgrader` say why.',
      },
    },
    {
      alert: 'KubeflowUpgraderNoBackup',
      // the service backs up at once when it starts without a backup: an hour without one is a failure to do so
      expr: `${last(METRIC.lastSuccess)} == 0 and ${last(METRIC.scheduleEnabled)} == 1`,
      for: '1h',
      severity: 'critical',
      annotations: {
        summary: 'Kubeflow has no backup at all',
        description: 'backup-schedule is set for {{ $labels.juju_model }}, but the bucket holds no complete backup (with encryption-key: none it authenticates).',
      },
    },
    {
      alert: 'KubeflowUpgraderPruneBlocked',
      expr: `${last(METRIC.pruneBlocked)} == 1`,
      for: '1h',
      severity: 'warning',
      annotations: {
        summary: 'Retention after the scheduled backups is blocked',
        description: 'backup-retention could not be applied after the last scheduled backup of {{ $labels.juju_model }}; run prune-backups to see why. Old backups accumulate in the bucket until then.',
      },
    },
  ];
}

/** `[a-zA-Z0-9_:]` only, as cos-lib rules.py sanitizes group names. */
const sanitize = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, '_');

/** The rules file for the `alert_rules` key: our group plus the HostHealth group the library always adds. */
export function alertRules(topology: JujuTopology): RulesFile {
  const identifier = `${topology.model}_${topology.model_uuid.slice(0, 8)}_${topology.application}`.replace(/\//g, '_');
  const labels = {
    juju_model: topology.model,
    juju_model_uuid: topology.model_uuid,
    juju_application: topology.application,
    juju_charm: topology.charm_name,
  };
  const rules = ruleBodies().map(({ severity, ...rule }) => ({ ...rule, labels: { severity, ...labels } }));
  return {
    groups: [
      { name: sanitize(`${identifier}_kubeflow_upgrader_rules`), rules },
      {
        name: sanitize(`${identifier}_HostHealth_rules`),
        rules: [
          { alert: 'HostDown', expr: 'up < 1', for: '5m', labels: { severity: 'critical', ...labels }, annotations: { summary: 'Host {{ $labels.instance }} is down', description: 'The scrape of {{ $labels.instance }} has failed for 5 minutes.' } },
          { alert: 'HostMetricsMissing', expr: 'absent(up)', for: '5m', labels: { severity: 'warning', ...labels }, annotations: { summary: 'Metrics of {{ $labels.instance }} are missing', description: 'No up series for 5 minutes.' } },
        ],
      },
    ],
  };
}
