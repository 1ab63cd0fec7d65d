// `kubeflow-upgrader backup --previous-encryption-key-file` through the real CLI process: the restic key Job on the
// simulated kubelet (Debian's restic) adds the new key's password to the repository on s3rver before the backup, and
// removes the old one. The oracle is restic itself, run directly with each password (derived in the test): which keys
// open the repository and what it holds.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { runCli } from './run-cli.ts';
import { legacyPassword, namespacePassword } from '../volumes/restic-passwords.ts';

const BUCKET = 'cli-backup-rekey';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const SECRETS = { group: '', resource: 'secrets' };
const OLD_KEY = 'the passphrase the first backups were made with';
const NEW_KEY = 'the passphrase that replaces it from today';

describe('kubeflow-upgrader backup --previous-encryption-key-file adds the new key to the restic repositories (real CLI process)', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let work: string;
  let oldKeyFile: string;
  let newKeyFile: string;
  let env: Record<string, string>;
  let namespace: string;
  let firstSnapshot: string;
  const outputs: string[] = [];
  const rekeyJobs: string[] = [];
  const location = () => ['--s3-url', `s3://${BUCKET}/team/prod`, '--path-style'];
  const cli = async (args: string[]) => {
    const run = await runCli([...args, ...location(), '--kubeconfig', source.cluster.kubeconfigPath, '--mover-engine', 'restic'], env);
    outputs.push(run.stdout, run.stderr);
    return run;
  };
  /** restic run directly on the namespace's repository with its password of `key` */
  const restic = (key: string, args: string[]) => execa('restic', ['-o', 's3.bucket-lookup=path', ...args], {
    env: {
      PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: namespacePassword(key, namespace),
      RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/team/prod/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
    },
    extendEnv: false, reject: false,
  });
  const snapshotIds = async (key: string) => (JSON.parse((await restic(key, ['snapshots', '--json', '--no-lock'])).stdout) as { id: string }[]).map((s) => s.id);
  const bucketFiles = (): string[] => {
    const walk = (dir: string): string[] => readdirSync(dir).flatMap((e) => (statSync(join(dir, e)).isDirectory() ? walk(join(dir, e)) : [join(dir, e)]));
    return walk(join(s3.directory, BUCKET)).sort();
  };

  before(async () => {
    [s3, source] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 43 })]);
    work = mkdtempSync(join(tmpdir(), 'cli-backup-rekey-'));
    oldKeyFile = join(work, 'old-key');
    newKeyFile = join(work, 'new-key');
    writeFileSync(oldKeyFile, `${OLD_KEY}\n`);
    writeFileSync(newKeyFile, `${NEW_KEY}\n`);
    env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_ENDPOINT_URL: s3.endpoint };
    const claim = source.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!;
    namespace = claim.metadata.namespace!;
    writeFileSync(join(source.kubelet.volumePath(namespace, claim.metadata.name!), 'weights.bin'), randomBytes(200_000));
    source.cluster.api.subscribe((e) => {
      if (e.ref.resource === 'jobs' && e.type === 'ADDED' && e.object.metadata.name?.startsWith('kfu-rekey-')) rekeyJobs.push(`${e.object.metadata.namespace}/${e.object.metadata.name}`);
    });
    const first = await cli(['backup', '--encryption-key-file', oldKeyFile, '--json']);
    expect(first.exitCode, first.stderr.slice(-2000)).to.equal(0);
    const written = await snapshotIds(OLD_KEY);
    expect(written, 'the first backup wrote a snapshot under the old key').to.have.length(1);
    firstSnapshot = written[0]!;
  });
  after(async () => {
    await Promise.all([s3?.stop(), source?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('bad input gets one sentence, exit 2, and changes nothing: no Job, no object', async () => {
    const before = bucketFiles();
    const cases: Array<[string[], RegExp]> = [
      [['--previous-encryption-key-file', oldKeyFile], /--previous-encryption-key-file needs --encryption-key-file with the new key/],
      [['--encryption-key-file', newKeyFile, '--previous-encryption-key-file', join(work, 'missing')], /The previous encryption key file .*missing cannot be read/],
      [['--encryption-key-file', oldKeyFile, '--previous-encryption-key-file', oldKeyFile], /holds the same key as --encryption-key-file, so there is no key to change/],
    ];
    for (const [args, sentence] of cases) {
      const refused = await cli(['backup', ...args]);
      expect(refused.exitCode, args.join(' ')).to.equal(2);
      expect(refused.stderr.trim().split('\n'), refused.stderr).to.have.length(1);
      expect(refused.stderr).to.match(sentence);
    }
    expect(rekeyJobs).to.deep.equal([]);
    expect(bucketFiles()).to.deep.equal(before);
  });

  it('adds the new key before the backup and removes the old one: the older snapshot reads back under the new one, and the backup uses it', async () => {
    expect((await restic(NEW_KEY, ['cat', 'config', '--no-lock'])).exitCode, 'the new key does not open the repository yet').to.not.equal(0);
    const run = await cli(['backup', '--encryption-key-file', newKeyFile, '--previous-encryption-key-file', oldKeyFile, '--json', '--job-namespace', 'kubeflow']);
    expect(run.exitCode, run.stderr.slice(-2000)).to.equal(0);
    expect(run.stderr).to.include(`restic repositories: added the new key to namespace ${namespace}; removed the other keys of namespace ${namespace}`);
    // the key change's Job, then the volume step's (which finds the repository open with its own password already)
    expect(rekeyJobs).to.have.length(2);
    for (const job of rekeyJobs) expect(job).to.match(/^kubeflow\/kfu-rekey-/);
    const underNew = await snapshotIds(NEW_KEY);
    expect(underNew, 'the older snapshot and the new backup\'s, one repository').to.have.length(2);
    expect(underNew).to.include(firstSnapshot);
    const old = await restic(OLD_KEY, ['cat', 'config', '--no-lock']);
    expect(old.exitCode, 'the old key no longer opens it').to.not.equal(0);
    expect(old.stderr).to.include('wrong password or no key found');
    expect(JSON.parse((await restic(NEW_KEY, ['key', 'list', '--json', '--no-lock'])).stdout), 'one key left').to.have.length(1);
    const restored = await restic(NEW_KEY, ['dump', '--no-lock', firstSnapshot, '/weights.bin']);
    expect(restored.exitCode, restored.stderr).to.equal(0);
    expect(source.cluster.api.list(SECRETS).filter((s) => s.metadata.name?.startsWith('kfu-rekey-')), 'the Job\'s Secret is deleted').to.deep.equal([]);
  });

  it('a rerun finds the repository already open with the new key and adds nothing', async () => {
    const keysBefore = (await restic(NEW_KEY, ['list', 'keys', '--no-lock'])).stdout;
    const run = await cli(['backup', '--encryption-key-file', newKeyFile, '--previous-encryption-key-file', oldKeyFile]);
    expect(run.exitCode, run.stderr.slice(-2000)).to.equal(0);
    expect(run.stderr).to.include(`restic repositories: namespace ${namespace} already opened with it alone`);
    expect((await restic(NEW_KEY, ['list', 'keys', '--no-lock'])).stdout).to.equal(keysBefore);
  });

  it('a previous key that does not open the repository: one sentence, exit 1, no backup', async () => {
    const wrong = join(work, 'wrong-key');
    writeFileSync(wrong, 'a key nobody ever used\n');
    const other = join(work, 'other-new-key');
    writeFileSync(other, 'yet another new key\n');
    const snapshotsBefore = await snapshotIds(NEW_KEY);
    const run = await cli(['backup', '--encryption-key-file', other, '--previous-encryption-key-file', wrong]);
    expect(run.exitCode).to.equal(1);
    expect(run.stderr).to.include(`The restic repositories of namespace ${namespace} open with neither the previous nor the new encryption key, so nothing was backed up`);
    expect(await snapshotIds(NEW_KEY)).to.deep.equal(snapshotsBefore);
  });

  it('no key and no repository password ever reaches the output or the bucket in clear', () => {
    const secrets = [OLD_KEY, NEW_KEY, 'a key nobody ever used', 'yet another new key'];
    const values = secrets.flatMap((k) => [k, namespacePassword(k, namespace), legacyPassword(k)]);
    for (const text of outputs) for (const value of values) expect(text.includes(value), 'a key in the CLI output').to.equal(false);
    for (const file of bucketFiles()) {
      const bytes = readFileSync(file);
      for (const value of values) expect(bytes.includes(Buffer.from(value)), `a key in ${file}`).to.equal(false);
    }
  });
});
