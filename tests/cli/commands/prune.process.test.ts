// The prune command (src/cli/commands/prune.ts) as a user runs it: bin/kubeflow-upgrader.js in its own process against
// the embedded cluster with the simulated kubelet (restic Jobs run Debian's restic) and s3rver. Backups made by the
// CLI's restic mover; prune --retention 1 forgets the older ones' snapshots and prunes the repository, --dry-run
// changes nothing, a real backup stopped half-way refuses it in one line on stderr (exit 1) until it has finished, and
// marker copies in folders named for tomorrow (a bucket writer without the key) delete no real backup.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { execa } from 'execa';
import { startS3Server, type S3ServerHandle } from '../../support/s3/server.ts';
import { clockPastSecondOf } from '../../support/backup-ids.ts';
import { startKubeletCluster, type KubeletCluster } from '../../volumes/helpers.ts';
import { BIN, runCli } from '../run-cli.ts';
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

  it('forgets the older backups\' snapshots and prunes; --dry-run, and a real backup stopped half-way, change nothing', async () => {
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

    // a real backup, stopped (SIGSTOP to the CLI's process group) once its run record is in the bucket
    await clockPastSecondOf(ids.at(-1));
    const backup = execa(process.execPath, [BIN, 'backup', ...common(), '--json'], {
      reject: false, detached: true, extendEnv: false, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    });
    const recordKey = async () => {
      const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'kf/backups/' }));
      return (page.Contents ?? []).map((o) => o.Key!).find((k) => k.endsWith('/kubeflow-upgrader-running.json'));
    };
    let record: string | undefined;
    for (const deadline = Date.now() + 120_000; !(record = await recordKey()) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 50));
    expect(record, 'the backup wrote its run record').to.be.a('string');
    process.kill(-backup.pid!, 'SIGSTOP');
    const stopped = record!.split('/')[2]!;
    try {
      const refused = await runCli(['prune', ...common(), '--retention', '1'], env);
      expect(refused.exitCode).to.equal(1);
      expect(refused.stderr.trim().split('\n').filter((l) => !/^\[\s*\d/.test(l))).to.have.length(1);
      expect(refused.stderr).to.match(new RegExp(`Nothing was pruned: backup ${stopped} is being written \\(started \\S+; its run record holds until (\\S+)\\), and pruning a restic repository needs restic's exclusive lock; run kubeflow-upgrader prune again once that backup has finished, or after \\1 if it was stopped\\.`));
      expect(await repositoryBytes()).to.equal(before);
    } finally {
      process.kill(-backup.pid!, 'SIGCONT');
    }
    const finished = await backup;
    expect(finished.exitCode, String(finished.stderr)).to.equal(0);
    ids.push((JSON.parse(String(finished.stdout)) as { backupId: string }).backupId);
    expect(ids[2]).to.equal(stopped);

    const pruned = await runCli(['prune', ...common(), '--retention', '1'], env);
    expect(pruned.exitCode, pruned.stderr).to.equal(0);
    expect(pruned.stdout).to.include(`deleted ${ids[0]}: beyond retention`);
    expect(pruned.stdout).to.include(`deleted ${ids[1]}: beyond retention`);
    expect(pruned.stdout).to.match(new RegExp(`^restic s3://${BUCKET}/kf/restic/${namespace}: \\d+ snapshot\\(s\\) forgotten of ${ids[0]}, ${ids[1]}, .+ freed`, 'm'));
    expect(before - await repositoryBytes()).to.be.greaterThan(1.8 * 1024 * 1024);
    expect(pruned.stdout + pruned.stderr).to.not.include('a passphrase');
  });

  it('marker copies in folders named for tomorrow delete no real backup; they are named, and go with --delete-unauthenticated', async () => {
    const real: string[] = [];
    for (let i = 0; i < 2; i++) {
      await clockPastSecondOf(real.at(-1));
      const run = await runCli(['backup', ...common(), '--json', '--no-volumes'], env);
      expect(run.exitCode, run.stderr).to.equal(0);
      real.push((JSON.parse(run.stdout) as { backupId: string }).backupId);
    }
    const marker = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `kf/backups/${real[1]}/velero-backup.json` }))).Body!.transformToByteArray();
    const tomorrow = new Date(Date.now() + 24 * 3_600_000);
    const forged = [newBackupId(tomorrow), newBackupId(new Date(tomorrow.getTime() + 60_000))].sort();
    for (const id of forged) await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `kf/backups/${id}/velero-backup.json`, Body: marker }));
    const pruned = await runCli(['prune', ...common(), '--retention', '2', '--json'], env);
    expect(pruned.exitCode, pruned.stderr).to.equal(0);
    const outcome = JSON.parse(pruned.stdout) as { deleted: { id: string }[]; kept: { id: string; why: string }[]; untrusted: { id: string; why: string }[] };
    expect(outcome.kept.map((k) => k.id)).to.deep.equal([real[1], real[0]]);
    expect(outcome.untrusted.map((u) => u.id).sort()).to.deep.equal(forged);
    expect(outcome.deleted.map((d) => d.id)).to.not.include.members(real);
    const asked = await runCli(['prune', ...common(), '--retention', '2', '--delete-unauthenticated'], env);
    expect(asked.exitCode, asked.stderr).to.equal(0);
    for (const id of forged) expect(asked.stdout).to.include(`deleted ${id}: not authenticated`);
    for (const id of real) expect(asked.stdout).to.include(`kept ${id}: `);
  });
});
