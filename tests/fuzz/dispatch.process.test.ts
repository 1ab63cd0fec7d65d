// Malformed input through the real ./dispatch: bad action params of each type, garbage config, garbage relation
// data, corrupted archives given to verify-backup and restore-state. Every case ends the way Juju expects — an action
// fails in one sentence with a non-zero exit; a hook exits 0 with a blocked (or otherwise named) status — and no stack
// trace reaches stdout, stderr, the status or the action's failure and results.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, unitStatus, type DispatchEvent, type DispatchOutcome } from '../support/juju/harness.ts';
import { S3_RELATION_ID, TRACK2_SECRET, s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { backupStore } from '../support/backup-store.ts';

const BUCKET = 'fuzz-dispatch';
const STACK = /\n\s+at |\bat .*\.(m?js|ts|cjs):\d+|node:internal|^\s*at /m;

interface Case {
  name: string;
  state: () => FakeJujuState;
  event: DispatchEvent;
  /** what the outcome must say: the action's failure, or the hook's final unit status */
  expect: { fails: RegExp } | { status: 'blocked' | 'waiting' | 'active'; message: RegExp };
}

function expectClean(outcome: DispatchOutcome): void {
  const s = outcome.state;
  for (const [where, text] of Object.entries({
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    status: s.statusHistory.map((h) => h.message).join('\n'),
    'action-fail': s.actionFailure ?? '',
    'action results': Object.values(s.actionResults).join('\n'),
    'action-log': s.actionLogs.join('\n'),
  })) {
    expect(text, `${where} shows a stack trace`).not.to.match(STACK);
  }
  for (const h of s.statusHistory) expect(h.message, 'a status is one line').not.to.include('\n');
}

async function inBatches<T>(jobs: (() => Promise<T>)[], size = 4): Promise<void> {
  for (let i = 0; i < jobs.length; i += size) await Promise.allSettled(jobs.slice(i, i + size).map((job) => job()));
}

describe('fuzz: malformed input through the real dispatch', function () {
  this.timeout(180_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let cluster: RunningCluster;
  /** an empty cluster that restores of corrupted archives aim at: it must stay empty */
  let fresh: RunningCluster;
  const good = { tarball: '', manifest: '', id: '' };

  before(async () => {
    [charmDir, s3, cluster, fresh] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 2, seed: 17 }), startCluster({ seed: 17 })]);
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const kube = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
    try {
      // One good backup per corruption, each under its own path prefix, so the cases run side by side.
      for (const prefix of ['flip', 'truncate', 'manifest-garbage', 'marker-garbage']) {
        const at = new ObjectStore({ client, bucket: BUCKET, prefix });
        const { backupId } = await runBackup(kube, backupStore(at), {
          kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
          profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
        });
        good.id = backupId;
        const keys = backupKeys(backupId);
        if (prefix === 'flip') {
          const bytes = await at.getBytes(keys.tarball);
          bytes[Math.floor(bytes.length / 2)]! ^= 0x10;
          await at.put(keys.tarball, bytes);
        } else if (prefix === 'truncate') {
          const bytes = await at.getBytes(keys.tarball);
          await at.put(keys.tarball, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
        } else if (prefix === 'manifest-garbage') {
          await at.put(keys.manifest, Buffer.from('{"format": 1, "checksums": [oops'));
        } else {
          await at.put(keys.marker, Buffer.from('\u0000\u0001not json'));
        }
      }
    } finally {
      kube.close();
    }
  });
  after(async () => Promise.all([s3?.stop(), cluster?.stop(), fresh?.stop()]));

  // `malformed`: fields laid over track 1's answer as no provider writes them, for the databag cases.
  const s3At = (prefix = 'good', malformed: Record<string, string> = {}) => s3Relation(track1Data(s3, BUCKET, { path: prefix }, malformed));
  /** The state is made when the case runs: the S3 server's address is known only then. */
  const actionState = (params: Record<string, unknown>, config: Record<string, unknown> = {}, prefix = 'good') =>
    () => emptyState({ relations: [s3At(prefix)], actionParams: params, config });
  const action = (name: string): DispatchEvent => ({ event: `actions/${name}` });
  const changed: DispatchEvent = { event: 's3-credentials-relation-changed', relation: S3_RELATION_ID };
  const fails = (pattern: RegExp) => ({ fails: pattern });
  const blocked = (message: RegExp) => ({ status: 'blocked' as const, message });

  const cases: Case[] = [
    // Action params, one bad value of each type.
    { name: 'string list: not Kubernetes names', state: actionState({ namespaces: 'Team A,../etc' }), event: action('backup-state'), expect: fails(/^Parameter "namespaces" of backup-state must be a comma-separated list of Kubernetes names\.$/) },
    { name: 'boolean given as a string', state: actionState({ 'include-volumes': 'yes' }), event: action('backup-state'), expect: fails(/^Parameter "include-volumes" of backup-state .+\.$/) },
    { name: 'string too long', state: actionState({ description: 'x'.repeat(5000) }), event: action('backup-state'), expect: fails(/^Parameter "description" of backup-state .+\.$/) },
    { name: 'integer given as a fraction', state: actionState({ limit: 2.5 }), event: action('list-backups'), expect: fails(/^Parameter "limit" of list-backups .+\.$/) },
    { name: 'integer below its minimum', state: actionState({ limit: -3 }), event: action('list-backups'), expect: fails(/^Parameter "limit" of list-backups .+\.$/) },
    { name: 'integer given as an object', state: actionState({ limit: { n: 1 } }), event: action('list-backups'), expect: fails(/^Parameter "limit" of list-backups .+\.$/) },
    { name: 'enum value outside the list', state: actionState({ 'backup-id': 'latest', 'conflict-policy': 'explode' }), event: action('restore-state'), expect: fails(/^Parameter "conflict-policy" of restore-state .+\.$/) },
    { name: 'required param missing', state: actionState({}), event: action('restore-state'), expect: fails(/^Parameter "backup-id" of restore-state .+\.$/) },
    { name: 'backup id with a path in it', state: actionState({ 'backup-id': '../../etc/passwd' }), event: action('verify-backup'), expect: fails(/^Parameter "backup-id" of verify-backup must be a backup id from list-backups, or "latest"\.$/) },
    { name: 'CRD name that is no name', state: actionState({ crd: 'NOT A CRD; rm -rf /' }), event: action('migrate-stored-versions'), expect: fails(/^Parameter "crd" of migrate-stored-versions .+\.$/) },
    { name: 'null for a boolean', state: actionState({ 'dry-run': null }), event: action('prune-backups'), expect: fails(/^Parameter "dry-run" of prune-backups .+\.$/) },
    { name: 'unknown parameter', state: actionState({ force: true }), event: action('pre-upgrade-check'), expect: fails(/^pre-upgrade-check has no parameter "force"\.$/) },
    { name: 'unknown action', state: actionState({}), event: action('drop-everything'), expect: fails(/^This charm has no action "drop-everything"\.$/) },
    // Garbage config: actions refuse before doing anything, hooks block naming the option.
    { name: 'config: negative retention, on an action', state: actionState({ 'dry-run': true }, { 'backup-retention': -1 }), event: action('prune-backups'), expect: fails(/^The charm's .*backup-retention.*; fix it with juju config and retry\.$/) },
    { name: 'config: duration that is no duration', state: () => emptyState({ relations: [s3At()], config: { 'max-backup-age': 'forever' } }), event: { event: 'config-changed' }, expect: blocked(/max-backup-age/) },
    { name: 'config: zero concurrency', state: () => emptyState({ relations: [s3At()], config: { 'api-concurrency': 0 } }), event: { event: 'config-changed' }, expect: blocked(/api-concurrency/) },
    { name: 'config: boolean given as a string', state: () => emptyState({ relations: [s3At()], config: { 'protect-crds': 'maybe' } }), event: { event: 'update-status' }, expect: blocked(/protect-crds/) },
    { name: 'config: encryption-key not a secret URI', state: () => emptyState({ relations: [s3At()], config: { 'encryption-key': 'hunter2' } }), event: { event: 'config-changed' }, expect: blocked(/encryption-key/) },
    { name: 'config: encryption-key secret that does not exist, on backup-state', state: actionState({ 'include-volumes': false }, { 'encryption-key': 'secret:cta0doesnotexist0000001' }), event: action('backup-state'), expect: fails(/^The encryption-key cannot be read: .+\.$/) },
    // Garbage relation data.
    { name: 'databag: control characters in the endpoint', state: () => emptyState({ relations: [s3At('good', { endpoint: 'http://\u0000\u001b[31m/' })] }), event: changed, expect: blocked(/^the S3 endpoint "http:\/\/\\x00\\x1b\[31m\/" is not an http\(s\) URL/) },
    { name: 'databag: s3-uri-style sideways', state: () => emptyState({ relations: [s3At('good', { 's3-uri-style': 'sideways' })] }), event: changed, expect: blocked(/s3-uri-style|sideways/) },
    { name: 'databag: tls-ca-chain a JSON number', state: () => emptyState({ relations: [s3At('good', { 'tls-ca-chain': '42' })] }), event: changed, expect: blocked(/tls-ca-chain/) },
    { name: 'databag: secret-extra names no secret', state: () => emptyState({ relations: [s3Relation({ 'lib-version': '1.0', bucket: BUCKET, endpoint: s3.endpoint, 'secret-extra': 'secret:cta0nosuchsecret00000001' })] }), event: changed, expect: blocked(/credentials secret/) },
    {
      name: 'databag: secret-extra content without keys',
      state: () => {
        const start = emptyState({ relations: [s3Relation({ 'lib-version': '1.0', bucket: BUCKET, endpoint: s3.endpoint, 'secret-extra': TRACK2_SECRET })] });
        start.secrets[TRACK2_SECRET] = { revisions: [{ 'access-key': '', garbage: '\u0000' }] };
        return start;
      },
      event: changed,
      expect: { status: 'blocked', message: /access-key|secret-key/ },
    },
    // Corrupted archives.
    { name: 'verify-backup: a bit flip in the tarball', state: actionState({ 'backup-id': 'latest' }, {}, 'flip'), event: action('verify-backup'), expect: fails(/^Backup kf-[-0-9a-f]+ is corrupt \(\d+ problem\(s\), listed in the results\); do not restore from it\.$/) },
    { name: 'verify-backup: a truncated tarball', state: actionState({ 'backup-id': 'latest' }, {}, 'truncate'), event: action('verify-backup'), expect: fails(/is corrupt/) },
    { name: 'verify-backup: a manifest that is not JSON', state: actionState({ 'backup-id': 'latest' }, {}, 'manifest-garbage'), event: action('verify-backup'), expect: fails(/corrupt|manifest/) },
    { name: 'restore-state: a bit flip in the tarball', state: actionState({ 'backup-id': 'latest' }, {}, 'flip'), event: action('restore-state'), expect: fails(/\.$/) },
    { name: 'restore-state: a truncated tarball, dry-run', state: actionState({ 'backup-id': 'latest', 'dry-run': true }, {}, 'truncate'), event: action('restore-state'), expect: fails(/\.$/) },
    { name: 'restore-state: a manifest that is not JSON', state: actionState({ 'backup-id': 'latest' }, {}, 'manifest-garbage'), event: action('restore-state'), expect: fails(/\.$/) },
    { name: 'restore-state: a marker that is not JSON', state: () => emptyState({ relations: [s3At('marker-garbage')], actionParams: { 'backup-id': good.id } }), event: action('restore-state'), expect: fails(/\.$/) },
  ];

  const outcomes = new Map<string, Promise<DispatchOutcome>>();
  const profiles = { group: 'kubeflow.org', resource: 'profiles' };
  before(async () => {
    expect(fresh.api.list(profiles)).to.deep.equal([]);
    await inBatches(cases.map((c) => () => {
      const target = c.event.event === 'actions/restore-state' ? fresh : cluster;
      const outcome = runDispatch(charmDir, c.state(), { ...c.event, env: { KUBECONFIG: target.kubeconfigPath } });
      outcomes.set(c.name, outcome);
      return outcome;
    }));
  });

  for (const c of cases) {
    it(c.name, async () => {
      const outcome = await outcomes.get(c.name)!;
      expectClean(outcome);
      if ('fails' in c.expect) {
        expect(outcome.exitCode, 'a failed action exits non-zero').to.not.equal(0);
        expect(outcome.state.actionFailure, outcome.stderr).to.match(c.expect.fails);
        expect(outcome.state.actionFailure).not.to.include('\n');
      } else {
        expect(outcome.exitCode, `a hook exits 0 (stderr: ${outcome.stderr})`).to.equal(0);
        const status = unitStatus(outcome.state);
        expect(status?.status, status?.message).to.equal(c.expect.status);
        expect(status?.message).to.match(c.expect.message);
      }
    });
  }

  it('the corrupted archives were refused before any write: the fresh cluster they aimed at has no Profile', async () => {
    await Promise.all(outcomes.values());
    expect(fresh.api.list(profiles).map((p) => p.metadata.name)).to.deep.equal([]);
  });
});
