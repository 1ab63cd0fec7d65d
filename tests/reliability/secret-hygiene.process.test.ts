// Secret hygiene: every flow of the charm runs through the real ./dispatch with recognisable canary values — the S3
// key pairs of both s3-integrator tracks (and a rotated one), the encryption-key passphrase, the kfp-db password and
// values inside user Secrets of the cluster — and everything the charm emitted is scanned for them: every hook-tool
// call's arguments, action results, failure and logs, juju-log lines, statuses, the relation data and unit state we
// wrote, stdout and stderr, and (with encryption on) the bucket, decompressed; with volume data, every version of the
// mover Jobs, their Pods and Events and the Pods' logs, and no mover credentials Secret left. Zero hits, also in base64.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { runDispatch, type DispatchEvent, type DispatchOutcome } from '../support/juju/harness.ts';
import { S3_RELATION_ID, TRACK2_SECRET, s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState, type FakeRelation } from '../support/juju/state.ts';
import { Track2Integrator } from '../support/juju/s3-integrator.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { simulatedKubelet } from '../support/kubelet/index.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const BUCKET = 'hygiene';

// s3rver checks the access key id against its account registry (it does not verify SigV4 signatures): each canary
// pair is registered there, so the canary key id is what authorises every request.
const CANARY = {
  track1AccessKey: 'CANARYAKIDTRACK1QX7W',
  track1SecretKey: 'canary-t1-secret-key-Zq81vR3m',
  track2AccessKey: 'CANARYAKIDTRACK2PL4K',
  track2SecretKey: 'canary-t2-secret-key-Hd92kW5n',
  rotatedAccessKey: 'CANARYAKIDROTATEDM3J',
  rotatedSecretKey: 'canary-rotated-secret-key-Ua73pQ0x',
  encryptionKey: 'canary-encryption-passphrase-Lm47sT8v',
  kfpDbPassword: 'canary-kfp-db-password-Re62nB1c',
  userSecret: 'canary-user-secret-value-Gf35yH9d',
  userSecretChanged: 'canary-user-secret-changed-Wk28jN4e',
} as const;
/** The user Secret values legitimately sit in an unencrypted backup; everything else must never reach the bucket. */
const NEVER_IN_ANY_BUCKET = [CANARY.track1AccessKey, CANARY.track1SecretKey, CANARY.track2AccessKey, CANARY.track2SecretKey, CANARY.rotatedAccessKey, CANARY.rotatedSecretKey, CANARY.encryptionKey, CANARY.kfpDbPassword];

const ENCRYPTION_SECRET = 'secret:cta0encryptionkey00000001';
const DB_SECRET = 'secret:cta0mysqlk8s000000000001';
const USER_SECRET_NAME = 'canary-credentials';

/** The canary and its base64 (standard and url) at every byte alignment, so a value inside a longer encoded text is found. */
function forms(value: string): string[] {
  const out = new Set([value]);
  for (let shift = 0; shift < 3; shift++) {
    const bytes = Buffer.concat([Buffer.alloc(shift), Buffer.from(value)]);
    for (const encoding of ['base64', 'base64url'] as const) {
      const encoded = bytes.toString(encoding).replace(/=+$/, '');
      // Drop the characters that depend on the bytes before (the shift) or after (the tail) the value.
      out.add(encoded.slice(shift === 0 ? 0 : 4, encoded.length - 4));
    }
  }
  return [...out];
}

function hitsIn(where: string, text: string, canaries: readonly string[]): string[] {
  const hits: string[] = [];
  for (const canary of canaries) for (const form of forms(canary)) if (text.includes(form)) hits.push(`${where}: ${canary}${form === canary ? '' : ` (as ${form})`}`);
  return hits;
}

/** Everything the charm emitted in one dispatch, by where it went (inputs such as the remote databags are left out). */
function emitted(outcome: DispatchOutcome): Record<string, string> {
  const s = outcome.state;
  const ours = (r: FakeRelation) => ({ id: r.id, localAppData: r.localAppData, localUnitData: r.localUnitData });
  return {
    'hook-tool arguments': s.calls.map((c) => [c.tool, ...c.args].join(' ')).join('\n'),
    'action results': JSON.stringify(s.actionResults),
    'action-fail': s.actionFailure ?? '',
    'action-log': s.actionLogs.join('\n'),
    'juju-log': s.logs.map((l) => `${l.level} ${l.message}`).join('\n'),
    status: s.statusHistory.map((h) => `${h.status} ${h.message}`).join('\n'),
    'relation-set': JSON.stringify(s.relationSets),
    'relation data': JSON.stringify(s.relations.map(ours)),
    'unit state': JSON.stringify(s.unitState),
    'application version': s.applicationVersion ?? '',
    stdout: outcome.stdout,
    stderr: outcome.stderr,
  };
}

function expectNoCanary(name: string, outcome: DispatchOutcome): void {
  const hits = Object.entries(emitted(outcome)).flatMap(([where, text]) => hitsIn(where, text, Object.values(CANARY)));
  expect(hits, `${name} leaked`).to.deep.equal([]);
}

/** Every file of a directory tree with its bytes, gzip members inflated (tarball, resource list, logs, results). */
function readTree(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      out.push(...readTree(path));
      continue;
    }
    let bytes = readFileSync(path);
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
    out.push({ path, text: bytes.toString('latin1') });
  }
  return out;
}

describe('reliability: secret hygiene of every flow through the real dispatch', function () {
  this.timeout(240_000);
  let charmDir: string;
  let s3dir: string;
  let s3: S3ServerHandle;
  let endpoint: string;
  let a: RunningCluster;
  let b: RunningCluster;
  const outcomes: { name: string; outcome: DispatchOutcome }[] = [];

  before(async () => {
    // The tests' S3 server, which decodes the aws-chunked bodies of restic's uploads as S3 does (the default volume
    // mover is restic) and checks their chunk signatures with the canary secrets.
    const started = startS3Server({
      buckets: [BUCKET],
      keyPairs: ([['track1AccessKey', 'track1SecretKey'], ['track2AccessKey', 'track2SecretKey'], ['rotatedAccessKey', 'rotatedSecretKey']] as const)
        .map(([id, secret]) => ({ accessKeyId: CANARY[id], secretAccessKey: CANARY[secret] })),
    });
    [charmDir, a, b] = await Promise.all([ensureCharmBuilt(), startCluster({ profiles: 2, seed: 31 }), startCluster({ seed: 31 })]);
    s3 = await started;
    s3dir = s3.directory;
    endpoint = s3.endpoint;
    // A user Secret with canary values in a profile namespace of the source cluster.
    const namespace = a.api.list({ group: '', resource: 'namespaces' }, { labelSelector: 'app.kubernetes.io/part-of=kubeflow-profile' })[0]!.metadata.name!;
    a.api.create({ group: '', resource: 'secrets' }, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: USER_SECRET_NAME, namespace },
      type: 'Opaque',
      data: { token: Buffer.from(CANARY.userSecret).toString('base64'), 'config.json': Buffer.from(`{"password":"${CANARY.userSecret}"}`).toString('base64') },
    } as KubeObject);
  });
  after(async () => {
    await Promise.all([s3?.stop(), a?.stop(), b?.stop()]);
  });

  const kfpDb = (): FakeRelation => ({
    id: 'kfp-db:9', endpoint: 'kfp-db', remoteApp: 'kfp-db', remoteUnits: ['kfp-db/0'], localAppData: {}, localUnitData: {},
    remoteAppData: { endpoints: 'kfp-db-primary.kubeflow.svc.cluster.local:3306', database: 'mlpipeline', 'secret-user': DB_SECRET },
    remoteUnitsData: { 'kfp-db/0': {} },
  });
  const track1 = () => s3Relation(track1Data({ endpoint, accessKeyId: CANARY.track1AccessKey, secretAccessKey: CANARY.track1SecretKey }, BUCKET));

  /** The state every flow starts from: track-1 S3, kfp-db, the secrets behind them, encryption on unless told. */
  function state(overrides: Partial<FakeJujuState> = {}, options: { encrypted?: boolean; track2?: boolean } = {}): FakeJujuState {
    const encrypted = options.encrypted ?? true;
    const start = emptyState({
      config: { 'restore-wait-timeout': 30, ...(encrypted ? { 'encryption-key': ENCRYPTION_SECRET } : {}) },
      relations: [track1(), kfpDb()],
      ...overrides,
    });
    start.secrets[ENCRYPTION_SECRET] = { revisions: [{ key: CANARY.encryptionKey }] };
    start.secrets[DB_SECRET] = { revisions: [{ username: 'relation-9', password: CANARY.kfpDbPassword }] };
    if (options.track2) {
      start.secrets[TRACK2_SECRET] = {
        revisions: [{ 'access-key': CANARY.track2AccessKey, 'secret-key': CANARY.track2SecretKey }, { 'access-key': CANARY.rotatedAccessKey, 'secret-key': CANARY.rotatedSecretKey }],
        tracked: 1,
      };
      start.relations[0] = s3Relation(Track2Integrator.databag({ endpoint, accessKey: '', secretKey: '', region: 'us-east-1', path: 'backups', 's3-uri-style': 'path' }, BUCKET).databag);
    }
    return start;
  }

  async function run(name: string, start: FakeJujuState, event: DispatchEvent, kubeconfig = a.kubeconfigPath): Promise<DispatchOutcome> {
    const outcome = await runDispatch(charmDir, start, { ...event, env: { KUBECONFIG: kubeconfig, ...event.env } });
    outcomes.push({ name, outcome });
    expectNoCanary(name, outcome);
    return outcome;
  }
  const action = (name: string, params: Record<string, unknown>, options: { encrypted?: boolean; track2?: boolean } = {}, kubeconfig?: string) =>
    run(`${name} ${JSON.stringify(params)}${options.encrypted === false ? ' (no encryption-key)' : ''}`, state({ actionParams: params }, options), { event: `actions/${name}` }, kubeconfig);
  const succeeded = (outcome: DispatchOutcome) => expect(outcome.exitCode, `${outcome.state.actionFailure ?? outcome.stderr} ${outcome.state.logs.filter((l) => l.level === "DEBUG").map((l) => l.message).join(" ").slice(0, 1500)}`).to.equal(0);

  it('the scanner finds a canary in clear and base64-encoded at any offset inside a longer text', () => {
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const encoded = Buffer.from(`${prefix}{"k":"${CANARY.userSecret}"}`).toString('base64');
      expect(hitsIn('probe', `data: ${encoded}`, [CANARY.userSecret]), prefix).to.have.length.greaterThan(0);
      expect(hitsIn('probe', Buffer.from(`${prefix}${CANARY.kfpDbPassword}`).toString('base64url'), [CANARY.kfpDbPassword])).to.have.length.greaterThan(0);
    }
    expect(hitsIn('probe', Buffer.from('nothing to see').toString('base64'), Object.values(CANARY))).to.deep.equal([]);
  });

  it('hooks: install, s3 relation-joined/changed (both tracks), secret-changed, config-changed, update-status', async () => {
    const changed = { event: 's3-credentials-relation-changed', relation: S3_RELATION_ID };
    const results = await Promise.all([
      run('install', state(), { event: 'install' }),
      run('relation-joined', state({ relations: [s3Relation(), kfpDb()] }), { event: 's3-credentials-relation-joined', relation: S3_RELATION_ID }),
      run('relation-changed track 1', state(), changed),
      run('relation-changed track 2', state({}, { track2: true }), changed),
      run('secret-changed', state({}, { track2: true }), { event: 'secret-changed', secret: { id: TRACK2_SECRET, revision: 2 } }),
      run('config-changed', state(), { event: 'config-changed' }),
      run('kfp-db relation-changed', state(), { event: 'kfp-db-relation-changed', relation: 'kfp-db:9' }),
      run('update-status', state({}, { encrypted: false }), { event: 'update-status' }),
    ]);
    for (const outcome of results) expect(outcome.exitCode, outcome.stderr).to.equal(0);
    // The flows did use the canaries: track 2 read its secret, and the rotated keys were fetched on secret-changed.
    expect(results[3]!.state.calls.some((c) => c.tool === 'secret-get')).to.equal(true);
    expect(results[4]!.state.secrets[TRACK2_SECRET]!.tracked).to.equal(2);
    const lastStatus = results[2]!.state.statusHistory.at(-1);
    expect(lastStatus?.status, lastStatus?.message).to.equal('active');
  });

  // The encrypted full backup the restores use: "latest" would race with the snapshot-profiles and track-2 backups
  // made side by side, and a snapshot holds no Secret.
  let encryptedBackupId = '';

  it('backup-state with and without encryption-key, list-backups, verify-backup, snapshot-profiles', async () => {
    // The control-plane copy runs mysql/rclone Jobs, which the embedded cluster has no kubelet for: kfp-db's password
    // is read by the hooks' status instead (asserted at the end).
    succeeded(await action('backup-state', { 'include-volumes': false, 'include-control-plane': false }, { encrypted: false }));
    const encrypted = await action('backup-state', { 'include-volumes': false, 'include-control-plane': false, description: 'encrypted' });
    succeeded(encrypted);
    expect(encrypted.state.actionResults.secrets).not.to.match(/clear/);
    encryptedBackupId = encrypted.state.actionResults['backup-id']!;
    const [listed, verified, snapshot, track2Backup] = await Promise.all([
      action('list-backups', {}),
      action('verify-backup', { 'backup-id': 'latest' }),
      action('snapshot-profiles', {}),
      action('backup-state', { 'include-volumes': false, 'include-control-plane': false }, { track2: true }),
    ]);
    for (const outcome of [listed, verified, snapshot, track2Backup]) succeeded(outcome);
    expect(verified.state.actionResults.status).to.equal('ok');
  });

  it('a backup that fails on an API fault', async () => {
    // A throttle whose Retry-After is beyond the retry deadline ends the listing of Secrets at once.
    a.faults.retryAfterSeconds = 1000;
    a.faults.only({ method: 'GET', pathIncludes: '/secrets' }).setRate('throttle', 1);
    try {
      const failed = await action('backup-state', { 'include-volumes': false, 'include-control-plane': false });
      expect(failed.exitCode).to.not.equal(0);
      expect(failed.state.actionFailure).to.be.a('string');
    } finally {
      a.faults.clear();
      a.faults.retryAfterSeconds = 1;
    }
  });

  it('restore-state: dry-run and real into a fresh cluster, update dry-run and fail policy over a changed Secret', async () => {
    const dryRun = await action('restore-state', { 'backup-id': encryptedBackupId, 'dry-run': true }, {}, b.kubeconfigPath);
    succeeded(dryRun);
    const real = await action('restore-state', { 'backup-id': encryptedBackupId }, {}, b.kubeconfigPath);
    succeeded(real);
    expect(Number(real.state.actionResults.created)).to.be.greaterThan(0);
    // The restored Secret holds the canary: the value went through and was opened with the key, and was never shown.
    const namespace = a.api.list({ group: '', resource: 'secrets' }).find((s) => s.metadata.name === USER_SECRET_NAME)!.metadata.namespace!;
    const restored = b.api.get({ group: '', resource: 'secrets' }, USER_SECRET_NAME, namespace) as (KubeObject & { data?: Record<string, string> }) | undefined;
    expect(restored, `restored into ${namespace}: ${JSON.stringify(real.state.actionResults).slice(0, 1500)}`).not.to.equal(undefined);
    expect(Buffer.from(restored!.data?.token ?? '', 'base64').toString()).to.equal(CANARY.userSecret);

    // The source's Secret now differs from the backup: plans and conflicts name it without its values.
    a.api.mergePatch({ group: '', resource: 'secrets' }, USER_SECRET_NAME, namespace, { data: { token: Buffer.from(CANARY.userSecretChanged).toString('base64') } });
    const [update, conflict] = await Promise.all([
      action('restore-state', { 'backup-id': encryptedBackupId, 'dry-run': true, 'conflict-policy': 'update' }),
      action('restore-state', { 'backup-id': encryptedBackupId, 'conflict-policy': 'fail', namespaces: namespace }),
    ]);
    succeeded(update);
    expect(Number(update.state.actionResults.updated)).to.be.greaterThan(0);
    expect(conflict.exitCode).to.not.equal(0);
  });

  it('pre-upgrade-check and prune-backups', async () => {
    const [check, prune] = await Promise.all([action('pre-upgrade-check', {}), action('prune-backups', { 'dry-run': true })]);
    expect(check.state.actionResults.verdict).to.match(/^(go|no-go)$/);
    succeeded(prune);
    // with the key, the backup made without it is not authenticated: retention leaves it unless told to delete it
    const kept = await run('prune-backups (retention 1)', state({ actionParams: {}, config: { 'encryption-key': ENCRYPTION_SECRET, 'backup-retention': 1 } }), { event: 'actions/prune-backups' });
    succeeded(kept);
    expect(kept.state.actionResults.untrusted).to.not.equal('none');
    const pruned = await run('prune-backups (retention 1, delete-unauthenticated)', state({ actionParams: { 'delete-unauthenticated': true }, config: { 'encryption-key': ENCRYPTION_SECRET, 'backup-retention': 1 } }), { event: 'actions/prune-backups' });
    succeeded(pruned);
  });

  it('backup-state and restore-state with volume data: mover Jobs, Pods, Events and logs hold no canary; no mover Secret is left', async () => {
    const MOVERS = 'app.kubernetes.io/managed-by=kubeflow-upgrader,app.kubernetes.io/component=volume-mover';
    const c = await startCluster({ seed: 31 });
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'hygiene-kubelet-')));
    const kubelets = dirs.map((dataDir) => simulatedKubelet({ dataDir, configRetryMs: 3000 }));
    const stops = [kubelets[0]!.start(a.api), kubelets[1]!.start(c.api)];
    // Every version of every Job, Pod and Event either cluster stored while the movers ran, deleted ones included.
    const written: { cluster: number; object: KubeObject }[] = [];
    const moverSecrets: KubeObject[] = [];
    const unsubscribe = [a, c].map((cluster, i) => cluster.api.subscribe((e) => {
      if (['jobs', 'pods', 'events'].includes(e.ref.resource)) written.push({ cluster: i, object: e.object });
      if (e.ref.resource === 'secrets' && e.object.metadata.labels?.['app.kubernetes.io/component'] === 'volume-mover') moverSecrets.push(e.object);
    }));
    try {
      const backup = await action('backup-state', { 'include-control-plane': false });
      succeeded(backup);
      expect(Number(backup.state.actionResults.volumes)).to.be.greaterThan(0);
      const restore = await action('restore-state', { 'backup-id': backup.state.actionResults['backup-id'] }, {}, c.kubeconfigPath);
      succeeded(restore);
      expect(restore.state.actionResults.volumes).to.equal(`${backup.state.actionResults.volumes} PVC(s) filled`);

      const movers = written.filter(({ object }) => JSON.stringify(object.metadata).includes('kubeflow-upgrader') || object.metadata.labels?.['job-name']?.startsWith('kfu-'));
      expect(movers.length).to.be.greaterThan(0);
      const hits = written.flatMap(({ object }) => hitsIn(`${object.kind} ${object.metadata.namespace}/${object.metadata.name}`, JSON.stringify(object), Object.values(CANARY)));
      const pods = new Set(written.filter(({ object }) => object.kind === 'Pod' && object.metadata.labels?.['job-name']?.startsWith('kfu-')).map(({ cluster, object }) => `${cluster} ${object.metadata.namespace} ${object.metadata.name}`));
      expect(pods.size).to.be.greaterThan(0);
      for (const pod of pods) {
        const [cluster, namespace, name] = pod.split(' ') as [string, string, string];
        hits.push(...hitsIn(`log of Pod ${namespace}/${name}`, kubelets[Number(cluster)]!.logs(namespace, name) ?? '', Object.values(CANARY)));
      }
      expect(hits).to.deep.equal([]);
      // The credentials Secrets held the keys only while their movers ran; each run deleted its own.
      expect(moverSecrets.length).to.be.greaterThan(0);
      expect([...a.api.list({ group: '', resource: 'secrets' }, { labelSelector: MOVERS }), ...c.api.list({ group: '', resource: 'secrets' }, { labelSelector: MOVERS })]).to.deep.equal([]);
    } finally {
      for (const u of unsubscribe) u();
      for (const stop of stops) stop();
      await Promise.all(kubelets.map((k) => k.idle()));
      await c.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the bucket holds no credential, passphrase or password, and with encryption on no user Secret value', () => {
    const files = readTree(join(s3dir, BUCKET));
    expect(files.length).to.be.greaterThan(0);
    const hits = files.flatMap((file) => hitsIn(file.path, file.text, NEVER_IN_ANY_BUCKET));
    expect(hits).to.deep.equal([]);
    // The unencrypted backup was pruned (delete-unauthenticated; retention 1 keeps the newest); what is left was written with the key.
    expect(files.flatMap((file) => hitsIn(file.path, file.text, [CANARY.userSecret, CANARY.userSecretChanged]))).to.deep.equal([]);
    expect(outcomes.length).to.be.greaterThan(15);
    // Every canary was in the hands of the charm somewhere: the kfp-db password was fetched, not merely present.
    const fetched = outcomes.flatMap(({ outcome }) => outcome.state.calls.filter((c) => c.tool === 'secret-get').map((c) => c.args.at(-1)));
    expect(fetched).to.include.members([DB_SECRET, ENCRYPTION_SECRET, TRACK2_SECRET]);
  });
});
