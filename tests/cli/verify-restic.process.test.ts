// `kubeflow-upgrader verify` of a backup made with --mover-engine restic, through the real CLI process: the check Jobs
// on the simulated kubelet (Debian's restic), the repository on s3rver. A byte is flipped in a stored data pack as a
// bucket writer would; which pack holds the data is asked of restic itself, run directly (the oracle).
import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { runCli } from './run-cli.ts';
import { namespacePassword } from '../volumes/restic-passwords.ts';

const BUCKET = 'cli-verify-restic';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const PASSPHRASE = 'a passphrase for the cli verify test';

describe('kubeflow-upgrader verify checks the restic repositories (real CLI process)', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let work: string;
  let keyFile: string;
  let env: Record<string, string>;
  let namespace: string;
  let backupId: string;
  const location = () => ['--s3-url', `s3://${BUCKET}/team/prod`, '--path-style'];
  const cli = (args: string[]) => runCli([...args, ...location(), '--kubeconfig', source.cluster.kubeconfigPath, '--encryption-key-file', keyFile], env);
  const verifyJobs: string[] = [];

  before(async () => {
    [s3, source] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 41 })]);
    work = mkdtempSync(join(tmpdir(), 'cli-verify-restic-'));
    keyFile = join(work, 'key');
    writeFileSync(keyFile, `${PASSPHRASE}\n`);
    env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_ENDPOINT_URL: s3.endpoint };
    const claim = source.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!;
    namespace = claim.metadata.namespace!;
    writeFileSync(join(source.kubelet.volumePath(namespace, claim.metadata.name!), 'weights.bin'), randomBytes(400_000));
    source.cluster.api.subscribe((e) => {
      if (e.ref.resource === 'jobs' && e.type === 'ADDED' && e.object.metadata.name?.startsWith('kfu-verify-')) verifyJobs.push(`${e.object.metadata.namespace}/${e.object.metadata.name}`);
    });
    const backup = await cli(['backup', '--mover-engine', 'restic', '--json']);
    expect(backup.exitCode, backup.stderr.slice(-2000)).to.equal(0);
    backupId = (JSON.parse(backup.stdout) as { backupId: string }).backupId;
  });
  after(async () => {
    await Promise.all([s3?.stop(), source?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('an intact backup: its repository ok, checked in the given namespace', async () => {
    const verified = await cli(['verify', backupId, '--job-namespace', 'kubeflow']);
    expect(verified.exitCode, verified.stderr.slice(-2000)).to.equal(0);
    expect(verified.stdout).to.include(`backup ${backupId}: ok`);
    expect(verified.stdout).to.include(`restic repository s3://${BUCKET}/team/prod/restic/${namespace}: ok, structure only (index, snapshots, trees; no data pack read: --read-data full reads them), 1 pinned snapshot(s)`);
    expect(verified.stderr).to.include(`checking the restic repository of ${namespace}`);
    expect(verifyJobs.length).to.be.greaterThan(0);
    expect(verifyJobs.every((j) => j.startsWith('kubeflow/'))).to.equal(true);
    expect(verified.stdout + verified.stderr).to.not.include(PASSPHRASE);
  });

  it('a read-data value restic would refuse is bad input: one sentence, exit 2, no Job', async () => {
    const before = verifyJobs.length;
    const refused = await cli(['verify', backupId, '--read-data', '101%']);
    expect(refused.exitCode).to.equal(2);
    expect(refused.stderr.trim().split('\n')).to.have.length(1);
    expect(refused.stderr).to.match(/^kubeflow-upgrader: verify: --read-data must be none, full, a percentage of the packs \(10%\), a group n\/t with t at most 256 \(1\/5\), or a size \(500M\), not "101%"; usage: /);
    expect(verifyJobs.length).to.equal(before);
  });

  it('a byte flipped in a data pack: the plain verify passes (restic reads no data pack), --read-data full fails naming the pack', async () => {
    // the namespace's repository password, derived in the test from the key file's passphrase (restic opening the
    // repository with it is the proof)
    const password = namespacePassword(PASSPHRASE, namespace);
    const restic = (args: string[]) => execa('restic', ['-o', 's3.bucket-lookup=path', ...args], {
      env: {
        PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password,
        RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/team/prod/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
      },
      extendEnv: false,
    });
    let chosen = { id: '', length: 0 };
    for (const index of (await restic(['list', 'index'])).stdout.trim().split('\n')) {
      const parsed = JSON.parse((await restic(['cat', 'index', index])).stdout) as { packs: { id: string; blobs: { type: string; length: number }[] }[] };
      for (const pack of parsed.packs) for (const blob of pack.blobs) if (blob.type === 'data' && blob.length > chosen.length) chosen = { id: pack.id, length: blob.length };
    }
    const folder = join(s3.directory, BUCKET, 'team', 'prod', 'restic', namespace, 'data', chosen.id.slice(0, 2));
    const file = join(folder, readdirSync(folder).find((f) => f.startsWith(chosen.id) && f.endsWith('object'))!);
    const bytes = readFileSync(file);
    bytes[64] = bytes[64]! ^ 0x01;
    writeFileSync(file, bytes);

    const plain = await cli(['verify', backupId]);
    expect(plain.exitCode, 'restic check without --read-data does not read data packs').to.equal(0);

    const full = await cli(['verify', backupId, '--read-data', 'full', '--json']);
    expect(full.exitCode).to.equal(1);
    const report = JSON.parse(full.stdout) as { status: string; resticRepositories: Array<{ status: string; problem: string }>; problems: Array<{ message: string }> };
    expect(report.status).to.equal('corrupt');
    expect(report.resticRepositories[0]).to.include({ status: 'damaged', problem: `pack ${chosen.id.slice(0, 8)} does not match its hash (its bytes were changed or damaged in the bucket)` });
    expect(report.problems.map((p) => p.message)).to.deep.equal([
      `The restic repository of namespace ${namespace} (s3://${BUCKET}/team/prod/restic/${namespace}) is damaged: pack ${chosen.id.slice(0, 8)} does not match its hash (its bytes were changed or damaged in the bucket).`,
    ]);
  });
});
