// A changed encryption-key with volume data in restic repositories (src/charm/restic-key.ts), through the charm's
// runEvent with the fake hook tools (a unit tracking one revision of each secret, as Juju's secrets manager does), the
// simulated kubelet running Debian's restic, and s3rver. The key is rotated (a new revision; another secret; a key set
// where there was none), then backed up again: the same repository, and the older snapshot still restores. When the
// previous secret can no longer be read, the status and the backup say so in one sentence. No key and no repository
// password ever reaches a hook tool, the unit's state, the output, or the bucket.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { execa } from 'execa';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import type { DispatchEvent } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { hashTree, startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { legacyPassword, namespacePassword } from '../volumes/restic-passwords.ts';
import type { VolumeEntry } from '../../src/archive/manifest.ts';

const PVCS = { group: '', resource: 'persistentvolumeclaims' };
/** A secret URI of Juju's form (`secret:` and a 20-character id). */
const uri = (name: string) => `secret:${name.padEnd(20, '0')}`;
const FIRST = uri('rekeyfirst');
const THIRD = uri('rekeythird');
const KEYS = ['first passphrase of the operator', 'rotated passphrase after a leak', 'the third passphrase, another secret'];

describe('charm: a changed encryption-key keeps the restic repositories open (runEvent, restic, s3rver)', function () {
  this.timeout(600_000);
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let client: S3Client;
  let namespace: string;
  let pvc: string;
  let volume: string;
  const emitted: EventOutcome[] = [];
  let lastBackupId: string | undefined;

  before(async () => {
    [s3, source] = await Promise.all([startS3Server({ buckets: ['rekey-a', 'rekey-b'] }), startKubeletCluster({ profiles: 1, seed: 41 })]);
    const claim = source.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!;
    namespace = claim.metadata.namespace!;
    pvc = claim.metadata.name!;
    volume = source.kubelet.volumePath(namespace, pvc);
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  });
  after(async () => {
    client?.destroy();
    await Promise.all([s3?.stop(), source?.stop()]);
  });

  function startState(bucket: string, key: string | undefined): FakeJujuState {
    const state = emptyState({
      relations: [s3Relation(track1Data(s3, bucket))],
      config: { 'restore-wait-timeout': 60, 'volume-mover-engine': 'restic', 'volume-mover-start-timeout': 120, ...(key ? { 'encryption-key': key } : {}) },
    });
    state.secrets[FIRST] = { revisions: [{ key: KEYS[0]! }] };
    state.secrets[THIRD] = { revisions: [{ key: KEYS[2]! }] };
    return state;
  }

  /** One event on `state` (what the charm did is kept for the hygiene scan); the next event starts from its result. */
  async function run(state: FakeJujuState, event: DispatchEvent, cluster: KubeletCluster = source, params?: Record<string, unknown>): Promise<EventOutcome> {
    const start: FakeJujuState = { ...state, actionResults: {}, actionLogs: [], statusHistory: [], logs: [], calls: [], relationSets: [] };
    delete start.actionFailure;
    if (params) start.actionParams = params;
    else delete start.actionParams;
    const outcome = await runEvent(start, { ...event, env: { KUBECONFIG: cluster.cluster.kubeconfigPath } });
    emitted.push(outcome);
    return outcome;
  }

  async function backup(state: FakeJujuState): Promise<EventOutcome> {
    await clockPastSecondOf(lastBackupId);
    const done = await run(state, { event: 'actions/backup-state' }, source, { 'include-control-plane': false });
    if (done.state.actionResults['backup-id']) lastBackupId = done.state.actionResults['backup-id'];
    return done;
  }
  const succeeded = (outcome: EventOutcome) => expect(outcome.state.actionFailure, `${outcome.state.actionFailure} ${outcome.stderr.slice(-1500)} ${outcome.state.logs.map((l) => l.message).join(' | ').slice(-1500)}`).to.equal(undefined);

  async function entry(bucket: string, id: string): Promise<VolumeEntry> {
    const body = await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: `backups/backups/${id}/kubeflow-upgrader.json` }))).Body!.transformToString();
    return (JSON.parse(body) as { volumes: VolumeEntry[] }).volumes.find((v) => v.namespace === namespace && v.pvc === pvc)!;
  }

  /** restic itself, run directly: does this key's password of the namespace (derived in the test) open its repository? */
  async function opens(bucket: string, key: string | undefined): Promise<boolean> {
    const result = await execa('restic', ['-o', 's3.bucket-lookup=path', '--no-cache', 'cat', 'config'], {
      env: {
        PATH: process.env.PATH, HOME: '/tmp', AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        RESTIC_PASSWORD: namespacePassword(key, namespace), RESTIC_REPOSITORY: `s3:${s3.endpoint}/${bucket}/backups/restic/${namespace}`,
      },
      extendEnv: false, reject: false,
    });
    return result.exitCode === 0;
  }

  async function restoreInto(state: FakeJujuState, id: string): Promise<Map<string, string>> {
    const target = await startKubeletCluster({ profiles: 0, seed: 41 });
    try {
      const restored = await run(state, { event: 'actions/restore-state' }, target, { 'backup-id': id });
      succeeded(restored);
      return hashTree(target.kubelet.volumePath(namespace, pvc));
    } finally {
      await target.stop();
    }
  }

  const lastStatus = (outcome: EventOutcome) => outcome.state.statusHistory.at(-1)!;

  describe('a new revision of the secret, then another secret', () => {
    let state: FakeJujuState;
    let firstId: string;
    let firstFiles: Map<string, string>;

    it('rotates the key by a new revision: secret-changed adds it to the repository before the unit tracks it, and the next backup uses the same repository', async () => {
      writeFileSync(join(volume, 'weights.bin'), randomBytes(100_000));
      state = startState('rekey-a', FIRST);
      const first = await backup(state);
      succeeded(first);
      firstId = first.state.actionResults['backup-id']!;
      firstFiles = hashTree(volume);
      state = first.state;
      expect(state.secrets[FIRST]!.tracked).to.equal(1);

      // The operator rotates: juju update-secret adds revision 2, and Juju runs secret-changed.
      state.secrets[FIRST]!.revisions.push({ key: KEYS[1]! });
      const changed = await run(state, { event: 'secret-changed', secret: { id: FIRST } });
      expect(changed.exitCode).to.equal(0);
      state = changed.state;
      expect(state.secrets[FIRST]!.tracked, 'tracked only once the repositories open with it').to.equal(2);
      expect(lastStatus(changed).status, lastStatus(changed).message).to.equal('active');
      expect(await opens('rekey-a', KEYS[1]), 'the new key opens the repository').to.equal(true);
      expect(await opens('rekey-a', KEYS[0]), 'the old key no longer opens it (its key file is removed)').to.equal(false);

      writeFileSync(join(volume, 'after-rotation.txt'), 'written after the rotation');
      const second = await backup(state);
      succeeded(second);
      state = second.state;
      const [a, b] = [await entry('rekey-a', firstId), await entry('rekey-a', second.state.actionResults['backup-id']!)];
      expect(b.restic!.repository).to.equal(a.restic!.repository);
      expect(b.restic!.snapshot).to.not.equal(a.restic!.snapshot);
    });

    it('restores the older backup with the older key set again (another secret holding it), and the newer backup with the newer key', async () => {
      const newerFiles = hashTree(volume);
      const newerId = lastBackupId!;
      // An operator who keeps the old passphrase in another secret sets it: the charm adds it again (from the key in use)
      // and removes the newer one.
      const old = uri('rekeyold');
      const withOld: FakeJujuState = { ...state, config: { ...state.config, 'encryption-key': old }, secrets: { ...state.secrets, [old]: { revisions: [{ key: KEYS[0]! }] } } };
      const changed = await run(withOld, { event: 'config-changed' });
      expect(lastStatus(changed).status, lastStatus(changed).message).to.equal('active');
      expect([await opens('rekey-a', KEYS[0]), await opens('rekey-a', KEYS[1])]).to.deep.equal([true, false]);
      expect(await restoreInto(changed.state, firstId)).to.deep.equal(firstFiles);
      // and back to the rotated key for the newer backup
      const back = await run({ ...changed.state, config: { ...changed.state.config, 'encryption-key': FIRST } }, { event: 'config-changed' });
      expect(lastStatus(back).status, lastStatus(back).message).to.equal('active');
      state = back.state;
      expect(await restoreInto(state, newerId)).to.deep.equal(newerFiles);
    });

    it('says in one sentence, in the status and the backup, which repositories the previous secret cannot open any more, and recovers once it is granted again', async () => {
      // Another secret is set while the one the repositories open with is no longer granted to the application.
      const revoked: FakeJujuState = { ...state, config: { ...state.config, 'encryption-key': THIRD } };
      revoked.secrets = { ...revoked.secrets, [FIRST]: { ...revoked.secrets[FIRST]!, denied: true } };
      const changed = await run(revoked, { event: 'config-changed' });
      expect(changed.exitCode).to.equal(0);
      const status = lastStatus(changed);
      expect(status.status).to.equal('blocked');
      expect(status.message).to.equal(`restic repositories of namespace ${namespace} do not open with the new encryption-key and the previous secret ${FIRST.slice(7)} cannot be read: grant it again or set encryption-key back to it`);

      const refused = await backup(changed.state);
      const failure = refused.state.actionFailure!;
      expect(failure).to.include(`The restic repositories of namespace ${namespace} were written under the previous encryption-key (secret ${FIRST.slice(7)}), which this unit can no longer read`);
      expect(failure).to.include('grant that secret to this application again').and.include('s3://rekey-a/backups/restic/<namespace>');
      expect(failure.split(/[.!?] /).length, 'one sentence').to.equal(1);
      expect(await opens('rekey-a', KEYS[2])).to.equal(false);

      // granted again: update-status finishes the change, and the backup goes through with the third key
      const granted: FakeJujuState = { ...refused.state, secrets: { ...refused.state.secrets, [FIRST]: { ...refused.state.secrets[FIRST]!, denied: false } } };
      const retried = await run(granted, { event: 'update-status' });
      expect(lastStatus(retried).status, lastStatus(retried).message).to.equal('active');
      expect(await opens('rekey-a', KEYS[2])).to.equal(true);
      const third = await backup(retried.state);
      succeeded(third);
    });
  });

  describe('a key set where there was none', () => it('sets a key where there was none: the fixed unkeyed password opens the repositories until the key is added, then the next backup uses the key', async () => {
    writeFileSync(join(volume, 'unkeyed.txt'), 'written before any key was set');
    let state = startState('rekey-b', undefined);
    const first = await backup(state);
    succeeded(first);
    const firstId = first.state.actionResults['backup-id']!;
    expect(await opens('rekey-b', undefined)).to.equal(true);
    state = { ...first.state, config: { ...first.state.config, 'encryption-key': THIRD } };
    const changed = await run(state, { event: 'config-changed' });
    expect(lastStatus(changed).status, lastStatus(changed).message).to.equal('active');
    expect(await opens('rekey-b', KEYS[2])).to.equal(true);
    expect(await opens('rekey-b', undefined), 'the published unkeyed password no longer opens it').to.equal(false);
    const second = await backup(changed.state);
    succeeded(second);
    expect((await entry('rekey-b', second.state.actionResults['backup-id']!)).restic!.repository).to.equal((await entry('rekey-b', firstId)).restic!.repository);
  }));

  describe('secret hygiene of all the above', () => it('never lets a key or a repository password reach a hook tool, the unit state, the output, the cluster or the bucket', async () => {
    const canaries = [...KEYS, ...KEYS.flatMap((k) => [namespacePassword(k, namespace), legacyPassword(k)])];
    const forms = (value: string) => [value, Buffer.from(value).toString('base64')];
    const hits: string[] = [];
    const scan = (where: string, text: string) => {
      for (const canary of canaries) for (const form of forms(canary)) if (text.includes(form)) hits.push(`${where}: ${canary.slice(0, 6)}…`);
    };
    expect(emitted.length).to.be.greaterThan(8);
    // the scan finds what it looks for: the fake's own record of the secrets' content holds every key
    scan('self-check', JSON.stringify(emitted.map((outcome) => outcome.state.secrets)));
    expect(hits.splice(0).length, 'the scan sees the keys where they legitimately are').to.be.at.least(KEYS.length);
    for (const [i, outcome] of emitted.entries()) {
      const s = outcome.state;
      scan(`event ${i} calls`, JSON.stringify(s.calls));
      scan(`event ${i} results`, JSON.stringify([s.actionResults, s.actionFailure, s.actionLogs]));
      scan(`event ${i} logs`, JSON.stringify(s.logs));
      scan(`event ${i} status`, JSON.stringify(s.statusHistory));
      scan(`event ${i} unit state`, JSON.stringify(s.unitState));
      scan(`event ${i} output`, outcome.stdout + outcome.stderr);
    }
    // the unit's state names the secret the repositories open with, nothing of its content
    expect(Object.keys(emitted.at(-1)!.state.unitState)).to.include('restic-key-identity');
    for (const bucket of ['rekey-a', 'rekey-b']) {
      const listed = await client.send(new ListObjectsCommand({ Bucket: bucket }));
      for (const object of listed.Contents ?? []) {
        const body = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key! }))).Body!.transformToByteArray());
        scan(`s3://${bucket}/${object.Key}`, body.toString('latin1'));
      }
    }
    // no restic key Job's credentials Secret is left in the cluster
    const left = source.cluster.api.list({ group: '', resource: 'secrets' }).filter((o) => o.metadata.name?.startsWith('kfu-rekey-'));
    expect(left.map((o) => o.metadata.name)).to.deep.equal([]);
    expect(hits).to.deep.equal([]);
  }));
});
