// An executable model of the provider side of `mysql_client` as mysql-k8s answers it, so the kfp-db / katib-db
// relation data our tests read is what mysql-k8s would have written.
//
// Followed: canonical/mysql-k8s-operator `lib/charms/data_platform_libs/v0/data_interfaces.py` (LIBPATCH 41):
// `diff()` keeps the requirer's previous app databag as JSON under the provider's own `data` key and
// DatabaseProvides emits database_requested only when `database` is newly ADDED (a changed value is ignored);
// `update_relation_data` puts the fields the requirer listed in `requested-secrets` into one Juju secret per group
// (username, password, uris → group "user") and writes its URI as `secret-user`, the rest as plain strings.
// canonical/mysql-k8s-operator `src/relations/mysql_provider.py` `_on_database_requested`: leader only; creates the
// database and a user `relation-<id>_<model uuid>` (26 characters at most) scoped to it; endpoints are
// `dotappend(socket.getfqdn("<app>-primary"))` — the Service's FQDN WITH a trailing dot — and `<app>-replicas` for
// read-only, port 3306; then credentials, version and database. `lib/charms/mysql/v0/mysql.py` `create_scoped_user`:
// GRANT USAGE ON *.* and ALL PRIVILEGES ON `<database>`.* — no SUPER.
import type { Databag, FakeJujuState, FakeRelation } from '../juju/state.ts';

export interface MysqlK8sApp {
  app: string;
  model: string;
  modelUuid: string;
  /** the MySQL version it reports */
  version: string;
  /** mysql-k8s publishes port 3306; the tests' MariaDB listens elsewhere and the simulated kubelet maps the Service */
  port?: number;
  /** creates the database and the scoped user (the tests run this against MariaDB) */
  createDatabase(database: string, user: string, password: string): Promise<void>;
}

export interface MysqlAnswer {
  /** what mysql-k8s did on this relation-changed */
  requested: string | undefined;
  user?: string;
}

let secretCounter = 0;

function decoded(bag: Databag, key: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(bag[key] ?? '{}');
    return value && typeof value === 'object' ? (value as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/**
 * One relation-changed on mysql-k8s's leader for our relation `relation` (our app databag is its remote side).
 * `password` is what mysql-k8s generates. Mutates the fake Juju state: the provider's app databag and a secret.
 */
export async function mysqlK8sRelationChanged(state: FakeJujuState, relation: FakeRelation, app: MysqlK8sApp, password: string): Promise<MysqlAnswer> {
  const mine = relation.remoteAppData;
  const previous = decoded(mine, 'data');
  const current = Object.fromEntries(Object.entries(relation.localAppData).filter(([key]) => key !== 'data'));
  mine['data'] = JSON.stringify(current);
  const added = Object.keys(current).filter((key) => !(key in previous));
  if (!added.includes('database')) return { requested: undefined };
  const database = current['database']!;
  const relationNumber = relation.id.split(':').pop()!;
  const user = `relation-${relationNumber}_${app.modelUuid.replaceAll('-', '')}`.slice(0, 26);
  await app.createDatabase(database, user, password);
  const fqdn = (name: string) => `${name}.${app.model}.svc.cluster.local.`;
  const port = app.port ?? 3306;
  mine['endpoints'] = `${fqdn(`${app.app}-primary`)}:${port}`;
  mine['read-only-endpoints'] = `${fqdn(`${app.app}-replicas`)}:${port}`;
  let requestedSecrets: unknown = [];
  try {
    requestedSecrets = JSON.parse(current['requested-secrets'] ?? '[]');
  } catch {
    requestedSecrets = [];
  }
  const inSecret = Array.isArray(requestedSecrets) ? requestedSecrets.filter((field) => field === 'username' || field === 'password') : [];
  if (inSecret.length > 0) {
    const uri = `secret:d0mysqlk8s${String(++secretCounter).padStart(10, '0')}`;
    state.secrets[uri] = { revisions: [{ username: user, password }] };
    mine['secret-user'] = uri;
  } else {
    mine['username'] = user;
    mine['password'] = password;
  }
  mine['version'] = app.version;
  mine['database'] = database;
  return { requested: database, user };
}

/** mysql-k8s rotating the relation user's password: a new revision of the `secret-user` secret. */
export function rotateMysqlPassword(state: FakeJujuState, relation: FakeRelation, password: string, apply: (user: string, password: string) => Promise<void>): Promise<void> {
  const uri = relation.remoteAppData['secret-user'];
  const secret = uri ? state.secrets[uri] : undefined;
  if (!uri || !secret) throw new Error(`relation ${relation.id} has no secret-user to rotate`);
  const user = secret.revisions.at(-1)!['username']!;
  secret.revisions.push({ username: user, password });
  return apply(user, password);
}
