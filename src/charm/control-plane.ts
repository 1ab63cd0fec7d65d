// The control-plane relations as the charm sees them: the leader writes what we ask of MinIO and mysql-k8s, and each
// dispatch reads their answers into the engine's targets. Related-but-unusable answers become sentences (a status note,
// the backup's "not covered" list), never a failed hook.
import { HookToolError } from '../juju/hook-tools.ts';
import type { ControlPlaneTargets } from '../controlplane/engine.ts';
import {
  CONTROL_PLANE_ENDPOINTS,
  mysqlClientRequest,
  mysqlCredentialsSecretUri,
  objectStorageRequest,
  parseMysqlClient,
  parseObjectStorage,
  type ControlPlaneEndpoint,
  type ControlPlaneRelations,
  type Databag,
} from '../controlplane/relations.ts';
import type { CharmConfig } from './config.ts';
import type { CharmRuntime } from './runtime.ts';
import type { StatusNote } from './status.ts';

export interface ControlPlaneView {
  /** what the backup can copy now */
  targets: ControlPlaneTargets;
  /** which endpoints have a relation at all */
  related: ControlPlaneRelations;
  /** one sentence per related endpoint that cannot be used yet, e.g. "control plane not covered: kfp-db …" */
  unusable: string[];
}

/** The relation id of an endpoint, unless it is the one being broken in this hook. */
async function relationIdOf(charm: CharmRuntime, endpoint: ControlPlaneEndpoint): Promise<string | undefined> {
  const ids = await charm.tools.relationIds(endpoint);
  const broken = charm.context.event === `${endpoint}-relation-broken` ? charm.context.relation?.id : undefined;
  return ids.find((id) => id !== broken);
}

function requestFor(endpoint: ControlPlaneEndpoint, config: CharmConfig): Databag {
  return endpoint === 'object-storage' ? objectStorageRequest() : mysqlClientRequest(config[endpoint]);
}

/** The leader (re)writes our side of each related control-plane endpoint when it differs from what is there. */
export async function ensureControlPlaneRequests(charm: CharmRuntime): Promise<void> {
  if (!(await charm.isLeader())) return;
  const config = await charm.config();
  if (!config.ok) return;
  for (const endpoint of CONTROL_PLANE_ENDPOINTS) {
    const relationId = await relationIdOf(charm, endpoint);
    if (!relationId) continue;
    const wanted = requestFor(endpoint, config.config);
    const current = await charm.tools.relationGet(relationId, charm.context.appName, { app: true });
    if (Object.entries(wanted).some(([key, value]) => current[key] !== value)) await charm.tools.relationSet(relationId, wanted, { app: true });
  }
}

async function remoteAppData(charm: CharmRuntime, relationId: string): Promise<Databag | undefined> {
  const here = charm.context.relation?.id === relationId ? charm.context.relation : undefined;
  const remoteApp = here?.remoteApp ?? (await charm.tools.relationRemoteApp(relationId));
  if (!remoteApp) return undefined;
  return charm.tools.relationGet(relationId, remoteApp, { app: true });
}

/** Reads every control-plane relation. `modelNamespace` is where MinIO lives when it does not say. */
export async function readControlPlane(charm: CharmRuntime, config: CharmConfig): Promise<ControlPlaneView> {
  const view: ControlPlaneView = { targets: {}, related: { 'kfp-db': false, 'katib-db': false, 'object-storage': false }, unusable: [] };
  const notCovered = (endpoint: ControlPlaneEndpoint, reason: string) => view.unusable.push(`control plane not covered: ${endpoint} is related but ${reason}.`);
  for (const endpoint of CONTROL_PLANE_ENDPOINTS) {
    const relationId = await relationIdOf(charm, endpoint);
    if (!relationId) continue;
    view.related[endpoint] = true;
    const databag = await remoteAppData(charm, relationId);
    if (!databag) {
      notCovered(endpoint, 'the other application has not joined yet');
      continue;
    }
    if (endpoint === 'object-storage') {
      const parsed = parseObjectStorage(databag, charm.context.model.name);
      if (!parsed.ready) {
        notCovered(endpoint, parsed.reason);
        continue;
      }
      charm.redactor.add(parsed.value.secretKey);
      view.targets['object-storage'] = { minio: parsed.value, buckets: config['object-storage-buckets'] };
      continue;
    }
    let secret: Databag | undefined;
    const secretUri = mysqlCredentialsSecretUri(databag);
    if (secretUri) {
      try {
        // --refresh, as data_interfaces.py reads it: a rotated password is used from the next hook on.
        secret = await charm.tools.secretGet(secretUri, { refresh: true });
      } catch (error) {
        const detail = error instanceof HookToolError ? error.stderr.split('\n')[0]!.trim() : 'unknown error';
        await charm.log('WARNING', `secret-get of the ${endpoint} credentials failed: ${detail}`);
        notCovered(endpoint, 'its credentials secret cannot be read (check that it was granted to this application)');
        continue;
      }
    }
    const parsed = parseMysqlClient(databag, config[endpoint], secret);
    if (!parsed.ready) {
      notCovered(endpoint, parsed.reason);
      continue;
    }
    charm.redactor.add(parsed.value.password);
    view.targets[endpoint] = parsed.value;
  }
  return view;
}

/** The status note: which endpoints are not related, then the first related one that cannot be used. */
export async function controlPlaneNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  try {
    const config = await charm.config();
    if (!config.ok) return [];
    const view = await readControlPlane(charm, config.config);
    const absent = CONTROL_PLANE_ENDPOINTS.filter((endpoint) => !view.related[endpoint]);
    const notes: StatusNote[] = [];
    if (absent.length > 0) notes.push({ level: 'active', text: `control plane not covered: relate ${absent.join(', ')}` });
    const first = view.unusable[0];
    if (first) notes.push({ level: 'active', text: first.replace(/\.$/, '') });
    return notes;
  } catch (error) {
    await charm.log('WARNING', `control-plane relations could not be read: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    return [{ level: 'active', text: 'control-plane relations could not be read (see juju debug-log)' }];
  }
}

/** Hook handler: the leader answers the relation and the status is refreshed by the caller. */
export async function convergeControlPlane(charm: CharmRuntime): Promise<void> {
  try {
    await ensureControlPlaneRequests(charm);
  } catch (error) {
    // A bad database name or a relation-set refused: the status says what; the hook must not fail on it.
    await charm.log('WARNING', `control-plane request not written: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
}
