// Every alert rule the charm sends over metrics-endpoint, run by Prometheus's own rule engine: `promtool test rules`
// (Debian's prometheus package) over series written here by hand that should and should not make each rule fire.
// The expected alerts are this file's, never derived from the rules under test.
import { expect } from 'chai';
import { execa } from 'execa';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { alertRules } from '../../src/observability/alert-rules.ts';

const topology = { model: 'kubeflow', model_uuid: '6f9a2b1c-1111-4a3b-8c3d-000000000001', application: 'kubeflow-upgrader', unit: 'kubeflow-upgrader/0', charm_name: 'kubeflow-upgrader' };
/** the labels a scraped series carries in COS (the Prometheus charm's relabelling) */
const target = 'job="juju_kubeflow_6f9a2b1c_kubeflow-upgrader_prometheus_scrape_kubeflow_upgrader-0",instance="kubeflow_6f9a2b1c-1111-4a3b-8c3d-000000000001_kubeflow-upgrader_kubeflow-upgrader/0",juju_model="kubeflow",juju_model_uuid="6f9a2b1c-1111-4a3b-8c3d-000000000001",juju_application="kubeflow-upgrader",juju_charm="kubeflow-upgrader"';
const labels = {
  job: 'juju_kubeflow_6f9a2b1c_kubeflow-upgrader_prometheus_scrape_kubeflow_upgrader-0',
  instance: 'kubeflow_6f9a2b1c-1111-4a3b-8c3d-000000000001_kubeflow-upgrader_kubeflow-upgrader/0',
  juju_model: 'kubeflow', juju_model_uuid: '6f9a2b1c-1111-4a3b-8c3d-000000000001', juju_application: 'kubeflow-upgrader', juju_charm: 'kubeflow-upgrader',
};
const series = (metric: string, values: string) => ({ series: `${metric}{${target}}`, values });

interface AlertCase { eval_time: string; alertname: string; fires: boolean; severity?: string; annotations?: { summary: string; description: string } }

/** what an operator reads on each alert, for the model `kubeflow` */
const tooOld = (age: string) => ({
  summary: 'The newest Kubeflow backup is older than its schedule allows',
  description: `The newest complete backup of kubeflow was made ${age} ago, more than two intervals of backup-schedule. Check the unit status and \`pebble logs kubeflow-upgrader\` in the upgrader container.`,
});
const failedText = {
  summary: 'The last scheduled Kubeflow backup failed',
  description: 'The last scheduled backup of kubeflow failed; the unit status and `pebble logs kubeflow-upgrader` say why.',
};
const noneText = {
  summary: 'Kubeflow has no backup at all',
  description: 'backup-schedule is set for kubeflow, but the bucket holds no complete backup (with encryption-key: none it authenticates).',
};
const blockedText = {
  summary: 'Retention after the scheduled backups is blocked',
  description: 'backup-retention could not be applied after the last scheduled backup of kubeflow; run prune-backups to see why. Old backups accumulate in the bucket until then.',
};

async function promtool(name: string, input: Array<{ series: string; values: string }>, cases: AlertCase[]): Promise<{ ok: boolean; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
  try {
    writeFileSync(join(dir, 'rules.json'), JSON.stringify(alertRules(topology)));
    const test = {
      rule_files: ['rules.json'],
      evaluation_interval: '1m',
      tests: [{
        name,
        interval: '1m',
        input_series: input,
        alert_rule_test: cases.map((c) => ({
          eval_time: c.eval_time,
          alertname: c.alertname,
          exp_alerts: c.fires ? [{ exp_labels: { ...labels, severity: c.severity }, exp_annotations: c.annotations }] : [],
        })),
      }],
    };
    writeFileSync(join(dir, 'test.yaml'), stringify(test));
    const result = await execa('promtool', ['test', 'rules', 'test.yaml'], { cwd: dir, reject: false, all: true });
    return { ok: result.exitCode === 0, output: String(result.all ?? '') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function expectPass(result: { ok: boolean; output: string }): void {
  expect(result.ok, result.output).to.equal(true);
}

describe('alert rules under promtool test rules', function () {
  this.timeout(60_000);

  it('the rules file is one Prometheus accepts (promtool check rules)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
    try {
      writeFileSync(join(dir, 'rules.json'), JSON.stringify(alertRules(topology)));
      const result = await execa('promtool', ['check', 'rules', 'rules.json'], { cwd: dir, reject: false, all: true });
      expect(result.exitCode, String(result.all)).to.equal(0);
      expect(String(result.all)).to.match(/SUCCESS: 6 rules found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('backup too old: fires once the service stopped and its last success is over two intervals old, never while backups keep coming', async () => {
    // every minute a backup (interval 60 s) for 10 minutes, then the service is stopped: no sample at all after that
    const stopped = [series('kubeflow_upgrader_backup_last_success_timestamp_seconds', '60+60x10'), series('kubeflow_upgrader_schedule_interval_seconds', '60+0x10')];
    expectPass(await promtool('stopped', stopped, [
      // last success at 660 s; 660 + 2×60 + 600 = 1380 s (23 m), then 5 m pending
      { eval_time: '25m', alertname: 'KubeflowUpgraderBackupTooOld', fires: false },
      { eval_time: '29m', alertname: 'KubeflowUpgraderBackupTooOld', fires: true, severity: 'critical', annotations: tooOld('18m 0s') },
      { eval_time: '3h', alertname: 'KubeflowUpgraderBackupTooOld', fires: true, severity: 'critical', annotations: tooOld('2h 49m 0s') },
    ]));
    const healthy = [series('kubeflow_upgrader_backup_last_success_timestamp_seconds', '60+60x200'), series('kubeflow_upgrader_schedule_interval_seconds', '60+0x200')];
    expectPass(await promtool('healthy', healthy, [
      { eval_time: '30m', alertname: 'KubeflowUpgraderBackupTooOld', fires: false },
      { eval_time: '3h', alertname: 'KubeflowUpgraderBackupTooOld', fires: false },
    ]));
    // without a schedule (interval 0) an old backup is not late
    const unscheduled = [series('kubeflow_upgrader_backup_last_success_timestamp_seconds', '60+0x200'), series('kubeflow_upgrader_schedule_interval_seconds', '0+0x200')];
    expectPass(await promtool('unscheduled', unscheduled, [{ eval_time: '3h', alertname: 'KubeflowUpgraderBackupTooOld', fires: false }]));
  });

  it('last backup failed: fires on a failed attempt, not before any attempt, and clears after a success', async () => {
    const failed = [
      series('kubeflow_upgrader_backup_last_attempt_succeeded', '1 1 0 0 0 1 1'),
      series('kubeflow_upgrader_backup_last_attempt_timestamp_seconds', '60 60 180 180 180 300 300'),
    ];
    expectPass(await promtool('failed', failed, [
      { eval_time: '1m', alertname: 'KubeflowUpgraderBackupFailed', fires: false },
      { eval_time: '3m', alertname: 'KubeflowUpgraderBackupFailed', fires: true, severity: 'warning', annotations: failedText },
      { eval_time: '6m', alertname: 'KubeflowUpgraderBackupFailed', fires: false },
    ]));
    const never = [series('kubeflow_upgrader_backup_last_attempt_succeeded', '0+0x10'), series('kubeflow_upgrader_backup_last_attempt_timestamp_seconds', '0+0x10')];
    expectPass(await promtool('never attempted', never, [{ eval_time: '10m', alertname: 'KubeflowUpgraderBackupFailed', fires: false }]));
  });

  it('no backup ever: fires after an hour with a schedule and no backup, not without a schedule or once there is one', async () => {
    const none = [series('kubeflow_upgrader_backup_last_success_timestamp_seconds', '0+0x100'), series('kubeflow_upgrader_schedule_enabled', '1+0x100')];
    expectPass(await promtool('none', none, [
      { eval_time: '59m', alertname: 'KubeflowUpgraderNoBackup', fires: false },
      { eval_time: '61m', alertname: 'KubeflowUpgraderNoBackup', fires: true, severity: 'critical', annotations: noneText },
    ]));
    const off = [series('kubeflow_upgrader_backup_last_success_timestamp_seconds', '0+0x100'), series('kubeflow_upgrader_schedule_enabled', '0+0x100')];
    expectPass(await promtool('off', off, [{ eval_time: '90m', alertname: 'KubeflowUpgraderNoBackup', fires: false }]));
    const made = [series('kubeflow_upgrader_backup_last_success_timestamp_seconds', '0 120+0x100'), series('kubeflow_upgrader_schedule_enabled', '1+0x100')];
    expectPass(await promtool('made', made, [{ eval_time: '90m', alertname: 'KubeflowUpgraderNoBackup', fires: false }]));
  });

  it('prune blocked: fires after an hour blocked, not when retention ran', async () => {
    const blocked = [series('kubeflow_upgrader_prune_blocked', '1+0x100')];
    expectPass(await promtool('blocked', blocked, [
      { eval_time: '30m', alertname: 'KubeflowUpgraderPruneBlocked', fires: false },
      { eval_time: '61m', alertname: 'KubeflowUpgraderPruneBlocked', fires: true, severity: 'warning', annotations: blockedText },
    ]));
    const ran = [series('kubeflow_upgrader_prune_blocked', '1 0+0x100')];
    expectPass(await promtool('ran', ran, [{ eval_time: '90m', alertname: 'KubeflowUpgraderPruneBlocked', fires: false }]));
  });
});
