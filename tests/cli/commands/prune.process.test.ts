// The prune command (src/cli/commands/prune.ts) as a user runs it: bin/kubeflow-upgrader.js in its own process against
// the embedded cluster with the simulated kubelet (restic Jobs run Debian's restic) and s3rver. Two backups made by the
// CLI's restic mover; prune --retention 1 forgets the older one's snapshots and prunes the repository, --dry-run
// changes nothing, and a backup still being written refuses it in one line on stderr, exit 1.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Server, type S3ServerHandle } from '../../support/s3/server.ts';
import { clockPastSecondOf } from '../../support/backup-ids.ts';
import { startKubeletCluster, type KubeletCluster } from '../../volumes/helpers.ts';
import { runCli } from '../run-cli.ts';
import { newBackupId } from '../../../src/store/layout.ts';

const BUCKET = 'cli-prune';

describe('cli prune with restic repositories', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let cluster: KubeletCluster;
  let client: S3Client;
  let env: Record<string, string>;
  let dir: string;
  let keyFile: string;
  let volume: string;
  let namespace: string;
  const common = () => ['--s3-url', `s3://${BUCKET}/kf`, '--path-style', '--kubeconfig', cluster.cluster.kubeconfigPath, '--encryption-key-file', keyFile, '--mover-engine', 'restic'];
  const repositoryBytes = async () => {
    const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `kf/restic/${namespace}/` }));
    return (page.Contents ?? []).reduce((sum, o) => sum + (o.Size ?? 0), 0);
  };

  before(async () => {
    [s3, cluster] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 53 })]);
    env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_ENDPOINT_URL: s3.endpoint };
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    dir = mkdtempSync(join(tmpdir(), 'cli-prune-'));
    keyFile = join(dir, 'key');
    writeFileSync(keyFile, 'a passphrase for the prune command\n');
    const claim = cluster.cluster.api.list({ group: '', resource: 'persistentvolumeclaims' }).find((p) => p.metadata.namespace !== 'kubeflow')!;
    namespace = claim.metadata.namespace!;
    volume = cluster.kubelet.volumePath(namespace, claim.metadata.name!);
  });
  after(async () => {
    client?.destroy();
    await Promise.all([s3?.stop(), cluster?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('forgets the older backup\'s snapshots and prunes; --dry-run and a refusal change nothing', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      writeFileSync(join(volume, 'data.bin'), randomBytes(2 * 1024 * 1024)); // replaced: the old bytes only the old backup holds
      await clockPastSecondOf(ids.at(-1));
      const run = await runCli(['backup', ...common(), '--json'], env);
      expect(run.exitCode, run.stderr).to.equal(0);
      ids.push((JSON.parse(run.stdout) as { backupId: string }).backupId);
    }
    const before = await repositoryBytes();

    const dry = await runCli(['prune', ...common(), '--retention', '1', '--dry-run', '--json'], env);
    expect(dry.exitCode, dry.stderr).to.equal(0);
    const planned = JSON.parse(dry.stdout) as { dryRun: boolean; deleted: { id: string }[]; restic: { snapshotsForgotten: number; backups: string[] }[] };
    expect(planned.deleted.map((d) => d.id)).to.deep.equal([ids[0]]);
    expect(planned.restic).to.have.length(1);
    expect(planned.restic[0]!.backups).to.deep.equal([ids[0]]);
    expect(planned.restic[0]!.snapshotsForgotten).to.be.greaterThan(0);
    expect(await repositoryBytes()).to.equal(before);

    const running = `kf/backups/${newBackupId()}/manifest-in-progress`;
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: running, Body: 'x' }));
    const refused = await runCli(['prune', ...common(), '--retention', '1'], env);
    expect(refused.exitCode).to.equal(1);
    expect(refused.stderr.trim().split('\n').filter((l) => !/^\[\s*\d/.test(l))).to.have.length(1);
    expect(refused.stderr).to.match(/Nothing was pruned: backup kf-\S+ is still being written/);
    expect(await repositoryBytes()).to.equal(before);
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: running }));

    const pruned = await runCli(['prune', ...common(), '--retention', '1'], env);
    expect(pruned.exitCode, pruned.stderr).to.equal(0);
    expect(pruned.stdout).to.include(`deleted ${ids[0]}: beyond retention`);
    expect(pruned.stdout).to.match(new RegExp(`^restic s3://${BUCKET}/kf/restic/${namespace}: \\d+ snapshot\\(s\\) forgotten of ${ids[0]}, .+ freed`, 'm'));
    expect(before - await repositoryBytes()).to.be.greaterThan(1.8 * 1024 * 1024);
    expect(pruned.stdout + pruned.stderr).to.not.include('a passphrase');
  });
});
