// Authenticated backups (issue 24): with encryption-key set, a bucket writer without the key can neither forge a
// backup nor splice one, and every refusal comes before the first write into the cluster. Backups are made
// in-process (as the charm's engine makes them), tampered with as a bucket writer could, then verified, listed and
// restored by the charm's actions, run in process (runEvent): what is checked is the charm's decisions, not packing.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { s3ClientFor } from '../archive/fixtures.ts';
import { forgeBackup, tarEntries } from '../archive/forge.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { runBackup } from '../../src/backup/engine.ts';
import type { VolumeStep } from '../../src/steps.ts';
import { kdf, SecretOpener, type SealParameters } from '../../src/archive/seal.ts';
import { rcloneBehaviourEnv, rcloneRemoteEnv, REMOTE_NAME } from '../../src/volumes/rclone-env.ts';
import { backupStore } from '../support/backup-store.ts';

const BUCKET = 'kubeflow-backups';
const PREFIX = 'backups';
const KEY = 'a passphrase only the operator knows';
// a secret URI as Juju makes them: `secret:` and a 20-character id (juju/juju core/secrets/secret.go)
const KEY_SECRET = 'secret:cta0authbackupskey01';
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };

describe('authenticated backups (the charm in process)', function () {
  this.timeout(180_000);
  let s3: S3ServerHandle;
  let a: RunningCluster;
  let b: RunningCluster;
  let store: ObjectStore;
  let kubeA: KubeClient;
  let namespace: string;

  before(async () => {
    [s3, a, b] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ profiles: 2, seed: 24 }), startCluster({ seed: 24 })]);
    namespace = a.api.list(PROFILES)[0]!.metadata.name!;
    const secret = (name: string, password: string): KubeObject => ({
      apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', data: { password: Buffer.from(password).toString('base64') },
    });
    a.api.create({ group: '', resource: 'secrets' }, secret('db-credentials', 'database-password-of-alice'));
    a.api.create({ group: '', resource: 'secrets' }, secret('api-token', 'token-of-a-service'));
    a.api.create({ group: '', resource: 'persistentvolumeclaims' }, {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'workspace', namespace },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    kubeA = await KubeClient.load({ kubeconfig: a.kubeconfigPath });
    store = new ObjectStore({ client: s3ClientFor(s3), bucket: BUCKET, prefix: PREFIX });
  });
  after(async () => {
    kubeA?.close();
    await Promise.all([s3?.stop(), a?.stop(), b?.stop()]);
  });

  /**
   * The volume step as the mover runs it, without a kubelet: the real rclone copies a small tree into the backup's
   * volume folder with the mover's remote definition and behaviour flags, so the objects are the ones rclone writes.
   */
  const rcloneVolumes: VolumeStep = async (backupId, pvcs) => {
    const dir = mkdtempSync(join(tmpdir(), 'kfu-volume-'));
    try {
      writeFileSync(join(dir, 'notebook.ipynb'), JSON.stringify({ cells: [{ source: 'print(1)' }] }));
      writeFileSync(join(dir, 'model.bin'), Buffer.alloc(300_000, 7));
      // as in the mover's container: only the remote and behaviour variables (the test process's AWS_CA_BUNDLE would
      // make rclone's S3 backend refuse its own HTTP transport)
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin', ...rcloneBehaviourEnv(), RCLONE_CACHE_DIR: join(dir, '.cache'), HOME: dir,
        ...rcloneRemoteEnv({ endpoint: s3.endpoint, bucket: BUCKET, accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, uriStyle: 'path', region: 'us-east-1' }),
      };
      const entries = [];
      for (const pvc of pvcs) {
        const key = backupKeys(backupId).volume(pvc.namespace, pvc.name);
        await promisify(execFile)('rclone', ['copy', '--checksum', '--exclude', '.cache/**', dir, `${REMOTE_NAME}:${BUCKET}/${PREFIX}/${key}`], { env });
        entries.push({ namespace: pvc.namespace, pvc: pvc.name, key, files: 2, bytes: 300_000 });
      }
      return entries;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  async function backup(options: { key?: string; volumes?: boolean } = {}): Promise<string> {
    const made = await runBackup(kubeA, backupStore(store), {
      kind: 'backup-state', includeVolumes: options.volumes === true, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
      ...(options.key ? { encryptionKey: options.key } : {}),
      ...(options.volumes ? { volumes: rcloneVolumes } : {}),
    });
    return made.backupId;
  }

  function action(name: string, params: Record<string, unknown>, options: { key?: boolean } = {}): Promise<EventOutcome> {
    const state = emptyState({
      config: { 'restore-wait-timeout': 30, ...(options.key === false ? {} : { 'encryption-key': KEY_SECRET }) },
      relations: [s3Relation(track1Data(s3, BUCKET))],
      actionParams: params,
    });
    state.secrets[KEY_SECRET] = { revisions: [{ key: KEY }] };
    return runEvent(state, { event: `actions/${name}`, env: { KUBECONFIG: b.kubeconfigPath } });
  }

  /** Nothing was written into the target: no Profile (the restore's first write) and no Secret of the namespace. */
  function expectTargetUntouched(): void {
    expect(b.api.list(PROFILES)).to.have.length(0);
    expect(b.api.list({ group: '', resource: 'secrets' }, { namespace })).to.have.length(0);
  }

  function expectRefused(outcome: EventOutcome, message: RegExp): void {
    expect(outcome.exitCode).to.not.equal(0);
    expect(outcome.state.actionFailure, JSON.stringify(outcome.state.logs.slice(-3))).to.match(message);
    expect(outcome.state.actionFailure).not.to.include('\n');
    expect(outcome.state.actionFailure).not.to.include(KEY);
    expect(outcome.stdout + outcome.stderr).not.to.include(KEY);
  }

  /** Both copies of one item, edited the same way. */
  function editItem(entries: Map<string, Buffer>, pathEnd: RegExp, edit: (object: KubeObject) => void): void {
    let edited = 0;
    for (const [name, body] of entries) {
      if (!pathEnd.test(name)) continue;
      const object = JSON.parse(body.toString('utf8')) as KubeObject;
      edit(object);
      entries.set(name, Buffer.from(JSON.stringify(object)));
      edited++;
    }
    expect(edited, `copies of ${pathEnd}`).to.equal(2);
  }

  const sealedSecretPath = (name: string) => new RegExp(`^kubeflow-upgrader-sealed/secrets/(v1-preferredversion/)?namespaces/${namespace}/${name}\\.json$`);
  const profilePath = () => new RegExp(`^resources/profiles\\.kubeflow\\.org/(v1-preferredversion/)?cluster/${namespace}\\.json$`);
  const takeOverProfile = (entries: Map<string, Buffer>) =>
    editItem(entries, profilePath(), (profile) => ((profile.spec as { owner: { name: string } }).owner.name = 'mallory@example.com'));

  it('refuses a backup rewritten consistently without the key and its HMAC dropped, saying it carries none', async () => {
    const id = await backup({ key: KEY });
    await forgeBackup(store, id, takeOverProfile, 'drop');
    const restored = await action('restore-state', { 'backup-id': id, 'include-volumes': false });
    expectRefused(restored, new RegExp(`^Backup ${id} is not authenticated and was not restored: its velero-backup.json carries no HMAC of the manifest .*; set allow-unauthenticated=true to accept it anyway\\.$`));
    const verified = await action('verify-backup', { 'backup-id': id });
    expectRefused(verified, new RegExp(`^Backup ${id} is not authenticated and was not verified: its velero-backup.json carries no HMAC`));
    expectTargetUntouched();
  });

  it('refuses a backup rewritten consistently without the key and its old HMAC left in place, saying it does not match', async () => {
    const id = await backup({ key: KEY });
    await forgeBackup(store, id, takeOverProfile, 'keep-old');
    const restored = await action('restore-state', { 'backup-id': id, 'include-volumes': false, 'allow-unauthenticated': true });
    // allow-unauthenticated accepts a missing HMAC, never a wrong one
    expectRefused(restored, new RegExp(`^Backup ${id} is not authenticated and was not restored: the HMAC in its velero-backup.json does not match the manifest under the encryption-key set now \\(.*\\)\\.$`));
    const verified = await action('verify-backup', { 'backup-id': id });
    expectRefused(verified, /does not match the manifest under the encryption-key set now/);
    expectTargetUntouched();
  });

  it('refuses a sealed value moved from one Secret to another: by the HMAC, and by the sealing when the HMAC is waived', async () => {
    const id = await backup({ key: KEY });
    await forgeBackup(store, id, (entries) => {
      const stolen = (JSON.parse(entries.get(`kubeflow-upgrader-sealed/secrets/namespaces/${namespace}/db-credentials.json`)!.toString('utf8')) as KubeObject).data as Record<string, string>;
      editItem(entries, sealedSecretPath('api-token'), (s) => (s.data = { password: stolen.password! }));
    }, 'drop');
    expectRefused(await action('restore-state', { 'backup-id': id, 'include-volumes': false }), /is not authenticated and was not restored: its velero-backup.json carries no HMAC/);
    const waived = await action('restore-state', { 'backup-id': id, 'include-volumes': false, 'allow-unauthenticated': true });
    expectRefused(waived, new RegExp(`^The sealed value data\\.password of Secret ${namespace}/api-token could not be opened: .*moved from another Secret or backup\\. Nothing was restored\\.$`));
    const verified = await action('verify-backup', { 'backup-id': id, 'allow-unauthenticated': true });
    expect(verified.state.actionResults.status).to.equal('corrupt');
    expect(verified.state.actionResults.authentication).to.match(/^not authenticated \(.*\), accepted because allow-unauthenticated=true was given$/);
    expect(Object.entries(verified.state.actionResults).filter(([k]) => k.startsWith('problems.')).map(([, v]) => v).join(' '))
      .to.match(new RegExp(`data\\.password of Secret ${namespace}/api-token could not be opened`));
    expectTargetUntouched();
  });

  it('refuses a sealed Secret moved from another backup made with the same key', async () => {
    const [id, other] = [await backup({ key: KEY }), await backup({ key: KEY })];
    const donor = await tarEntries(store, other);
    await forgeBackup(store, id, (entries) => {
      for (const [name, body] of donor) if (sealedSecretPath('db-credentials').test(name)) entries.set(name, body);
    }, 'drop');
    expectRefused(await action('restore-state', { 'backup-id': id, 'include-volumes': false }), /is not authenticated and was not restored: its velero-backup.json carries no HMAC/);
    const waived = await action('restore-state', { 'backup-id': id, 'include-volumes': false, 'allow-unauthenticated': true });
    expectRefused(waived, new RegExp(`^The sealed value data\\.password of Secret ${namespace}/db-credentials could not be opened: .* Nothing was restored\\.$`));
    expectTargetUntouched();
  });

  it('refuses a backup whose volume file was changed in the bucket, though its HMAC still matches', async () => {
    const id = await backup({ key: KEY, volumes: true });
    const file = `${PREFIX}/${backupKeys(id).volume(namespace, 'workspace')}model.bin`;
    await s3ClientFor(s3).send(new PutObjectCommand({ Bucket: BUCKET, Key: file, Body: Buffer.alloc(300_000, 8) }));
    const restored = await action('restore-state', { 'backup-id': id, 'include-volumes': false });
    expectRefused(restored, new RegExp(`^Backup ${id} was refused and nothing was restored: its volume or control-plane files differ from the ones it was made with \\(File volumes/${namespace}/workspace/model\\.bin of backup ${id} was changed in the bucket after the backup was made\\)\\.$`));
    const verified = await action('verify-backup', { 'backup-id': id });
    expect(verified.state.actionResults).to.include({ status: 'corrupt', authentication: 'authenticated: the manifest HMAC matches under the encryption-key' });
    expect(verified.state.actionResults['problems.0']).to.equal(`File volumes/${namespace}/workspace/model.bin of backup ${id} was changed in the bucket after the backup was made.`);
    expectTargetUntouched();
  });

  it('needs allow-unauthenticated=true for a backup made without a key, and says so in the results', async () => {
    const id = await backup();
    expectRefused(await action('restore-state', { 'backup-id': id, 'dry-run': true, 'include-volumes': false }), /carries no HMAC of the manifest \(a backup made without an encryption-key/);
    const allowed = await action('restore-state', { 'backup-id': id, 'dry-run': true, 'include-volumes': false, 'allow-unauthenticated': true });
    expect(allowed.state.actionFailure, allowed.stderr).to.equal(undefined);
    expect(allowed.state.actionResults.authentication).to.match(/^not authenticated \(its velero-backup.json carries no HMAC .*\), accepted because allow-unauthenticated=true was given$/);
    // without a key nothing is checked, as before
    const keyless = await action('restore-state', { 'backup-id': id, 'dry-run': true, 'include-volumes': false }, { key: false });
    expect(keyless.state.actionResults.authentication).to.match(/^not checked: no encryption-key is set/);
    // it is the newest backup now, but with a key latest is the newest authenticated one: pre-upgrade-check judges that
    // one and names the newer one passed over, without making that a reason for no-go
    const check = await action('pre-upgrade-check', {});
    expect(check.state.actionFailure, check.stderr).to.equal(undefined);
    expect(Object.entries(check.state.actionResults).filter(([k]) => k.startsWith('warnings.')).map(([, v]) => v)).to.include(
      `Backup ${id} is newer by its velero-backup.json but it carries no HMAC (restore it by its id with allow-unauthenticated=true if you trust it), so latest passed over it.`,
    );
    // without a key nothing is authenticated: it is the newest, and the check says so
    const keylessCheck = await action('pre-upgrade-check', {}, { key: false });
    expect(keylessCheck.state.actionResults['warnings.0']).to.equal(
      `The newest complete backup ${id} is not authenticated (it carries no HMAC): set encryption-key and run backup-state for one that is; restoring this one with a key needs its backup-id and allow-unauthenticated=true.`,
    );
    expect(Object.entries(check.state.actionResults).filter(([k]) => k.startsWith('reasons.')).map(([, v]) => v).join(' ')).not.to.include('authenticated');
    expectTargetUntouched();
  });

  it('opens a backup sealed the old way (no binding, no HMAC) with allow-unauthenticated=true, and reports it sealed without binding', async () => {
    const id = await backup({ key: KEY });
    const manifest = JSON.parse((await store.getBytes(backupKeys(id).manifest)).toString('utf8')) as { encryption: SealParameters };
    // What an older version wrote: AES-256-GCM under the scrypt output itself, AAD `data/<key>` (or
    // `annotation/<name>`), no binding, no HMAC. Every sealed Secret is opened and sealed again that way.
    const oldKey = kdf(KEY, Buffer.from(manifest.encryption.salt, 'base64'));
    const sealOld = (context: string, plain: Buffer) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', oldKey, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
    };
    const opener = SecretOpener.forBackup(id, manifest.encryption, KEY);
    await forgeBackup(store, id, (entries) => {
      for (const [name, body] of entries) {
        if (!name.startsWith('kubeflow-upgrader-sealed/')) continue;
        const sealed = JSON.parse(body.toString('utf8')) as KubeObject;
        const clear = opener.open(sealed);
        const data = Object.fromEntries(Object.entries((clear.data ?? {}) as Record<string, string>).map(([k, v]) => [k, sealOld(`data/${k}`, Buffer.from(v, 'base64'))]));
        const annotations = { ...sealed.metadata.annotations };
        for (const a of (annotations['kubeflow-upgrader.io/sealed-annotations'] ?? '').split(',').filter(Boolean)) {
          annotations[a] = sealOld(`annotation/${a}`, Buffer.from(clear.metadata.annotations![a]!, 'utf8'));
        }
        entries.set(name, Buffer.from(JSON.stringify({ ...sealed, data, metadata: { ...sealed.metadata, annotations } })));
      }
    }, 'drop', (m) => delete (m.encryption as Record<string, unknown>).binding);
    const verified = await action('verify-backup', { 'backup-id': id, 'allow-unauthenticated': true });
    expect(verified.state.actionFailure, verified.stderr).to.equal(undefined);
    expect(verified.state.actionResults).to.include({ status: 'ok', sealing: 'sealed without binding (an older backup: its sealed values are not tied to their Secret or backup)' });
    const planned = await action('restore-state', { 'backup-id': id, 'include-volumes': false, 'dry-run': true, 'allow-unauthenticated': true });
    expect(planned.state.actionFailure, planned.stderr).to.equal(undefined);
    expect(Object.entries(planned.state.actionResults).filter(([k]) => k.startsWith('warnings.')).map(([, v]) => v))
      .to.include(`Backup ${id} was sealed without binding (an older backup): its sealed values are not tied to their Secret or backup.`);
    expectTargetUntouched();
  });

  it('verifies and restores an untouched backup with the right key; list-backups shows which backups are authenticated', async () => {
    const id = await backup({ key: KEY, volumes: true });
    const verified = await action('verify-backup', { 'backup-id': id });
    expect(verified.state.actionFailure, verified.stderr).to.equal(undefined);
    expect(verified.state.actionResults).to.include({
      status: 'ok', authentication: 'authenticated: the manifest HMAC matches under the encryption-key', sealing: 'sealed, each value bound to its backup, Secret and key',
    });

    const listed = await action('list-backups', { limit: 100 });
    const byId = new Map<string, string>();
    for (const [k, v] of Object.entries(listed.state.actionResults)) {
      const m = /^backups\.(\d+)\.id$/.exec(k);
      if (m) byId.set(v, listed.state.actionResults[`backups.${m[1]}.authentication`]!);
    }
    expect(byId.get(id)).to.equal('authenticated');
    expect([...byId.values()]).to.include.members(['not-authenticated', 'hmac-mismatch']);
    const keyless = await action('list-backups', { limit: 1 }, { key: false });
    expect(keyless.state.actionResults).to.include({ 'backups.0.id': id, 'backups.0.authentication': 'hmac-unchecked' });

    const restored = await action('restore-state', { 'backup-id': id, 'include-volumes': false });
    expect(restored.state.actionFailure, restored.stderr).to.equal(undefined);
    expect(restored.state.actionResults).to.include({ authentication: 'authenticated: the manifest HMAC matches under the encryption-key', failed: '0' });
    const opened = b.api.get({ group: '', resource: 'secrets' }, 'db-credentials', namespace);
    expect(Buffer.from((opened!.data as Record<string, string>).password!, 'base64').toString()).to.equal('database-password-of-alice');
  });
});
