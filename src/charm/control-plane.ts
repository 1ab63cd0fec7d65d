// The control-plane relations as the charm sees them: the leader writes what we ask of MinIO and mysql-k8s, and each
// dispatch reads their answers into the engine's targets. Related-but-unusable answers become sentences (a status note,
// the backup's "not covered" list), never a failed hook.
import { HookToolError } from '../juju/hook-tools.ts';
import type { ControlPlaneView } from '../controlplane/steps.ts';
import {
  CONTROL_PLANE_ENDPOINTS,
  mysqlClientRequest,
  mysqlCredentialsSecretUri,
  objectStorageRequest,
  parseMysqlClient,
  parseObjectStorage,
  type ControlPlaneEndpoint,
  type Databag,
} from '../controlplane/relations.ts';
import { ConfigSchema, type CharmConfig } from './config.ts';
import type { CharmRuntime } from './runtime.ts';
import type { StatusNote } from './status.ts';
import { describe } from '../errors/index.ts';

export type { ControlPlaneView } from '../controlplane/steps.ts';

/** The relation id of an endpoint, unless it is the one being broken in this hook. */
async function relationIdOf(charm: CharmRuntime, endpoint: ControlPlaneEndpoint): Promise<string | undefined> {
  const ids = await charm.tools.relationIds(endpoint);
  const broken = charm.context.event === `${endpoint}-relation-broken` ? charm.context.relation?.id : undefined;
  return ids.find((id) => id !== broken);
}

/** One endpoint whose request could not be written in this hook. */
export interface RequestProblem {
  endpoint: ControlPlaneEndpoint;
  sentence: string;
  /** true when retrying the hook can fix it (a hook tool failed); false when the operator must (a bad option) */
  retry: boolean;
}

// MinIO (serialized-data-interface) answers no consumer at all while one related application has not listed its
// versions, and on ckf-1.9 stops re-applying its pod spec too (canonical/minio-operator src/charm.py main()): so
// object-storage goes first and depends on nothing but leadership — not on our config, not on the databases.
const REQUEST_ORDER: readonly ControlPlaneEndpoint[] = ['object-storage', 'kfp-db', 'katib-db'];

/** What we ask on one endpoint, judged on that endpoint's own option only: a typo elsewhere must not withhold it. */
async function requestFor(charm: CharmRuntime, endpoint: ControlPlaneEndpoint): Promise<Databag | RequestProblem> {
  if (endpoint === 'object-storage') return objectStorageRequest();
  const option = ConfigSchema.shape[endpoint].safeParse((await charm.configValues())[endpoint]);
  if (!option.success) return { endpoint, sentence: `${endpoint} request not written: config option ${endpoint} must be a MySQL database name`, retry: false };
  return mysqlClientRequest(option.data);
}

/**
 * The leader (re)writes our side of each related control-plane endpoint when it differs from what is there. Each
 * endpoint on its own: a failure on one is reported and the others are still written.
 */
export async function ensureControlPlaneRequests(charm: CharmRuntime): Promise<RequestProblem[]> {
  if (!(await charm.isLeader())) return [];
  const problems: RequestProblem[] = [];
  for (const endpoint of REQUEST_ORDER) {
    try {
      const relationId = await relationIdOf(charm, endpoint);
      if (!relationId) continue;
      const wanted = await requestFor(charm, endpoint);
      if ('sentence' in wanted) {
        problems.push(wanted as RequestProblem);
        continue;
      }
      const current = await charm.tools.relationGet(relationId, charm.context.appName, { app: true });
      if (Object.entries(wanted).some(([key, value]) => current[key] !== value)) await charm.tools.relationSet(relationId, wanted as Databag, { app: true });
    } catch (error) {
      problems.push({ endpoint, sentence: `${endpoint} request not written: ${firstLine(error)}`, retry: true });
    }
  }
  return problems;
}

function firstLine(error: unknown): string {
  const text = error instanceof HookToolError ? error.stderr || error.message : error instanceof Error ? error.message : String(error);
  return text.split('\n').map((line) => line.trim()).find(Boolean) ?? 'unknown error';
}

async function remoteAppData(charm: CharmRuntime, relationId: string): Promise<Databag | undefined> {
  const here = charm.context.relation?.id === relationId ? charm.context.relation : undefined;
  const remoteApp = here?.remoteApp ?? (await charm.tools.relationRemoteApp(relationId));
  if (!remoteApp) return undefined;
  return charm.tools.relationGet(relationId, remoteApp, { app: true });
}

/**
 * Reads every control-plane relation, once per dispatch (the service's settings and the status both ask; the config
 * is the dispatch's). `modelNamespace` is where MinIO lives when it does not say.
 */
export function readControlPlane(charm: CharmRuntime, config: CharmConfig): Promise<ControlPlaneView> {
  return (charm.facts.controlPlane ??= readRelations(charm, config));
}

async function readRelations(charm: CharmRuntime, config: CharmConfig): Promise<ControlPlaneView> {
  const view: ControlPlaneView = { targets: {}, related: { 'kfp-db': false, 'katib-db': false, 'object-storage': false }, unusable: [] };
  const notCovered = (endpoint: ControlPlaneEndpoint, reason: string) => view.unusable.push(`control plane not covered: ${endpoint} is related but ${reason}.`);
  for (const endpoint of CONTROL_PLANE_ENDPOINTS) {
    try {
      await readEndpoint(charm, config, endpoint, view, notCovered);
    } catch (error) {
      // One relation that cannot be read must not hide the others.
      await charm.log('WARNING', `reading ${endpoint} failed: ${firstLine(error)}`);
      notCovered(endpoint, 'its relation data could not be read (see juju debug-log)');
    }
  }
  return view;
}

async function readEndpoint(
  charm: CharmRuntime, config: CharmConfig, endpoint: ControlPlaneEndpoint, view: ControlPlaneView, notCovered: (endpoint: ControlPlaneEndpoint, reason: string) => void,
): Promise<void> {
  const relationId = await relationIdOf(charm, endpoint);
  if (!relationId) return;
  view.related[endpoint] = true;
  const databag = await remoteAppData(charm, relationId);
  if (!databag) return notCovered(endpoint, 'the other application has not joined yet');
  if (endpoint === 'object-storage') {
    const parsed = parseObjectStorage(databag, charm.context.model.name);
    if (!parsed.ready) return notCovered(endpoint, parsed.reason);
    charm.redactor.add(parsed.value.secretKey);
    view.targets['object-storage'] = { minio: parsed.value, buckets: config['object-storage-buckets'] };
    return;
  }
  let secret: Databag | undefined;
  const secretUri = mysqlCredentialsSecretUri(databag);
  if (secretUri) {
    try {
      // --refresh on every read, as data_interfaces' requirer does: mysql-k8s rotates the password in a new
      // revision, and without it this unit keeps reading the revision it first saw.
      secret = await charm.tools.secretGet(secretUri, { refresh: true });
    } catch (error) {
      await charm.log('WARNING', `secret-get of the ${endpoint} credentials failed: ${firstLine(error)}`);
      return notCovered(endpoint, 'its credentials secret cannot be read (check that it was granted to this application)');
    }
  }
  const parsed = parseMysqlClient(databag, config[endpoint], secret);
  if (!parsed.ready) return notCovered(endpoint, parsed.reason);
  // mysql-k8s acts only on a newly added `database` (data_interfaces' diff): a later change of our option is ignored
  // there, so say which database it serves instead of backing up one the operator no longer asked for.
  if (parsed.value.database !== config[endpoint]) {
    return notCovered(endpoint, `mysql-k8s serves database ${parsed.value.database}, not the configured ${config[endpoint]} (it acts only on the first database requested: set ${endpoint} back, or remove and re-add the relation)`);
  }
  charm.redactor.add(parsed.value.password);
  view.targets[endpoint] = parsed.value;
}

/** Unit-state key: the sentences of the last backup-state that found related databases without tables. */
const EMPTY_DATABASES_KEY = 'control-plane-empty-databases';

export function emptyDatabasesState(sentences: readonly string[]): Record<string, string> {
  return { [EMPTY_DATABASES_KEY]: JSON.stringify(sentences) };
}

async function rememberedEmptyDatabases(charm: CharmRuntime): Promise<string[]> {
  const raw = await charm.tools.stateGetKey(EMPTY_DATABASES_KEY).catch(() => undefined);
  try {
    const list: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

/** What each control-plane relation brings into a backup, as the status names it while the relation is absent. */
const WHAT_IS_NOT_BACKED_UP: Record<ControlPlaneEndpoint, string> = {
  'kfp-db': "KFP's database",
  'katib-db': "Katib's database",
  'object-storage': "MinIO's artefacts",
};

/**
 * The status note for absent control-plane relations. It names only the parts those relations bring, never the whole
 * control plane: ML Metadata is copied from mlmd's storage without any relation (src/controlplane/mlmd.ts), so a unit
 * with none of the three relations still backs it up, and the note must not say otherwise.
 */
export function absentRelationsNote(absent: readonly ControlPlaneEndpoint[]): string {
  const parts = absent.map((endpoint) => WHAT_IS_NOT_BACKED_UP[endpoint]);
  const listed = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
  return `${listed} not backed up: relate ${absent.join(', ')} (ML Metadata needs no relation)`;
}

/**
 * The status note: which endpoints are not related, then the first related one that cannot be used, else the first
 * database the last backup found without tables.
 */
export async function controlPlaneNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  try {
    const config = await charm.config();
    if (!config.ok) return [];
    const view = await readControlPlane(charm, config.config);
    const absent = CONTROL_PLANE_ENDPOINTS.filter((endpoint) => !view.related[endpoint]);
    const notes: StatusNote[] = [];
    if (absent.length > 0) notes.push({ level: 'active', text: absentRelationsNote(absent) });
    const first = view.unusable[0] ?? (await rememberedEmptyDatabases(charm))[0];
    if (first) notes.push({ level: 'active', text: first.replace(/\.$/, '') });
    return notes;
  } catch (error) {
    await charm.log('WARNING', `control-plane relations could not be read: ${describe(error)}`);
    return [{ level: 'active', text: 'control-plane relations could not be read (see juju debug-log)' }];
  }
}

/** What a hook learnt while writing the control-plane requests. */
export interface ControlPlaneConvergence {
  notes: StatusNote[];
  /** a request is still owed and retrying the hook can write it: the hook must not end with exit 0 */
  owed: boolean;
}

/**
 * Hook step: the leader writes its requests. A bad option is already the blocked status (config problem); a hook
 * tool that failed leaves work owed, so the status says which endpoint and the hook fails for Juju to retry it.
 */
export async function convergeControlPlane(charm: CharmRuntime): Promise<ControlPlaneConvergence> {
  let problems: RequestProblem[];
  try {
    problems = await ensureControlPlaneRequests(charm);
  } catch (error) {
    // is-leader itself failed: nothing could be written.
    problems = [{ endpoint: 'object-storage', sentence: `control-plane requests not written: ${firstLine(error)}`, retry: true }];
  }
  const owed = problems.filter((problem) => problem.retry);
  for (const problem of problems) await charm.log(problem.retry ? 'ERROR' : 'WARNING', problem.sentence);
  return {
    notes: owed.map((problem) => ({ level: 'waiting', text: `${problem.sentence}; Juju retries this hook` })),
    owed: owed.length > 0,
  };
}
