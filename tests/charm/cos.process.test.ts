// metrics-endpoint and grafana-dashboard as COS reads them. The databags are checked against what the Python libraries
// parse (canonical/prometheus-k8s-operator lib/charms/prometheus_k8s/v0/prometheus_scrape.py LIBPATCH 61,
// canonical/grafana-k8s-operator lib/charms/grafana_k8s/v0/grafana_dashboard.py LIBPATCH 48, canonical/cos-lib
// src/cosl; ../shared/reference/cos-and-pebble.md §1–2), written out here by hand; the dashboard's content is decoded
// by Python's own lzma, as cos-lib's LZMABase64.decompress does (lzma.decompress of the base64, then UTF-8 JSON).
import { expect } from 'chai';
import { execa } from 'execa';
import { runEvent } from '../support/juju/run-event.ts';
import { emptyState, type FakeJujuState, type FakeRelation } from '../support/juju/state.ts';

const METRICS = 'metrics-endpoint:11';
const GRAFANA = 'grafana-dashboard:12';
const relation = (id: string, remoteApp: string): FakeRelation => ({
  id, endpoint: id.split(':')[0]!, remoteApp, remoteUnits: [`${remoteApp}/0`], localAppData: {}, localUnitData: {}, remoteAppData: {}, remoteUnitsData: { [`${remoteApp}/0`]: {} },
});
const state = (leader = true): FakeJujuState => emptyState({ leader, podAddress: '10.1.64.23', relations: [relation(METRICS, 'prometheus-k8s'), relation(GRAFANA, 'grafana-k8s')] });

/** prometheus_scrape.py ALLOWED_KEYS */
const ALLOWED_JOB_KEYS = new Set(['job_name', 'metrics_path', 'static_configs', 'scrape_interval', 'scrape_timeout', 'proxy_url', 'relabel_configs', 'metric_relabel_configs', 'sample_limit', 'label_limit', 'label_name_length_limit', 'label_value_length_limit', 'scheme', 'basic_auth', 'tls_config', 'authorization', 'params']);
/** juju_topology.py: a lowercase v4 UUID, or the consumer refuses the topology */
const V4_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** What the Grafana charm does with the dashboards key: json.loads, then LZMABase64.decompress of each content. */
const CONSUMER = `
import base64, json, lzma, sys
data = json.loads(sys.stdin.read())
out = {}
for template_id, template in data["templates"].items():
    out[template_id] = json.loads(lzma.decompress(base64.b64decode(template["content"].encode("utf-8"))).decode("utf-8"))
print(json.dumps(out))
`;

describe('COS relations: metrics-endpoint and grafana-dashboard databags as the COS libraries read them', function () {
  this.timeout(30_000);

  it('each unit says where it is scraped; the leader sends the scrape job, its topology and the alert rules', async () => {
    const outcome = await runEvent(state(), { event: 'metrics-endpoint-relation-joined', relation: METRICS });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    const rel = outcome.state.relations.find((r) => r.id === METRICS)!;
    expect(rel.localUnitData).to.deep.include({ prometheus_scrape_unit_address: '10.1.64.23', prometheus_scrape_unit_name: 'kubeflow-upgrader/0' });
    // "" as the library writes it: an empty value deletes the key, and the consumer reads a missing path as ""
    expect(rel.localUnitData).not.to.have.property('prometheus_scrape_unit_path');
    expect(rel.localUnitData.prometheus_scrape_unit_fqdn).to.be.a('string').and.not.equal('');

    const metadata = JSON.parse(rel.localAppData.scrape_metadata!) as Record<string, string>;
    expect(Object.keys(metadata)).to.deep.equal(['model', 'model_uuid', 'application', 'unit', 'charm_name']);
    expect(metadata).to.deep.equal({ model: 'kubeflow', model_uuid: '6f9a2b1c-1111-4a3b-8c3d-000000000001', application: 'kubeflow-upgrader', unit: 'kubeflow-upgrader/0', charm_name: 'kubeflow-upgrader' });
    expect(metadata.model_uuid).to.match(V4_UUID);

    const jobs = JSON.parse(rel.localAppData.scrape_jobs!) as Array<Record<string, unknown>>;
    expect(jobs).to.have.length(1);
    for (const key of Object.keys(jobs[0]!)) expect(ALLOWED_JOB_KEYS.has(key), key).to.equal(true);
    expect(jobs[0]).to.deep.equal({ job_name: 'kubeflow_upgrader', metrics_path: '/metrics', static_configs: [{ targets: ['*:9464'] }] });
    // the consumer's wildcard: each unit's address replaces the *
    expect((jobs[0]!.static_configs as Array<{ targets: string[] }>)[0]!.targets[0]).to.match(/^\*(:\d+)?$/);

    const rules = JSON.parse(rel.localAppData.alert_rules!) as { groups: Array<{ name: string; rules: Array<{ alert: string; labels: Record<string, string> }> }> };
    // a group name of this shape is left as it is by the library (rules.py)
    for (const group of rules.groups) expect(group.name).to.match(/^.*?_[0-9a-f]{8}_.*?rules$/).and.match(/^[a-zA-Z0-9_:]+$/);
    const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(alerts).to.include.members(['KubeflowUpgraderBackupTooOld', 'KubeflowUpgraderBackupFailed', 'KubeflowUpgraderNoBackup', 'KubeflowUpgraderPruneBlocked', 'HostDown', 'HostMetricsMissing']);
    // the three juju_* labels the consumer needs to inject its matchers (PS _inject_alert_expr_labels)
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      expect(rule.labels, rule.alert).to.include({ juju_model: 'kubeflow', juju_model_uuid: '6f9a2b1c-1111-4a3b-8c3d-000000000001', juju_application: 'kubeflow-upgrader', juju_charm: 'kubeflow-upgrader' });
    }
  });

  it('nothing is written again while nothing changed', async () => {
    const first = await runEvent(state(), { event: 'metrics-endpoint-relation-joined', relation: METRICS });
    const again = await runEvent({ ...first.state, relationSets: [] }, { event: 'metrics-endpoint-relation-changed', relation: METRICS });
    expect(again.state.relationSets).to.deep.equal([]);
  });

  it('a follower writes its own address only', async () => {
    const outcome = await runEvent(state(false), { event: 'metrics-endpoint-relation-joined', relation: METRICS });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    expect(outcome.state.relationSets.every((set) => !set.app)).to.equal(true);
    expect(outcome.state.relations.find((r) => r.id === METRICS)!.localUnitData.prometheus_scrape_unit_address).to.equal('10.1.64.23');
  });

  it('the leader sends one dashboard that Python decompresses, with the uid, tag and alt uid the library gives', async () => {
    const outcome = await runEvent(state(), { event: 'grafana-dashboard-relation-joined', relation: GRAFANA });
    expect(outcome.exitCode, outcome.stderr).to.equal(0);
    const written = outcome.state.relations.find((r) => r.id === GRAFANA)!.localAppData;
    expect(Object.keys(written)).to.deep.equal(['dashboards']);
    const data = JSON.parse(written.dashboards!) as { templates: Record<string, Record<string, unknown>>; uuid: string };
    expect(data.uuid).to.match(V4_UUID);
    expect(Object.keys(data.templates)).to.deep.equal(['file:kubeflow-upgrader.json']);
    const template = data.templates['file:kubeflow-upgrader.json']!;
    expect(template).to.deep.include({
      charm: 'kubeflow-upgrader',
      inject_dropdowns: true,
      juju_topology: { model: 'kubeflow', model_uuid: '6f9a2b1c-1111-4a3b-8c3d-000000000001', application: 'kubeflow-upgrader', unit: 'kubeflow-upgrader/0' },
    });
    expect(template.dashboard_alt_uid).to.match(/^[0-9a-f]{16}$/);

    const decoded = await execa('python3', ['-c', CONSUMER], { input: written.dashboards! });
    const dashboard = (JSON.parse(decoded.stdout) as Record<string, Record<string, unknown>>)['file:kubeflow-upgrader.json']!;
    expect(dashboard.uid).to.match(/^[0-9a-f]{40}$/);
    expect(dashboard.tags).to.include('charm: kubeflow-upgrader');
    const panels = dashboard.panels as Array<{ targets: Array<{ expr: string; datasource: { uid: string } }> }>;
    expect(panels.length).to.be.greaterThan(5);
    for (const target of panels.flatMap((p) => p.targets)) {
      expect(target.datasource.uid).to.equal('${prometheusds}');
      expect(target.expr).to.match(/kubeflow_upgrader_/);
    }
  });

  it('an unchanged dashboard is not written again (each write would wake Grafana with a new uuid)', async () => {
    const first = await runEvent(state(), { event: 'grafana-dashboard-relation-joined', relation: GRAFANA });
    const again = await runEvent({ ...first.state, relationSets: [] }, { event: 'grafana-dashboard-relation-changed', relation: GRAFANA });
    expect(again.exitCode, again.stderr).to.equal(0);
    expect(again.state.relationSets.filter((set) => set.relation === GRAFANA)).to.deep.equal([]);
  });
});
