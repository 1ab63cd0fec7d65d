// COS: metrics-endpoint (prometheus_scrape) and grafana-dashboard (grafana_dashboard), as providers. Every unit puts
// where its service is scraped into its own databag of each metrics-endpoint relation; the leader puts the scrape
// job, the alert rules and the dashboard into the application databags (src/observability/cos-data.ts has the formats
// and their sources). The dashboard is written only when its templates changed: each write carries a new uuid, which
// wakes Grafana, as the library's own writes do.
import { hostname } from 'node:os';
import { dashboardAppData, dashboardTemplates, GRAFANA_DASHBOARD, METRICS_ENDPOINT, scrapeAppData, scrapeUnitData } from '../observability/cos-data.ts';
import { topologyOf } from '../observability/topology.ts';
import { describeInline } from '../errors/index.ts';
import type { CharmRuntime } from './runtime.ts';
import { workloadOf } from './workload.ts';

/** metadata.yaml's name: the `charm_name` of the topology */
const CHARM_NAME = 'kubeflow-upgrader';

/** whether databag `b` holds `a` already (an empty value is an absent key: relation-set deletes it) */
const same = (a: Record<string, string>, b: Record<string, string>) => Object.entries(a).every(([key, value]) => (b[key] ?? '') === value);

async function convergeMetricsEndpoint(charm: CharmRuntime, leader: boolean): Promise<void> {
  const ids = await charm.tools.relationIds(METRICS_ENDPOINT);
  if (ids.length === 0) return;
  const topology = topologyOf(charm.context, CHARM_NAME);
  const { metricsPort } = workloadOf(charm);
  for (const id of ids) {
    const address = await charm.tools.bindAddress(METRICS_ENDPOINT, id);
    if (address) {
      const unitData = scrapeUnitData(charm.context.unitName, address, hostname());
      if (!same(unitData, await charm.tools.relationGet(id, charm.context.unitName))) await charm.tools.relationSet(id, unitData);
    }
    if (leader) {
      const appData = scrapeAppData(topology, metricsPort);
      if (!same(appData, await charm.tools.relationGet(id, charm.context.appName, { app: true }))) await charm.tools.relationSet(id, appData, { app: true });
    }
  }
}

async function convergeGrafanaDashboard(charm: CharmRuntime): Promise<void> {
  const ids = await charm.tools.relationIds(GRAFANA_DASHBOARD);
  if (ids.length === 0) return;
  const templates = dashboardTemplates(topologyOf(charm.context, CHARM_NAME));
  for (const id of ids) {
    const written = (await charm.tools.relationGet(id, charm.context.appName, { app: true })).dashboards;
    let current: unknown;
    try {
      current = written ? (JSON.parse(written) as { templates?: unknown }).templates : undefined;
    } catch {
      current = undefined;
    }
    if (JSON.stringify(current) !== JSON.stringify(templates)) await charm.tools.relationSet(id, dashboardAppData(templates), { app: true });
  }
}

/** Both COS relations; a failure becomes a log line and a note, never a failed hook. */
export async function convergeCos(charm: CharmRuntime): Promise<void> {
  try {
    const leader = await charm.isLeader();
    await convergeMetricsEndpoint(charm, leader);
    if (leader) await convergeGrafanaDashboard(charm);
  } catch (error) {
    const sentence = describeInline(error);
    await charm.log('WARNING', `the COS relations were not updated: ${sentence}`);
    charm.facts.notes.push({ level: 'active', text: `COS relations not updated: ${sentence}` });
  }
}
