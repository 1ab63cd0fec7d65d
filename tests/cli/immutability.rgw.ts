// backup-immutability end to end on a real Ceph RADOS Gateway (tests/support/rgw), through the real CLI process with
// --immutability: a bucket created with Object Lock, the embedded clusters and the simulated kubelet, the volume data
// in restic repositories written by Debian's restic through the repository gateway. radosgw enforces the retention
// itself (ceph/ceph src/rgw/rgw_op.cc RGWDeleteObj, RGWPutObjRetention), so what the test's own S3 client, holding the
// same key as the CLI, is refused is the proof. The oracle is the test's: the server's answers to DeleteObject with a
// version id, PutObjectRetention, HeadObject and ListObjectVersions, the sha256 of the volume file. The retention is a
// few seconds long, and the test waits for the date the server holds to pass, never for a guessed time.
// `npm run test:rgw`.
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectRetentionCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { runCli } from './run-cli.ts';
import { listKeys } from '../controlplane/fixtures.ts';

const BUCKET = 'kf-locked';
const PLAIN = 'kf-plain';
const PREFIX = 'team/prod/';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
/** long enough for two backups and the checks between them on a busy 2-core machine (about 50 s here alone), short enough to wait out */
const IMMUTABILITY = '120s';

const sha256 = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface Version { key: string; versionId: string; latest: boolean; marker: boolean }

describe('kubeflow-upgrader --immutability on radosgw: no one deletes a backup before its time (real CLI process)', function () {
  this.timeout(900_000);
  let rgw: RgwHandle;
  let a: KubeletCluster;
  let b: KubeletCluster;
  let work: string;
  let keyFile: string;
  let env: Record<string, string>;
  let client: S3Client;
  let claim: { namespace: string; name: string };
  let fileHash: string;
  const ids: string[] = [];
  const location = () => ['--s3-url', `s3://${BUCKET}/team/prod`, '--path-style', '--immutability', IMMUTABILITY];
  const common = () => [...location(), '--encryption-key-file', keyFile, '--mover-engine', 'restic'];
  /** a command that runs Jobs in cluster A (backup, verify, prune) */
  const cli = (args: string[]) => runCli([...args, ...common(), '--kubeconfig', a.cluster.kubeconfigPath], env);
  const versions = async (prefix: string): Promise<Version[]> => {
    const found: Version[] = [];
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    for (;;) {
      const page = await client.send(new ListObjectVersionsCommand({ Bucket: BUCKET, Prefix: prefix, KeyMarker: keyMarker, VersionIdMarker: versionIdMarker }));
      for (const v of page.Versions ?? []) found.push({ key: v.Key!, versionId: v.VersionId!, latest: v.IsLatest === true, marker: false });
      for (const m of page.DeleteMarkers ?? []) found.push({ key: m.Key!, versionId: m.VersionId!, latest: m.IsLatest === true, marker: true });
      if (!page.IsTruncated) return found;
      keyMarker = page.NextKeyMarker;
      versionIdMarker = page.NextVersionIdMarker;
    }
  };
  /** every object a backup needs: its folder (no run record) and its namespaces' restic repositories, never locks/ */
  const objectsOf = async (id: string) => [
    ...(await listKeys(client, BUCKET, `${PREFIX}backups/${id}/`)),
    ...(await listKeys(client, BUCKET, `${PREFIX}restic/`)).filter((key) => !key.includes('/locks/')),
  ];
  const refusal = (work: Promise<unknown>) => work.then(() => 'accepted', (e: { name?: string; $metadata?: { httpStatusCode?: number } }) => `${e.name} ${e.$metadata?.httpStatusCode}`);
  const retainUntil = async (key: string) => (await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).ObjectLockRetainUntilDate!;
  /** the sign: the clock (radosgw's and ours, one machine) passing the date the server holds */
  const waitPast = async (until: Date) => {
    while (Date.now() <= until.getTime() + 1_000) await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, until.getTime() + 1_001 - Date.now())));
  };

  before(async () => {
    [rgw, a, b] = await Promise.all([startRgw({ buckets: [PLAIN], objectLockBuckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 71 }), startKubeletCluster({ profiles: 0, seed: 72 })]);
    work = mkdtempSync(join(tmpdir(), 'cli-immutability-'));
    keyFile = join(work, 'key');
    writeFileSync(keyFile, 'a passphrase for the immutability round trip\n');
    env = { AWS_ACCESS_KEY_ID: rgw.accessKeyId, AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey, AWS_ENDPOINT_URL: rgw.endpoint };
    client = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    const pvc = a.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!;
    claim = { namespace: pvc.metadata.namespace!, name: pvc.metadata.name! };
  });
  after(async () => {
    client?.destroy();
    await Promise.all([rgw?.stop(), a?.stop(), b?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const backUp = async () => {
    const bytes = randomBytes(3 * 1024 * 1024);
    writeFileSync(join(a.kubelet.volumePath(claim.namespace, claim.name), 'weights.bin'), bytes);
    fileHash = sha256(bytes);
    await clockPastSecondOf(ids.at(-1));
    const run = await cli(['backup', '--json']);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    ids.push((JSON.parse(run.stdout) as { backupId: string }).backupId);
  };

  it('refuses --immutability on a bucket created without Object Lock, saying how to get one, having written nothing', async () => {
    const run = await runCli(['backup', '--s3-url', `s3://${PLAIN}/x`, '--path-style', '--immutability', IMMUTABILITY, '--kubeconfig', a.cluster.kubeconfigPath], env);
    expect(run.exitCode).to.not.equal(0);
    expect(run.stderr).to.include(`bucket "${PLAIN}" has no Object Lock`).and.include('--object-lock-enabled-for-bucket');
    expect(await listKeys(client, PLAIN)).to.deep.equal([]);
  });

  it('writes every object of the backup under COMPLIANCE retention: its folder and its restic repository, never the locks', async () => {
    await backUp();
    const objects = await objectsOf(ids[0]!);
    expect(objects).to.include(`${PREFIX}backups/${ids[0]}/velero-backup.json`);
    expect(objects.some((key) => key.startsWith(`${PREFIX}restic/${claim.namespace}/data/`))).to.equal(true);
    for (const key of objects) {
      const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
      expect(head.ObjectLockMode, key).to.equal('COMPLIANCE');
      expect(head.ObjectLockRetainUntilDate!.getTime(), key).to.be.greaterThan(Date.now());
    }
  });

  it("the CLI's own key can neither delete a version nor shorten its retention; an overwrite leaves the retained version, and verify tells", async () => {
    const id = ids[0]!;
    for (const key of await objectsOf(id)) {
      const current = (await versions(key)).find((v) => v.key === key && v.latest)!;
      expect(await refusal(client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key, VersionId: current.versionId }))), key).to.equal('AccessDenied 403');
      expect(await refusal(client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key, VersionId: current.versionId, BypassGovernanceRetention: true }))), key).to.equal('AccessDenied 403');
      const sooner = { Bucket: BUCKET, Key: key, VersionId: current.versionId, Retention: { Mode: 'COMPLIANCE' as const, RetainUntilDate: new Date(Date.now() + 2_000) } };
      expect(await refusal(client.send(new PutObjectRetentionCommand(sooner))), key).to.equal('AccessDenied 403');
    }
    expect(await refusal(client.send(new DeleteBucketCommand({ Bucket: BUCKET })))).to.equal('BucketNotEmpty 409');
    // a writer with the key puts new bytes over the manifest: a new version, the retained one stays as it was
    const manifestKey = `${PREFIX}backups/${id}/kubeflow-upgrader.json`;
    const original = (await versions(manifestKey)).find((v) => v.latest)!;
    const originalBytes = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: manifestKey }))).Body!.transformToByteArray();
    const forged = await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: manifestKey, Body: Buffer.from('{"forged":true}') }));
    const kept = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: manifestKey, VersionId: original.versionId }))).Body!.transformToByteArray();
    expect(sha256(kept)).to.equal(sha256(originalBytes));
    const told = await cli(['verify', id, '--json']);
    expect(told.exitCode, 'verify fails on the overwritten manifest').to.not.equal(0);
    expect(told.stdout + told.stderr).to.match(/manifest|sha256|HMAC/i);
    expect(told.stdout).to.include('0 object(s) still under Object Lock retention are hidden by a delete marker and 1 written over').and.include('run kubeflow-upgrader recover');
    // the retained version comes back by removing the one put over it (that one is not retained)
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: manifestKey, VersionId: forged.VersionId }));
    const again = await cli(['verify', id, '--json']);
    expect(again.exitCode, again.stderr.slice(-2000)).to.equal(0);
  });

  it('the restic repository accepts a second backup, which extends the retention of the objects it still needs', async () => {
    const configKey = `${PREFIX}restic/${claim.namespace}/config`;
    const before = await retainUntil(configKey);
    await backUp();
    expect((await retainUntil(configKey)).getTime()).to.be.greaterThan(before.getTime());
    expect((await retainUntil(configKey)).getTime()).to.be.at.least((await retainUntil(`${PREFIX}backups/${ids[1]}/velero-backup.json`)).getTime());
  });

  let firstUntil: Date;
  it('prune keeps the retained backup and says the date it can be deleted', async () => {
    firstUntil = await retainUntil(`${PREFIX}backups/${ids[0]}/velero-backup.json`);
    const run = await cli(['prune', '--retention', '1']);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    expect(run.stdout).to.include(`kept ${ids[0]}: under Object Lock retention (COMPLIANCE) until ${firstUntil.toISOString()}`);
    expect(run.stdout).to.include(`Backup ${ids[0]} is under Object Lock retention (COMPLIANCE) until ${firstUntil.toISOString()} and cannot be deleted before then`);
    expect(await listKeys(client, BUCKET, `${PREFIX}backups/${ids[0]}/`)).to.include(`${PREFIX}backups/${ids[0]}/velero-backup.json`);
  });

  it('after that date, prune deletes the backup with every version of it and forgets its restic snapshot', async () => {
    const snapshots = (await listKeys(client, BUCKET, `${PREFIX}restic/${claim.namespace}/snapshots/`)).length;
    await waitPast(firstUntil);
    const run = await cli(['prune', '--retention', '1']);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    expect(run.stdout).to.include(`deleted ${ids[0]}: beyond retention`);
    expect(await versions(`${PREFIX}backups/${ids[0]}/`)).to.deep.equal([]);
    expect((await listKeys(client, BUCKET, `${PREFIX}restic/${claim.namespace}/snapshots/`)).length).to.be.lessThan(snapshots);
    // what restic prune deleted is hidden, not gone: the second backup retained it, so its versions wait for that date
    expect((await versions(`${PREFIX}restic/${claim.namespace}/`)).some((v) => v.marker)).to.equal(true);
    expect(run.stdout).to.match(/old object version\(s\) .* are still under Object Lock retention/);
  });

  it("restic prune's deletes converge: once nothing retains them, prune removes the old versions they left", async () => {
    await waitPast(await retainUntil(`${PREFIX}backups/${ids[1]}/velero-backup.json`));
    const run = await cli(['prune', '--retention', '1']);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    const left = (await versions(PREFIX)).filter((v) => !v.latest || v.marker);
    expect(left.map((v) => `${v.key}${v.marker ? ' (delete marker)' : ''}`)).to.deep.equal([]);
  });

  it('a key holder who deletes every object and writes over a pack hides nothing for good: list tells, recover brings the backup back', async () => {
    await backUp();
    const id = ids[2]!;
    const pack = (await listKeys(client, BUCKET, `${PREFIX}restic/${claim.namespace}/data/`))[0]!;
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: pack, Body: Buffer.from('garbage over a pack') }));
    for (const key of await listKeys(client, BUCKET, PREFIX)) if (key !== pack) await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(await listKeys(client, BUCKET, `${PREFIX}backups/`)).to.deep.equal([]);
    const listed = await runCli(['list', '--json', ...location(), '--encryption-key-file', keyFile], env);
    expect(listed.exitCode, listed.stderr.slice(-2000)).to.equal(0);
    const listing = JSON.parse(listed.stdout) as { count: number; covered?: { hidden: number; overwritten: number; hiddenBackups: string[] }; warning?: string };
    expect(listing.count).to.equal(0);
    expect(listing.covered?.hiddenBackups).to.deep.equal([id]);
    expect(listing.covered?.overwritten).to.equal(1);
    expect(listing.warning).to.include('run kubeflow-upgrader recover');
    const verified = await cli(['verify', id]);
    expect(verified.exitCode).to.equal(1);
    expect(verified.stderr).to.include(`backup ${id} is hidden: `).and.include(`(the backups ${id} are no longer listed)`);
    const recovered = await runCli(['recover', '--json', ...location()], env);
    expect(recovered.exitCode, recovered.stderr.slice(-2000)).to.equal(0);
    expect((JSON.parse(recovered.stdout) as { hiddenBackups: string[] }).hiddenBackups).to.deep.equal([id]);
    expect(await listKeys(client, BUCKET, `${PREFIX}backups/${id}/`)).to.include(`${PREFIX}backups/${id}/velero-backup.json`);
  });

  it('the recovered backup verifies with all its data read, and restores byte-identical, volume data included', async () => {
    const verified = await cli(['verify', ids[2]!, '--read-data', 'full', '--json']);
    expect(verified.exitCode, verified.stderr.slice(-3000)).to.equal(0);
    expect((JSON.parse(verified.stdout) as { status: string }).status).to.equal('ok');
    const run = await runCli(['restore', 'latest', ...common(), '--kubeconfig', b.cluster.kubeconfigPath, '--json'], env);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    const outcome = JSON.parse(run.stdout) as { totals: { failed: number }; volumes: { restored: number } };
    expect(outcome.totals.failed).to.equal(0);
    expect(outcome.volumes.restored).to.be.greaterThan(0);
    expect(sha256(readFileSync(join(b.kubelet.volumePath(claim.namespace, claim.name), 'weights.bin')))).to.equal(fileHash);
  });
});
