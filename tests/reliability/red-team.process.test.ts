// The red team (issue 29): someone who can write the backup bucket but does not hold the encryption key attacks the
// authenticated backups the way such a writer would, with plain S3 PUTs on the s3rver, and the charm (its real action
// code through runEvent) and the real CLI process answer. Every attack must be refused before a write, in one sentence
// that names the case and never shows the key, or must end with the genuine newest backup restored: each test then
// checks that the target cluster holds nothing the attacker chose.
//
// The operator's story: backup OLD holds a contributor (eve) and a token that were later removed and rotated; backup
// NEW is made after that. The attacker wants OLD's state (or their own) back in the cluster.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CopyObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { s3ClientFor } from '../archive/fixtures.ts';
import { forgeBackup, tarEntries } from '../archive/forge.ts';
import { runCli, type CliRun } from '../cli/run-cli.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { backupStore } from '../support/backup-store.ts';

const BUCKET = 'red-team';
const PREFIX = 'backups';
const KEY = 'the operator passphrase nobody else holds';
const KEY_SECRET = 'secret:cta0redteamkey000001';
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };
const SECRETS = { group: '', resource: 'secrets' };
const ROLEBINDINGS = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
// KFAM's binding names, spelled out here (kubeflow/kubeflow components/access-management/kfam/bindings.go)
const EVE_BINDING = 'user-eve-example-com-clusterrole-edit';
const MALLORY_BINDING = 'user-mallory-example-com-clusterrole-edit';
const MARKER = 'velero-backup.json';
const MANIFEST = 'kubeflow-upgrader.json';
const HMAC = 'kubeflow-upgrader.io/manifest-hmac';

function contributor(namespace: string, email: string, name: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding',
    metadata: { name, namespace, annotations: { user: email, role: 'edit' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeflow-edit' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: email }],
  };
}

function tokenSecret(namespace: string, token: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api-token', namespace }, type: 'Opaque', data: { token: Buffer.from(token).toString('base64') } };
}

describe('red team: a bucket writer without the key against authenticated backups', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let a: RunningCluster;
  let b: RunningCluster;
  let client: S3Client;
  let store: ObjectStore;
  let kubeA: KubeClient;
  let namespace: string;
  let keyDir: string;
  let keyFile: string;
  let env: Record<string, string>;
  /** eve a contributor, token-v1 */
  let OLD: string;
  /** eve removed, token rotated to token-v2 */
  let NEW: string;

  before(async () => {
    [s3, a, b] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 1, seed: 29 }), startCluster({ seed: 29 })]);
    namespace = a.api.list(PROFILES)[0]!.metadata.name!;
    client = s3ClientFor(s3);
    store = new ObjectStore({ client, bucket: BUCKET, prefix: PREFIX });
    kubeA = await KubeClient.load({ kubeconfig: a.kubeconfigPath });
    keyDir = mkdtempSync(join(tmpdir(), 'red-team-key-'));
    keyFile = join(keyDir, 'key');
    writeFileSync(keyFile, `${KEY}\n`);
    env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_ENDPOINT_URL: s3.endpoint };

    a.api.create(ROLEBINDINGS, contributor(namespace, 'eve@example.com', EVE_BINDING));
    a.api.create(SECRETS, tokenSecret(namespace, 'token-v1'));
    OLD = await backup();
    a.api.delete(ROLEBINDINGS, EVE_BINDING, namespace);
    a.api.delete(SECRETS, 'api-token', namespace);
    a.api.create(SECRETS, tokenSecret(namespace, 'token-v2'));
    NEW = await backup();
  });
  // each attack works on copies or backups of its own: only OLD and NEW outlive it
  afterEach(async () => {
    for (const id of await backupStore(store).listBackupIds()) if (id !== OLD && id !== NEW) await deleteBackup(id);
  });
  after(async () => {
    kubeA?.close();
    rmSync(keyDir, { recursive: true, force: true });
    await Promise.all([s3?.stop(), a?.stop(), b?.stop()]);
  });

  // The operator's side: backups made with the key, as backup-state's engine makes them.
  async function backup(): Promise<string> {
    const made = await runBackup(kubeA, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', encryptionKey: KEY,
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    return made.backupId;
  }

  // --- what the attacker does: plain S3 requests on the bucket -------------------------------------------------------

  const objectKey = (id: string, name: string) => `${PREFIX}/backups/${id}/${name}`;

  async function getJson(id: string, name: string): Promise<Record<string, any>> {
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: objectKey(id, name) }));
    return JSON.parse(await got.Body!.transformToString()) as Record<string, any>;
  }

  async function putJson(id: string, name: string, value: unknown): Promise<void> {
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: objectKey(id, name), Body: JSON.stringify(value), ContentType: 'application/json' }));
  }

  /** Copies every object of backup `from` under the id `to`, renaming the files that carry the id. */
  async function copyBackup(from: string, to: string): Promise<void> {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}/backups/${from}/` }));
    for (const object of listed.Contents ?? []) {
      const target = object.Key!.replace(`/backups/${from}/`, `/backups/${to}/`).replace(new RegExp(`/${from}([-.])`), `/${to}$1`);
      await client.send(new CopyObjectCommand({ Bucket: BUCKET, Key: target, CopySource: `${BUCKET}/${object.Key!}` }));
    }
  }

  /** A marker whose times say it started `minutes` after NEW's. */
  async function markerTimesAfterNew(id: string, minutes: number): Promise<void> {
    const newer = await getJson(NEW, MARKER);
    const at = (text: string) => new Date(new Date(text).getTime() + minutes * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const marker = await getJson(id, MARKER);
    marker.metadata.creationTimestamp = at(newer.status.startTimestamp);
    marker.status.startTimestamp = at(newer.status.startTimestamp);
    marker.status.completionTimestamp = at(newer.status.completionTimestamp);
    await putJson(id, MARKER, marker);
  }

  /** A new id later than NEW's, as our ids are made (kf-YYYYMMDD-HHMMSS-xxxxxx). */
  function laterId(suffix: string): string {
    const t = new Date(Date.now() + 3_600_000).toISOString();
    return `kf-${t.slice(0, 10).replaceAll('-', '')}-${t.slice(11, 19).replaceAll(':', '')}-${suffix}`;
  }

  /** The attacker's own content in a copy of NEW: mallory a contributor, their own token value. */
  function plantAttackerState(entries: Map<string, Buffer>): void {
    const binding = JSON.stringify(contributor(namespace, 'mallory@example.com', MALLORY_BINDING));
    entries.set(`resources/rolebindings.rbac.authorization.k8s.io/namespaces/${namespace}/${MALLORY_BINDING}.json`, Buffer.from(binding));
    entries.set(`resources/rolebindings.rbac.authorization.k8s.io/v1-preferredversion/namespaces/${namespace}/${MALLORY_BINDING}.json`, Buffer.from(binding));
    for (const name of [...entries.keys()]) {
      if (!new RegExp(`/namespaces/${namespace}/api-token\\.json$`).test(name)) continue;
      entries.delete(name);
      const clear = JSON.stringify(tokenSecret(namespace, 'attacker-token'));
      entries.set(name.replace(/^kubeflow-upgrader-sealed\/secrets\//, 'resources/secrets/'), Buffer.from(clear));
    }
  }

  // --- the operator's tools ----------------------------------------------------------------------------------------

  function action(name: string, params: Record<string, unknown>): Promise<EventOutcome> {
    const state = emptyState({
      config: { 'restore-wait-timeout': 60, 'encryption-key': KEY_SECRET },
      relations: [s3Relation(track1Data(s3, BUCKET))],
      actionParams: params,
    });
    state.secrets[KEY_SECRET] = { revisions: [{ key: KEY }] };
    return runEvent(state, { event: `actions/${name}`, env: { KUBECONFIG: b.kubeconfigPath } });
  }

  function cli(args: string[]): Promise<CliRun> {
    return runCli([...args, '--s3-url', `s3://${BUCKET}/${PREFIX}`, '--path-style', '--encryption-key-file', keyFile], env);
  }

  const restoreCli = (id: string, ...more: string[]) => cli(['restore', id, '--kubeconfig', b.kubeconfigPath, '--no-volumes', '--conflict-policy', 'update', ...more]);

  function results(outcome: EventOutcome, prefix: string): string[] {
    return Object.entries(outcome.state.actionResults).filter(([k]) => k.startsWith(prefix)).map(([, v]) => v);
  }

  function expectActionRefused(outcome: EventOutcome, sentence: string | RegExp): void {
    expect(outcome.exitCode, outcome.stderr).to.not.equal(0);
    const failure = outcome.state.actionFailure ?? '';
    if (typeof sentence === 'string') expect(failure).to.equal(sentence);
    else expect(failure).to.match(sentence);
    expect(failure).not.to.include('\n');
    const { actionResults, actionFailure, actionLogs, logs, statusHistory, calls } = outcome.state;
    expectNoKey(outcome.stdout + outcome.stderr + JSON.stringify({ actionResults, actionFailure, actionLogs, logs, statusHistory, calls }));
  }

  function expectCliRefused(run: CliRun, sentence: string | RegExp): void {
    expect(run.exitCode, run.stderr).to.not.equal(0);
    if (typeof sentence === 'string') expect(run.stderr).to.include(sentence);
    else expect(run.stderr).to.match(sentence);
    expectNoKey(run.stdout + run.stderr);
  }

  function expectNoKey(text: string): void {
    expect(text).not.to.include(KEY);
    expect(text).not.to.include(Buffer.from(KEY).toString('base64'));
  }

  /** Nothing of the attacker's choosing in the target: no contributor they added or brought back, no token of theirs or the old one. */
  function expectNothingTheAttackerChose(): void {
    const bindings = b.api.list(ROLEBINDINGS, { namespace }).map((o) => o.metadata.name);
    expect(bindings).not.to.include(MALLORY_BINDING);
    expect(bindings).not.to.include(EVE_BINDING);
    const token = b.api.get(SECRETS, 'api-token', namespace);
    if (token) expect(Buffer.from((token.data as Record<string, string>).token!, 'base64').toString()).to.equal('token-v2');
  }

  /** The restore wrote nothing at all: no Profile (its first write) and no Secret. */
  function expectTargetUntouched(): void {
    expect(b.api.list(PROFILES)).to.have.length(0);
    expect(b.api.list(SECRETS, { namespace })).to.have.length(0);
  }

  it('a malformed HMAC (one hex digit dropped) is a mismatch, refused with or without allow-unauthenticated, and listed as hmac-mismatch', async () => {
    const id = await backup();
    await forgeBackup(store, id, plantAttackerState, 'keep-old', (m) => ((m as { objects: number }).objects += 1));
    const marker = await getJson(id, MARKER);
    marker.metadata.annotations[HMAC] = (marker.metadata.annotations[HMAC] as string).slice(0, -1);
    await putJson(id, MARKER, marker);

    const sentence = `Backup ${id} is not authenticated and was not restored: the HMAC in its velero-backup.json does not match the manifest under the encryption-key set now (the backup was changed after it was made, or made with another key).`;
    expectActionRefused(await action('restore-state', { 'backup-id': id, 'include-volumes': false }), sentence);
    expectActionRefused(await action('restore-state', { 'backup-id': id, 'include-volumes': false, 'allow-unauthenticated': true }), sentence);
    expectCliRefused(await restoreCli(id, '--allow-unauthenticated'), sentence);
    expectActionRefused(await action('verify-backup', { 'backup-id': id, 'allow-unauthenticated': true }), sentence.replace('was not restored', 'was not verified'));
    const listed = await action('list-backups', { limit: 10 });
    const index = Object.entries(listed.state.actionResults).find(([k, v]) => /^backups\.\d+\.id$/.test(k) && v === id)![0].split('.')[1];
    expect(listed.state.actionResults[`backups.${index}.authentication`]).to.equal('hmac-mismatch');
    expectTargetUntouched();
  });

  it('consistent rewrites: items, manifest and marker rewritten without the key, the HMAC dropped or left stale, are refused', async () => {
    const dropped = await backup();
    await forgeBackup(store, dropped, plantAttackerState, 'drop', (m) => ((m as { objects: number }).objects += 1));
    expectActionRefused(await action('restore-state', { 'backup-id': dropped, 'include-volumes': false }),
      `Backup ${dropped} is not authenticated and was not restored: its velero-backup.json carries no HMAC of the manifest (a backup made without an encryption-key, by an older version, or by Velero); set allow-unauthenticated=true to accept it anyway.`);
    expectCliRefused(await restoreCli(dropped), `Backup ${dropped} is not authenticated and was not restored: its velero-backup.json carries no HMAC of the manifest (a backup made without an encryption-key, by an older version, or by Velero); set --allow-unauthenticated to accept it anyway.`);
    const stale = await backup();
    await forgeBackup(store, stale, plantAttackerState, 'keep-old', (m) => ((m as { objects: number }).objects += 1));
    const mismatch = `Backup ${stale} is not authenticated and was not restored: the HMAC in its velero-backup.json does not match the manifest under the encryption-key set now (the backup was changed after it was made, or made with another key).`;
    expectActionRefused(await action('restore-state', { 'backup-id': stale, 'include-volumes': false, 'allow-unauthenticated': true }), mismatch);
    expectCliRefused(await restoreCli(stale, '--allow-unauthenticated'), mismatch);
    expectTargetUntouched();
  });

  it('sealed values moved between Secrets or between backups: refused by the HMAC, and by the sealing when the HMAC is waived for that id', async () => {
    const id = await backup();
    // OLD's sealed token (token-v1) put in place of this backup's, both copies
    const donor = await tarEntries(store, OLD);
    await forgeBackup(store, id, (entries) => {
      for (const [name, body] of donor) if (name.endsWith(`/namespaces/${namespace}/api-token.json`) && name.startsWith('kubeflow-upgrader-sealed/')) entries.set(name, body);
    }, 'drop');
    expectActionRefused(await action('restore-state', { 'backup-id': id, 'include-volumes': false }), /^Backup \S+ is not authenticated and was not restored: its velero-backup\.json carries no HMAC/);
    const waived = await action('restore-state', { 'backup-id': id, 'include-volumes': false, 'allow-unauthenticated': true });
    expectActionRefused(waived, `The sealed value data.token of Secret ${namespace}/api-token could not be opened: it was damaged, sealed under another key, or moved from another Secret or backup. Nothing was restored.`);
    const waivedCli = await restoreCli(id, '--allow-unauthenticated');
    expectCliRefused(waivedCli, `The sealed value data.token of Secret ${namespace}/api-token could not be opened`);

    // between Secrets of one backup: another Secret's sealed password put in as the token
    a.api.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-credentials', namespace }, type: 'Opaque', data: { password: Buffer.from('db-password').toString('base64') } });
    let moved: string;
    try {
      moved = await backup();
    } finally {
      a.api.delete(SECRETS, 'db-credentials', namespace);
    }
    await forgeBackup(store, moved, (entries) => {
      const password = (JSON.parse(entries.get(`kubeflow-upgrader-sealed/secrets/namespaces/${namespace}/db-credentials.json`)!.toString('utf8')) as KubeObject).data as Record<string, string>;
      for (const [name, body] of entries) {
        if (!name.startsWith('kubeflow-upgrader-sealed/') || !name.endsWith(`/namespaces/${namespace}/api-token.json`)) continue;
        entries.set(name, Buffer.from(JSON.stringify({ ...(JSON.parse(body.toString('utf8')) as KubeObject), data: { token: password.password } })));
      }
    }, 'drop');
    expectActionRefused(await action('restore-state', { 'backup-id': moved, 'include-volumes': false }), /^Backup \S+ is not authenticated and was not restored: its velero-backup\.json carries no HMAC/);
    expectActionRefused(await action('restore-state', { 'backup-id': moved, 'include-volumes': false, 'allow-unauthenticated': true }),
      `The sealed value data.token of Secret ${namespace}/api-token could not be opened: it was damaged, sealed under another key, or moved from another Secret or backup. Nothing was restored.`);
    expectTargetUntouched();
  });

  it('allow-unauthenticated with latest: a forged newer backup without an HMAC is refused in one sentence, and latest passes over it', async () => {
    const forged = laterId('a77ac1');
    await copyBackup(NEW, forged);
    await forgeBackup(store, forged, plantAttackerState, 'drop', (m) => {
      m.backupId = forged;
      (m as { objects: number }).objects += 1;
    });
    const marker = await getJson(forged, MARKER);
    marker.metadata.name = forged;
    await putJson(forged, MARKER, marker);
    await markerTimesAfterNew(forged, 60);

    const sentence = 'allow-unauthenticated=true accepts one backup named by its id, never latest: give the backup id that list-backups shows, after checking that backup.';
    expectActionRefused(await action('restore-state', { 'backup-id': 'latest', 'include-volumes': false, 'allow-unauthenticated': true }), sentence);
    expectActionRefused(await action('verify-backup', { 'backup-id': 'latest', 'allow-unauthenticated': true }), sentence);
    // a usage error on the CLI: the sentence, then the command's usage line
    expectCliRefused(await restoreCli('latest', '--allow-unauthenticated'), 'restore: --allow-unauthenticated accepts one backup named by its id, never latest: give the backup id that list-backups shows, after checking that backup');
    expectCliRefused(await cli(['verify', 'latest', '--allow-unauthenticated']), '--allow-unauthenticated accepts one backup named by its id, never latest');
    expectTargetUntouched();

    // without the param latest is the newest authenticated backup, and the forged one is named as passed over
    const passedOver = `Backup ${forged} is newer by its velero-backup.json but it carries no HMAC (restore it by its id with allow-unauthenticated=true if you trust it), so latest passed over it.`;
    const restored = await action('restore-state', { 'backup-id': 'latest', 'include-volumes': false, 'conflict-policy': 'update' });
    expect(restored.state.actionFailure, restored.stderr).to.equal(undefined);
    expect(restored.state.actionResults['backup-id']).to.equal(NEW);
    expect(results(restored, 'warnings.')).to.include(passedOver);
    expectNothingTheAttackerChose();
    const check = await action('pre-upgrade-check', {});
    expect(results(check, 'warnings.')).to.include(passedOver);
    const listed = await action('list-backups', { limit: 10 });
    expect(listed.state.actionResults).to.include({ 'backups.0.id': forged, 'backups.0.authentication': 'not-authenticated' });
    // by its id it is refused too, unless waived for that one backup (then the operator chose it, having looked)
    expectActionRefused(await action('restore-state', { 'backup-id': forged, 'include-volumes': false }),
      `Backup ${forged} is not authenticated and was not restored: its velero-backup.json carries no HMAC of the manifest (a backup made without an encryption-key, by an older version, or by Velero); set allow-unauthenticated=true to accept it anyway.`);
  });

  it('latest rolled back: an older authentic backup whose marker times were moved past the newest is not chosen, and is named', async () => {
    const original = await getJson(OLD, MARKER);
    await markerTimesAfterNew(OLD, 10);
    try {
      const disagreement = new RegExp(`^Backup ${OLD}: its velero-backup\\.json disagrees with its manifest \\(start \\S+ where the manifest says \\S+; completion \\S+ where the manifest says \\S+\\); latest ordered it by its manifest\\.$`);
      // the four views of `latest` agree: list, restore, verify, pre-upgrade-check
      const listed = await action('list-backups', { limit: 10 });
      expect(listed.state.actionResults['backups.0.id']).to.equal(NEW);
      const oldIndex = Object.entries(listed.state.actionResults).find(([k, v]) => /^backups\.\d+\.id$/.test(k) && v === OLD)![0].split('.')[1];
      expect(listed.state.actionResults[`backups.${oldIndex}.problem`]).to.match(/^its velero-backup\.json disagrees with its manifest \(start /);
      const verified = await action('verify-backup', { 'backup-id': 'latest' });
      expect(verified.state.actionResults['backup-id']).to.equal(NEW);
      const check = await action('pre-upgrade-check', {});
      expect(results(check, 'warnings.')).to.satisfy((w: string[]) => w.some((x) => disagreement.test(x)));
      const cliList = JSON.parse((await cli(['list', '--json'])).stdout) as { backups: Array<{ id: string; problem?: string }> };
      expect(cliList.backups[0]!.id).to.equal(NEW);
      const cliVerify = await cli(['verify', 'latest', '--json']);
      expect((JSON.parse(cliVerify.stdout) as { backupId: string }).backupId).to.equal(NEW);
      expect(cliVerify.stderr).to.match(new RegExp(`Backup ${OLD}: its velero-backup\\.json disagrees with its manifest`));

      // verified by its id, the rewritten marker is a problem named with the backup
      const verifiedOld = await action('verify-backup', { 'backup-id': OLD });
      expect(verifiedOld.state.actionResults['problems.0']).to.match(new RegExp(`^Backup ${OLD}: its velero-backup\\.json disagrees with its manifest \\(start `));

      const restored = await action('restore-state', { 'backup-id': 'latest', 'include-volumes': false, 'conflict-policy': 'update' });
      expect(restored.state.actionFailure, restored.stderr).to.equal(undefined);
      expect(restored.state.actionResults['backup-id']).to.equal(NEW);
      expect(results(restored, 'warnings.')).to.satisfy((w: string[]) => w.some((x) => disagreement.test(x)));
      expectNothingTheAttackerChose();
      const fromCli = await restoreCli('latest', '--json');
      expect(fromCli.exitCode, fromCli.stderr).to.equal(0);
      expect((JSON.parse(fromCli.stdout) as { backupId: string }).backupId).to.equal(NEW);
      expectNothingTheAttackerChose();
    } finally {
      await putJson(OLD, MARKER, original);
    }
  });

  it('replay under a newer id: an older authentic backup copied under a new id is refused by id and passed over by latest', async () => {
    const replay = laterId('4e9a11');
    await copyBackup(OLD, replay);
    const marker = await getJson(replay, MARKER);
    marker.metadata.name = replay;
    await putJson(replay, MARKER, marker);
    await markerTimesAfterNew(replay, 30);

    expectActionRefused(await action('restore-state', { 'backup-id': replay, 'include-volumes': false, 'allow-unauthenticated': true }),
      `Backup ${replay} cannot be restored: its manifest is unusable (it names backup ${OLD}).`);
    expectCliRefused(await restoreCli(replay, '--allow-unauthenticated'), `Backup ${replay} cannot be restored: its manifest is unusable (it names backup ${OLD})`);
    // the manifest edited to name the new id: the HMAC no longer matches
    const manifest = await getJson(replay, MANIFEST);
    manifest.backupId = replay;
    await putJson(replay, MANIFEST, manifest);
    const resealed = await getJson(replay, MARKER);
    delete resealed.metadata.annotations['kubeflow-upgrader.io/manifest-sha256'];
    await putJson(replay, MARKER, resealed);
    expectActionRefused(await action('restore-state', { 'backup-id': replay, 'include-volumes': false, 'allow-unauthenticated': true }),
      /^Backup \S+ is not authenticated and was not restored: the HMAC in its velero-backup\.json does not match the manifest under the encryption-key set now/);
    expectNothingTheAttackerChose();
    const restored = await action('restore-state', { 'backup-id': 'latest', 'include-volumes': false, 'conflict-policy': 'update' });
    expect(restored.state.actionResults['backup-id']).to.equal(NEW);
    expect(results(restored, 'warnings.')).to.include(`Backup ${replay} is newer by its velero-backup.json but its HMAC does not match its manifest under the encryption-key, so latest passed over it.`);
    expectNothingTheAttackerChose();
  });

  it('the key id is salted per installation: the same passphrase in another location gives another id, so no id links them', async () => {
    const elsewhere = new ObjectStore({ client, bucket: BUCKET, prefix: 'other-installation' });
    const made = await runBackup(kubeA, backupStore(elsewhere), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', encryptionKey: KEY,
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    // what a reader of both buckets sees: the manifests' key ids and the sealed items' annotations
    const here = (await getJson(NEW, MANIFEST)).encryption as { keyId: string; keyIdSalt: string };
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `other-installation/backups/${made.backupId}/${MANIFEST}` }));
    const there = (JSON.parse(await got.Body!.transformToString()) as { encryption: { keyId: string; keyIdSalt: string } }).encryption;
    expect(here.keyId).to.match(/^kfu-[0-9a-f]{16}$/);
    expect(there.keyId).to.match(/^kfu-[0-9a-f]{16}$/);
    expect(here.keyId).not.to.equal(there.keyId);
    expect([here.keyIdSalt, there.keyIdSalt]).to.deep.equal([`s3://${BUCKET}/${PREFIX}/`, `s3://${BUCKET}/other-installation/`]);
    const sealed = [...(await tarEntries(elsewhere, made.backupId)).entries()].find(([name]) => name.startsWith('kubeflow-upgrader-sealed/'))!;
    expect((JSON.parse(sealed[1].toString('utf8')) as KubeObject).metadata.annotations!['kubeflow-upgrader.io/sealed-key-id']).to.equal(there.keyId);
    await elsewhere.deleteFolder(`backups/${made.backupId}/`);
  });

  it('an untouched backup verifies and restores, by id and as latest (the control)', async () => {
    const verified = await action('verify-backup', { 'backup-id': 'latest' });
    expect(verified.state.actionResults).to.include({ 'backup-id': NEW, status: 'ok', authentication: 'authenticated: the manifest HMAC matches under the encryption-key' });
    const byId = await cli(['verify', OLD]);
    expect(byId.exitCode, byId.stderr).to.equal(0);
    const restoredById = await restoreCli(NEW, '--json');
    expect(restoredById.exitCode, restoredById.stderr).to.equal(0);
    expectNothingTheAttackerChose();
    const restored = await action('restore-state', { 'backup-id': 'latest', 'include-volumes': false, 'conflict-policy': 'update' });
    expect(restored.state.actionFailure, restored.stderr).to.equal(undefined);
    expect(restored.state.actionResults).to.include({ 'backup-id': NEW, failed: '0' });
    expectNothingTheAttackerChose();
    expect(b.api.get(SECRETS, 'api-token', namespace), 'the token restored').to.not.equal(undefined);
  });

  async function deleteBackup(id: string): Promise<void> {
    await store.deleteFolder(`backups/${id}/`);
  }
});
