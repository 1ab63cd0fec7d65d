// The workload container `upgrader` and its service (src/service): on upgrader-pebble-ready and on every config,
// relation and secret change the charm pushes the service's bundle and its settings through Pebble's files API and
// replans. The settings (S3 credentials, the encryption key, the control-plane databases' and MinIO's credentials) go
// into a file of mode 0600, never into the layer's environment, which `pebble plan` prints; the layer is the same
// whatever the settings, so a replan after new settings restarts nothing and a scheduled backup in flight goes on (the
// service reads the file again at each wake-up).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { PebbleClient, PebbleError } from '../pebble/client.ts';
import {
  DEFAULT_WORKLOAD_ROOT, LAYER_LABEL, METRICS_PORT, serviceLayer, socketOf, WORKLOAD_CONTAINER, workloadPaths,
  type LastRestore, type ServiceSettings, type ServiceStatus,
} from '../workload/settings.ts';
import type { CharmRuntime } from './runtime.ts';
import type { StatusNote } from './status.ts';
import { readS3Readiness } from './s3.ts';
import { readControlPlane } from './control-plane.ts';
import { controlPlaneImages } from './backup-steps.ts';
import { CHARM_VERSION } from './version.ts';
import { describeInline } from '../errors/index.ts';

export const PEBBLE_READY = `${WORKLOAD_CONTAINER}-pebble-ready`;

export function workloadOf(charm: CharmRuntime) {
  const w = charm.context.workload;
  return {
    client: new PebbleClient(w.socket ?? socketOf(WORKLOAD_CONTAINER)),
    root: w.root ?? DEFAULT_WORKLOAD_ROOT,
    metricsPort: w.metricsPort ?? METRICS_PORT,
  };
}

/** The service's settings from the config and the relations; undefined when the config is invalid (the status says why). */
async function settingsOf(charm: CharmRuntime): Promise<ServiceSettings | undefined> {
  const config = await charm.config();
  if (!config.ok) return undefined;
  const c = config.config;
  const readiness = await readS3Readiness(charm);
  const key = await charm.encryptionKey();
  // one unit backs up on the schedule: the leader (the lease would keep two from writing at once, not from both running)
  const leader = await charm.isLeader();
  // what backup-state would copy of the control plane, secrets included (this file is mode 0600), as the relations say now
  const { targets, related, unusable } = await readControlPlane(charm, c);
  return {
    version: 1,
    ...(c['backup-schedule'] && leader ? { schedule: c['backup-schedule'] } : {}),
    retention: c['backup-retention'],
    ...(readiness.state === 'ready' ? { s3: readiness.settings } : {}),
    ...(key ? { encryptionKey: key } : {}),
    modelNamespace: charm.context.model.name,
    unit: charm.context.unitName,
    backup: {
      profileNamespaceSelector: c['profile-namespace-selector'],
      includeResources: c['include-resources'],
      excludeResources: c['exclude-resources'],
      protectedCrdGroups: c['protected-crd-groups'],
      toolVersion: CHARM_VERSION,
    },
    movers: {
      image: c['volume-mover-image'],
      concurrency: c['volume-mover-concurrency'],
      startTimeoutSeconds: c['volume-mover-start-timeout'],
      resources: c['volume-mover-resources'],
      engine: c['volume-mover-engine'],
      gatewayImage: c['control-plane-rclone-image'],
      snapshotClass: c['volume-snapshot-class'],
    },
    controlPlane: { targets, related, unusable, images: controlPlaneImages(c) },
    ...(charm.context.kubeconfig ? { kubeconfig: charm.context.kubeconfig } : {}),
  };
}

/**
 * Pushes the bundle (when the container's copy differs, or on pebble-ready and upgrade-charm) and the settings, adds
 * the layer and replans. A container whose Pebble does not answer yet is left for its pebble-ready; nothing fails the
 * hook: what went wrong becomes a note.
 */
export async function convergeWorkload(charm: CharmRuntime): Promise<void> {
  const { client, root } = workloadOf(charm);
  try {
    await client.systemInfo();
  } catch (error) {
    await charm.log('DEBUG', `the ${WORKLOAD_CONTAINER} container is not reachable yet (${describeInline(error)}); its pebble-ready will set it up`);
    return;
  }
  try {
    const settings = await settingsOf(charm);
    if (!settings) return;
    const paths = workloadPaths(root);
    const bundle = readFileSync(join(charm.context.charmDir, 'lib', 'service.mjs'));
    const fresh = charm.context.event === PEBBLE_READY || charm.context.event === 'upgrade-charm';
    if (fresh || (await client.stat(paths.bundle))?.size !== bundle.length) await client.push(paths.bundle, bundle, { makeDirs: true, permissions: '644' });
    await client.push(paths.settings, `${JSON.stringify(settings)}\n`, { makeDirs: true, permissions: '600' });
    await client.addLayer(LAYER_LABEL, serviceLayer(root));
    await client.replan();
  } catch (error) {
    const sentence = error instanceof PebbleError ? error.message : describeInline(error);
    await charm.log('WARNING', `the scheduled-backup service was not set up: ${sentence}`);
    charm.facts.notes.push({ level: 'active', text: `scheduled backups not set up: ${sentence}` });
  }
}

/**
 * How a restore-state ended, for the service's restore metrics: a file in the container the service reads at each
 * scrape. Best effort: a container that is not up loses the record, never the restore's result.
 */
export async function recordRestore(charm: CharmRuntime, record: LastRestore): Promise<void> {
  const { client, root } = workloadOf(charm);
  try {
    await client.push(workloadPaths(root).lastRestore, `${JSON.stringify(record)}\n`, { makeDirs: true, permissions: '644' });
  } catch (error) {
    // a container not up yet is the common case (its pebble-ready comes later): said at DEBUG, as convergeWorkload does
    const unreachable = error instanceof PebbleError && ['ENOENT', 'ECONNREFUSED'].includes(error.kind ?? '');
    await charm.log(unreachable ? 'DEBUG' : 'WARNING', `the restore's outcome was not recorded for the metrics: ${describeInline(error)}`);
  }
}

/** GET /status of the service (the charm container shares the pod's network with the workload). */
function serviceStatus(port: number): Promise<ServiceStatus | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/status', timeout: 2000 }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text) as ServiceStatus);
        } catch {
          resolve(undefined);
        }
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** The schedule's next run and last result, for the status, when the service answers. */
export async function scheduleNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  const config = await charm.config();
  if (!config.ok || !config.config['backup-schedule']) return [];
  const status = await serviceStatus(workloadOf(charm).metricsPort);
  if (!status) return [{ level: 'active', text: `scheduled backups: the ${WORKLOAD_CONTAINER} container's service does not answer yet` }];
  const parts: string[] = [];
  if (status.running) parts.push(`scheduled backup running since ${status.running.started}`);
  else if (status.nextRun) parts.push(`next scheduled backup ${status.nextRun}`);
  if (status.last) parts.push(`last scheduled run ${status.last.result} at ${status.last.at}${status.last.backupId ? ` (${status.last.backupId})` : ''}`);
  return parts.length ? [{ level: 'active', text: parts.join(', ') }] : [];
}
