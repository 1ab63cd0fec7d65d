// Relation data of the control-plane endpoints, as pure functions: what we write as requirer and how we read the
// provider's answer. The charm's hooks call these; nothing here calls a hook tool.
//
// object-storage (canonical/minio-operator, serialized-data-interface v1): each side lists the versions it speaks in
// its application databag under `_supported_versions` (a YAML list); MinIO answers with one YAML document under
// `data`: access-key, secret-key, service, port, namespace (may be null), secure.
//
// mysql_client (data-platform-libs data_interfaces, DatabaseRequires): the requirer writes `database` and
// `requested-secrets`; the provider answers `endpoints` ("host:port,…"), `read-only-endpoints`, `version`,
// `database`, and the credentials either in plain `username`/`password` or in a Juju secret named by `secret-user`
// (keys username, password).
import { parsePythonYaml } from './python-yaml.ts';
import { z } from 'zod';

export type Databag = Record<string, string>;

export const CONTROL_PLANE_ENDPOINTS = ['kfp-db', 'katib-db', 'object-storage'] as const;
export type ControlPlaneEndpoint = (typeof CONTROL_PLANE_ENDPOINTS)[number];

export type Parsed<T> = { ready: true; value: T } | { ready: false; reason: string };

// ---------------------------------------------------------------- object-storage

export const OBJECT_STORAGE_VERSIONS = ['v1'] as const;

/** What our leader writes into its application databag on the object-storage relation. */
export function objectStorageRequest(): Databag {
  return { _supported_versions: '- v1\n' };
}

export const MinioRelationData = z.object({
  'access-key': z.string().min(1),
  'secret-key': z.string().min(1),
  service: z.string().min(1),
  port: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]).pipe(z.number().int().min(1).max(65535)),
  namespace: z.string().min(1).nullish(),
  secure: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).default(false),
});

export interface MinioEndpoint {
  /** URL the Job's rclone reaches MinIO at, through the in-cluster Service. */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  service: string;
  namespace: string;
}

/**
 * Reads MinIO's application databag. `modelNamespace` stands in when MinIO leaves `namespace` null (it lives in our
 * model then).
 */
export function parseObjectStorage(databag: Databag, modelNamespace: string): Parsed<MinioEndpoint> {
  const raw = databag['data'];
  if (raw === undefined || raw === '') return { ready: false, reason: 'MinIO has not published its connection data yet' };
  let document: unknown;
  try {
    // Written by PyYAML (SDI's safe_dump): YAML 1.1 as PyYAML reads it, so a key like `1e3` stays a string.
    document = parsePythonYaml(raw);
  } catch {
    return { ready: false, reason: 'MinIO published connection data that is not valid YAML' };
  }
  const parsed = MinioRelationData.safeParse(document);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? 'data')))].join(', ');
    return { ready: false, reason: `MinIO's connection data is missing or has invalid ${fields}` };
  }
  const data = parsed.data;
  const namespace = data.namespace ?? modelNamespace;
  const scheme = data.secure ? 'https' : 'http';
  return {
    ready: true,
    value: {
      endpoint: `${scheme}://${data.service}.${namespace}.svc.cluster.local:${data.port}`,
      accessKey: data['access-key'],
      secretKey: data['secret-key'],
      service: data.service,
      namespace,
    },
  };
}

// ---------------------------------------------------------------- mysql_client

/** The secrets data_interfaces requirers ask for; `secret-user` carries username and password. */
export const MYSQL_REQUESTED_SECRETS = ['username', 'password', 'tls', 'tls-ca', 'uris'] as const;

const DATABASE_NAME = /^[A-Za-z0-9_]{1,64}$/;

/** What our leader writes into its application databag on kfp-db / katib-db. Throws one sentence on a bad name. */
export function mysqlClientRequest(database: string): Databag {
  if (!DATABASE_NAME.test(database)) {
    throw new Error(`"${database}" is not a usable database name; use letters, digits and underscores (at most 64).`);
  }
  return { database, 'requested-secrets': JSON.stringify(MYSQL_REQUESTED_SECRETS) };
}

export interface MysqlEndpoint {
  host: string;
  port: number;
  database: string;
  username: string;
  password: string;
  version?: string;
}

/** The Juju secret URI holding the credentials, when the provider uses one; the hook reads it with secret-get. */
export function mysqlCredentialsSecretUri(databag: Databag): string | undefined {
  const uri = databag['secret-user'];
  return uri && uri.startsWith('secret:') ? uri : undefined;
}

const HostPort = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^\s:,]+):(\d{1,5})$/);

function firstEndpoint(list: string | undefined): { host: string; port: number } | undefined {
  for (const entry of (list ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!HostPort.safeParse(entry).success) continue;
    const colon = entry.lastIndexOf(':');
    const port = Number(entry.slice(colon + 1));
    if (port >= 1 && port <= 65535) return { host: entry.slice(0, colon).replace(/^\[|\]$/g, ''), port };
  }
  return undefined;
}

/**
 * Reads the provider's application databag. `secretContent` is what `secret-get` returned for
 * mysqlCredentialsSecretUri(databag), when there is one. `requestedDatabase` is what we asked for.
 */
export function parseMysqlClient(databag: Databag, requestedDatabase: string, secretContent?: Databag): Parsed<MysqlEndpoint> {
  // The primary's endpoint: a dump needs a consistent snapshot and a restore must write.
  const endpoint = firstEndpoint(databag['endpoints']);
  if (!endpoint) return { ready: false, reason: 'the database has not published its endpoints yet' };
  const secretUri = mysqlCredentialsSecretUri(databag);
  const source = secretUri ? secretContent : databag;
  if (secretUri && !secretContent) return { ready: false, reason: `the credentials secret ${secretUri} has not been read` };
  const username = source?.['username'];
  const password = source?.['password'];
  if (!username || !password) return { ready: false, reason: 'the database has not published credentials yet' };
  const database = databag['database'] || requestedDatabase;
  return {
    ready: true,
    value: { ...endpoint, database, username, password, ...(databag['version'] ? { version: databag['version'] } : {}) },
  };
}

// ---------------------------------------------------------------- coverage

export interface ControlPlaneRelations {
  'kfp-db': boolean;
  'katib-db': boolean;
  'object-storage': boolean;
}

const WHAT_EACH_COVERS: Record<ControlPlaneEndpoint, string> = {
  'kfp-db': 'relate kfp-db to the mysql-k8s application of Kubeflow Pipelines (kfp-db) to cover pipelines, runs and experiments',
  'katib-db': 'relate katib-db to the mysql-k8s application of Katib (katib-db) to cover experiment results',
  'object-storage': 'relate object-storage to minio to cover pipeline artefacts',
};

/** One sentence per control-plane relation that is absent, e.g. "control plane not covered: relate kfp-db …". */
export function notCoveredSentences(present: ControlPlaneRelations): string[] {
  return CONTROL_PLANE_ENDPOINTS.filter((endpoint) => !present[endpoint]).map(
    (endpoint) => `control plane not covered: ${WHAT_EACH_COVERS[endpoint]}.`,
  );
}
