// backup, verify, restore and prune through the real CLI process on a real Ceph RADOS Gateway (tests/support/rgw):
// the embedded clusters and the simulated kubelet as in commands.process.test.ts, the volume data in restic
// repositories written and read by Debian's restic in the mover Jobs (through the repository gateway's rclone). The
// oracle is the test's own: the sha256 of the volume file, the names of Profiles and Notebooks
// the embedded API servers hold, the keys radosgw lists. `npm run test:rgw`.
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { runCli } from './run-cli.ts';
import { listKeys } from '../controlplane/fixtures.ts';

const BUCKET = 'kf-backups';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };
const NOTEBOOKS = { group: 'kubeflow.org', resource: 'notebooks' };

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('kubeflow-upgrader backup, verify, restore and prune on radosgw (real CLI process)', function () {
  this.timeout(300_000);
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
  const common = () => ['--s3-url', `s3://${BUCKET}/team/prod`, '--path-style', '--encryption-key-file', keyFile, '--mover-engine', 'restic'];
  const keysUnder = (prefix: string) => listKeys(client, BUCKET, prefix);
  const names = (cluster: KubeletCluster, ref: { group: string; resource: string }) =>
    cluster.cluster.api.list(ref).map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();

  before(async () => {
    [rgw, a, b] = await Promise.all([startRgw({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 2, seed: 61 }), startKubeletCluster({ profiles: 0, seed: 62 })]);
    work = mkdtempSync(join(tmpdir(), 'cli-rgw-'));
    keyFile = join(work, 'key');
    writeFileSync(keyFile, 'a passphrase for the radosgw round trip\n');
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

  it('backs up twice with the restic mover: each a committed backup, the volume in its namespace\'s repository', async () => {
    for (let i = 0; i < 2; i++) {
      // a multipart-sized file (restic packs it; 6 MiB is more than one 5 MiB part), replaced before the second backup
      const bytes = randomBytes(6 * 1024 * 1024);
      writeFileSync(join(a.kubelet.volumePath(claim.namespace, claim.name), 'weights.bin'), bytes);
      fileHash = sha256(bytes);
      await clockPastSecondOf(ids.at(-1));
      const run = await runCli(['backup', ...common(), '--kubeconfig', a.cluster.kubeconfigPath, '--json'], env);
      expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
      const result = JSON.parse(run.stdout) as { backupId: string; location: string };
      ids.push(result.backupId);
      expect(result.location).to.equal(`s3://${BUCKET}/team/prod/backups/${result.backupId}/`);
    }
    const keys = await keysUnder('team/prod/');
    for (const id of ids) expect(keys).to.include(`team/prod/backups/${id}/velero-backup.json`);
    expect(keys.some((k) => k.startsWith(`team/prod/restic/${claim.namespace}/snapshots/`))).to.equal(true);
  });

  it('verify --read-data full: the backup and its restic repository read back whole', async () => {
    const run = await runCli(['verify', ids[1]!, ...common(), '--kubeconfig', a.cluster.kubeconfigPath, '--read-data', 'full', '--json'], env);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    const report = JSON.parse(run.stdout) as { status: string; resticRepositories: Array<{ status: string }> };
    expect(report.status).to.equal('ok');
    expect(report.resticRepositories.length).to.be.greaterThan(0);
    expect(report.resticRepositories.map((r) => r.status)).to.deep.equal(report.resticRepositories.map(() => 'ok'));
  });

  it('restore latest into a fresh cluster: the same Profiles and Notebooks, the volume file byte for byte', async () => {
    const run = await runCli(['restore', 'latest', ...common(), '--kubeconfig', b.cluster.kubeconfigPath, '--json'], env);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    const outcome = JSON.parse(run.stdout) as { totals: { failed: number }; volumes: { restored: number } };
    expect(outcome.totals.failed).to.equal(0);
    expect(outcome.volumes.restored).to.be.greaterThan(0);
    expect(names(b, PROFILES)).to.deep.equal(names(a, PROFILES));
    expect(names(b, NOTEBOOKS)).to.deep.equal(names(a, NOTEBOOKS));
    expect(sha256(readFileSync(join(b.kubelet.volumePath(claim.namespace, claim.name), 'weights.bin')))).to.equal(fileHash);
  });

  it('prune --retention 1 deletes the older backup and forgets its snapshots in the repository', async () => {
    const snapshotsBefore = (await keysUnder(`team/prod/restic/${claim.namespace}/snapshots/`)).length;
    const run = await runCli(['prune', ...common(), '--kubeconfig', a.cluster.kubeconfigPath, '--retention', '1'], env);
    expect(run.exitCode, run.stderr.slice(-3000)).to.equal(0);
    expect(run.stdout).to.include(`deleted ${ids[0]}: beyond retention`);
    const keys = await keysUnder('team/prod/backups/');
    expect(keys.some((k) => k.startsWith(`team/prod/backups/${ids[0]}/`))).to.equal(false);
    expect(keys).to.include(`team/prod/backups/${ids[1]}/velero-backup.json`);
    expect((await keysUnder(`team/prod/restic/${claim.namespace}/snapshots/`)).length).to.be.lessThan(snapshotsBefore);
  });
});
