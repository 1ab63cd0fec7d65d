// The relation data COS reads from a provider of metrics-endpoint (interface prometheus_scrape) and grafana-dashboard
// (interface grafana_dashboard), in the formats the Python libraries write and parse:
// canonical/prometheus-k8s-operator lib/charms/prometheus_k8s/v0/prometheus_scrape.py (LIBPATCH 61: set_scrape_job_spec,
// _set_unit_ip), canonical/grafana-k8s-operator lib/charms/grafana_k8s/v0/grafana_dashboard.py (LIBPATCH 48:
// _upset_dashboards_on_relation, _generate_alt_uid) and canonical/cos-lib src/cosl (juju_topology.py, utils.py
// LZMABase64, grafana_dashboard.py DashboardPath40UID); ../shared/reference/cos-and-pebble.md §1–2.
import { createHash, randomUUID } from 'node:crypto';
// LZMA-JS (npm `lzma`): the compressor alone. It writes the .lzma ("alone") container, which Python's
// lzma.decompress, as LZMABase64 calls it (format auto-detection), reads as it reads .xz.
// @ts-expect-error: the package ships no types
import lzmaCompressor from 'lzma/src/lzma-c.js';
import { alertRules } from './alert-rules.ts';
import { dashboard } from './dashboard.ts';
import type { JujuTopology } from './topology.ts';

export const METRICS_ENDPOINT = 'metrics-endpoint';
export const GRAFANA_DASHBOARD = 'grafana-dashboard';
/** a fixed literal: per-unit job names break series continuity (the library's docs) */
export const SCRAPE_JOB_NAME = 'kubeflow_upgrader';
const DASHBOARD_FILE = 'kubeflow-upgrader.json';

/** The leader's application databag of every metrics-endpoint relation; every value a JSON string. */
export function scrapeAppData(topology: JujuTopology, port: number): Record<string, string> {
  return {
    scrape_metadata: JSON.stringify({ model: topology.model, model_uuid: topology.model_uuid, application: topology.application, unit: topology.unit, charm_name: topology.charm_name }),
    // `*` is each unit's address in its unit databag: the consumer makes one job per unit from it
    scrape_jobs: JSON.stringify([{ job_name: SCRAPE_JOB_NAME, metrics_path: '/metrics', static_configs: [{ targets: [`*:${port}`] }] }]),
    alert_rules: JSON.stringify(alertRules(topology)),
  };
}

/** Every unit's databag of every metrics-endpoint relation: where its service is scraped. */
export function scrapeUnitData(unit: string, bindAddress: string, fqdn: string): Record<string, string> {
  return {
    prometheus_scrape_unit_address: bindAddress,
    prometheus_scrape_unit_name: unit,
    prometheus_scrape_unit_path: '',
    prometheus_scrape_unit_fqdn: fqdn,
  };
}

const shake256 = (text: string, bytes: number) => createHash('shake256', { outputLength: bytes }).update(text).digest('hex');

/** base64 of the LZMA-compressed UTF-8 JSON: what cos-lib's LZMABase64.decompress reads back. */
export function lzmaBase64(text: string): string {
  const compress = (lzmaCompressor as { LZMA: { compress(data: Uint8Array, mode: number): number[] } }).LZMA.compress;
  // LZMA-JS compresses a string as UTF-16 code units unless it is given bytes
  const signed = compress(new Uint8Array(Buffer.from(text, 'utf8')), 6);
  return Buffer.from(Int8Array.from(signed).buffer).toString('base64');
}

/** The `templates` of the dashboards key: one dashboard, its uid and charm tag set as load_dashboards_from_dir sets them. */
export function dashboardTemplates(topology: JujuTopology): Record<string, unknown> {
  const content = dashboard();
  // DashboardPath40UID: shake_256 of "<charm>-<path relative to the charm dir>", 20 bytes
  content.uid = shake256(`${topology.charm_name}-src/grafana_dashboards/${DASHBOARD_FILE}`, 20);
  const tags = content.tags as string[];
  if (!tags.some((tag) => tag.startsWith('charm: '))) tags.push(`charm: ${topology.charm_name}`);
  const id = `file:${DASHBOARD_FILE}`;
  return {
    [id]: {
      charm: topology.charm_name,
      content: lzmaBase64(JSON.stringify(content)),
      juju_topology: { model: topology.model, model_uuid: topology.model_uuid, application: topology.application, unit: topology.unit },
      inject_dropdowns: true,
      dashboard_alt_uid: shake256(`${topology.charm_name}-${id}`, 8),
    },
  };
}

/** The leader's application databag of every grafana-dashboard relation: a new uuid each write, as the library does. */
export function dashboardAppData(templates: Record<string, unknown>): Record<string, string> {
  return { dashboards: JSON.stringify({ templates, uuid: randomUUID() }) };
}
