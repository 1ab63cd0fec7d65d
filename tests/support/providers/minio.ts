// An executable model of the provider side of `object-storage`: what the MinIO charm does with its relations on each
// of its hooks, so the relation data our tests read is what MinIO would have written, and our databag is judged as
// MinIO would judge it.
//
// Followed: canonical/minio-operator track/ckf-1.9 and track/ckf-1.10 `src/charm.py` (`main()` runs on install,
// config-changed, upgrade, leader-elected and object-storage joined/changed; `_get_interfaces` turns
// NoVersionsListed into WaitingStatus and NoCompatibleVersions into BlockedStatus and returns BEFORE `_send_info` and
// `set_spec`, so while one related app has not listed its versions no consumer gets data and the pod spec is not
// re-applied); track/1.10 `src/charm.py` (the same SDI broadcast as a chisme component that the MinIO Pebble service
// depends on); canonical/serialized-data-interface 0.7 `serialized_data_interface/sdi.py` (`get_interface` writes
// the provider's `_supported_versions` on every relation, then `get_data` unwraps every relation: a requirer app
// without `_supported_versions` raises UnversionedRelation "List of <relation> versions not found for apps: <app>",
// no common version raises IncompatibleVersionsError; `send_data` stores the whole answer as one `yaml.safe_dump`
// document under `data`) and `errors.py` for the messages; minio-operator `metadata.yaml` for schema v1 (access-key,
// namespace, port, secret-key, secure, service).
import type { Databag, FakeRelation } from '../juju/state.ts';
import { parse as parseYaml } from 'yaml';
import { pyyamlSafeDump } from './pyyaml-dump.ts';

/** One object-storage relation as MinIO sees it: the requirer's app databag and MinIO's own. */
export interface MinioRelation {
  id: string;
  requirerApp: string;
  requirerAppData: Databag;
  minioAppData: Databag;
}

export interface MinioCharm {
  app: string;
  model: string;
  /** minio's config options `access-key`, `secret-key` (empty: a generated one) and `port` */
  accessKey: string;
  secretKey: string;
  port: number;
}

export interface MinioRun {
  status: 'active' | 'waiting' | 'blocked';
  message: string;
  /** whether this run reached `set_spec` (1.9) / the workload (1.10); false means MinIO stalled */
  workloadApplied: boolean;
}

const MINIO_VERSIONS = ['v1'];

/** The view of our charm's fake relation that MinIO has: our app databag is its remote side. */
export function minioSideOf(relation: FakeRelation, ourApp = 'kubeflow-upgrader'): MinioRelation {
  return { id: relation.id, requirerApp: ourApp, requirerAppData: relation.localAppData, minioAppData: relation.remoteAppData };
}

/** Another consumer of MinIO (kfp-ui, kfp-api, kfp-profile-controller) with its own databags. */
export function otherConsumer(id: string, app: string, listsVersions: boolean): MinioRelation {
  return { id, requirerApp: app, requirerAppData: listsVersions ? { _supported_versions: pyyamlSafeDump(MINIO_VERSIONS) } : {}, minioAppData: {} };
}

function relationName(relation: MinioRelation): string {
  return `<ops.model.Relation object-storage:${relation.id.split(':').pop()}>`;
}

/** One run of MinIO's `main()` as leader over all its object-storage relations; writes into their databags. */
export function runMinio(charm: MinioCharm, relations: MinioRelation[]): MinioRun {
  // SDI get_interface: the provider lists its versions on every relation first.
  for (const relation of relations) relation.minioAppData['_supported_versions'] = pyyamlSafeDump(MINIO_VERSIONS);
  // SDI get_data → unwrap → get_version, relation by relation: the first failure stops the whole hook.
  for (const relation of relations) {
    const raw = relation.requirerAppData['_supported_versions'];
    if (!raw) return { status: 'waiting', message: `List of ${relationName(relation)} versions not found for apps: ${relation.requirerApp}`, workloadApplied: false };
    const listed: unknown = parseYaml(raw, { version: '1.1' });
    if (!Array.isArray(listed)) throw new Error(`Failed to deserialize data on object-storage:${relation.id.split(':').pop()} from ${relation.requirerApp} at '_supported_versions'`);
    if (!listed.some((version) => MINIO_VERSIONS.includes(String(version)))) {
      return { status: 'blocked', message: `No compatible object-storage versions found for apps: ${relation.requirerApp}`, workloadApplied: false };
    }
    // The v1 schema has no `requires` section: any `data` a requirer writes is a MissingSchemaError (a hook error).
    if (relation.requirerAppData['data']) throw new Error(`No requires schema found for data on object-storage:${relation.id.split(':').pop()} from ${relation.requirerApp}`);
  }
  if (charm.secretKey.length < 8) return { status: 'blocked', message: 'The `secret-key` config value must be at least 8 characters long.', workloadApplied: false };
  const data = pyyamlSafeDump({
    'access-key': charm.accessKey, namespace: charm.model, port: charm.port, 'secret-key': charm.secretKey, secure: false, service: charm.app,
  });
  for (const relation of relations) relation.minioAppData['data'] = data;
  return { status: 'active', message: '', workloadApplied: true };
}
