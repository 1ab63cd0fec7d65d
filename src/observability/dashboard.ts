// The Grafana dashboard the charm sends over grafana-dashboard. Panels query `${prometheusds}`, the datasource
// variable the Grafana charm inserts (canonical/grafana-k8s-operator lib/charms/grafana_k8s/v0/grafana_dashboard.py;
// ../shared/reference/cos-and-pebble.md §2); it also adds the juju_* dropdowns and injects their matchers.
import { METRIC } from './metric-names.ts';

const ds = { type: 'prometheus', uid: '${prometheusds}' };

function panel(id: number, title: string, expr: string, unit: string, gridPos: { x: number; y: number; w: number; h: number }, type = 'stat') {
  return {
    id,
    title,
    type,
    datasource: ds,
    gridPos,
    fieldConfig: { defaults: { unit }, overrides: [] },
    targets: [{ refId: 'A', datasource: ds, expr, legendFormat: '{{juju_unit}}' }],
  };
}

/** The dashboard's JSON; `uid` and the `charm:` tag are set by grafanaDashboardData as the library sets them. */
export function dashboard(): Record<string, unknown> {
  return {
    title: 'Kubeflow backups (kubeflow-upgrader)',
    tags: ['kubeflow', 'backup'],
    timezone: 'utc',
    schemaVersion: 39,
    version: 1,
    refresh: '1m',
    time: { from: 'now-7d', to: 'now' },
    templating: { list: [] },
    panels: [
      panel(1, 'Age of the newest backup', `time() - ${METRIC.lastSuccess} and ${METRIC.lastSuccess} > 0`, 's', { x: 0, y: 0, w: 6, h: 5 }),
      panel(2, 'Last scheduled attempt succeeded', METRIC.lastAttemptSucceeded, 'bool_yes_no', { x: 6, y: 0, w: 6, h: 5 }),
      panel(3, 'Next scheduled backup', `${METRIC.nextRun} * 1000`, 'dateTimeFromNow', { x: 12, y: 0, w: 6, h: 5 }),
      panel(4, 'Retention blocked', METRIC.pruneBlocked, 'bool_yes_no', { x: 18, y: 0, w: 6, h: 5 }),
      panel(5, 'Backup duration', METRIC.duration, 's', { x: 0, y: 5, w: 12, h: 8 }, 'timeseries'),
      panel(6, 'Objects per backup', METRIC.objects, 'short', { x: 12, y: 5, w: 12, h: 8 }, 'timeseries'),
      panel(7, 'Archive and volume bytes per backup', `${METRIC.bytes} or ${METRIC.volumeBytes}`, 'bytes', { x: 0, y: 13, w: 12, h: 8 }, 'timeseries'),
      panel(8, 'Scheduled attempts by result (1h)', `increase(${METRIC.attempts}[1h])`, 'short', { x: 12, y: 13, w: 12, h: 8 }, 'timeseries'),
      panel(9, 'Volume mover failures (1d)', `increase(${METRIC.moverFailures}[1d])`, 'short', { x: 0, y: 21, w: 12, h: 8 }, 'timeseries'),
      panel(10, 'Backups deleted by retention (1d)', `increase(${METRIC.pruneDeleted}[1d])`, 'short', { x: 12, y: 21, w: 12, h: 8 }, 'timeseries'),
      panel(11, 'Last restore succeeded', `${METRIC.restoreLastSucceeded} and ${METRIC.restoreLast} > 0`, 'bool_yes_no', { x: 0, y: 29, w: 12, h: 5 }),
      panel(12, 'Last restore ended', `${METRIC.restoreLast} * 1000 and ${METRIC.restoreLast} > 0`, 'dateTimeFromNow', { x: 12, y: 29, w: 12, h: 5 }),
    ],
  };
}
