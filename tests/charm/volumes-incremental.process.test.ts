// Incremental volume backups through the real ./dispatch, on the simulated kubelet (which runs the mover's script with
// this machine's rclone) and s3rver with a request log: a second backup of unchanged volumes sends no file body (every
// object of its volume folders is a server-side copy of the first backup's); a file changed in place at the same size
// and modification time, a deleted, a new empty and a renamed file are found and uploaded, and only they; pruning every
// older backup leaves the newest verifiable and restorable to identical files; the restored volume, backed up from the
// other cluster, reuses only the files whose checksums match.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { readRequestLog, startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { hashTree, startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import type { VolumeEntry } from '../../src/archive/manifest.ts';

const BUCKET = 'incremental';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const KEY_SECRET = 'secret:cta0incrementalkey00000001';

describe('incremental volume backups (real ./dispatch, s3rver request log)', function () {
  this.timeout(300_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let target: KubeletCluster;
  let logDir: string;
  let requestLog: string;
  let namespace: string;
  let pvc: string;
  let volume: string;
  let lastBackupId: string | undefined;

  before(async () => {
    logDir = mkdtempSync(join(tmpdir(), 's3-requests-'));
    requestLog = join(logDir, 'requests.jsonl');
    [charmDir, s3, source, target] = await Promise.all([
      ensureCharmBuilt(), startS3Server({ buckets: [BUCKET], requestLog }),
      startKubeletCluster({ profiles: 1, seed: 23 }), startKubeletCluster({ profiles: 0, seed: 23 }),
    ]);
    const claim = source.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!;
    namespace = claim.metadata.namespace!;
    pvc = claim.metadata.name!;
    volume = source.kubelet.volumePath(namespace, pvc);
    writeFileSync(join(volume, 'weights.bin'), randomBytes(400_000));
    writeFileSync(join(volume, 'config.json'), JSON.stringify({ lr: 0.001, epochs: 10 }));
    writeFileSync(join(volume, 'to-delete.csv'), randomBytes(30_000));
    writeFileSync(join(volume, 'old-name.parquet'), randomBytes(50_000));
    writeFileSync(join(volume, 'untouched.npy'), randomBytes(120_000));
  });
  after(async () => {
    await Promise.all([s3?.stop(), source?.stop(), target?.stop()]);
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  function action(name: string, params: Record<string, unknown>, side: KubeletCluster, config: Record<string, unknown> = {}, key?: string): Promise<DispatchOutcome> {
    const state = emptyState({
      relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params,
      // the plain-file mover's incremental copy is what this file is about
      config: { 'restore-wait-timeout': 60, 'volume-mover-engine': 'rclone', ...config, ...(key ? { 'encryption-key': KEY_SECRET } : {}) },
    });
    if (key) state.secrets[KEY_SECRET] = { revisions: [{ key }] };
    return runDispatch(charmDir, state, { event: `actions/${name}`, env: { KUBECONFIG: side.cluster.kubeconfigPath } });
  }

  async function backup(side: KubeletCluster = source, key?: string): Promise<{ id: string; results: Record<string, string> }> {
    writeFileSync(requestLog, '');
    // prune-backups orders backups by their ids, which name the second each started: one backup per second.
    await clockPastSecondOf(lastBackupId);
    const done = await action('backup-state', { 'include-control-plane': false }, side, {}, key);
    expect(done.state.actionFailure, done.stderr.slice(-2000)).to.equal(undefined);
    lastBackupId = done.state.actionResults['backup-id']!;
    return { id: lastBackupId, results: done.state.actionResults };
  }

  /**
   * The volume-folder writes of backup `id` in the request log: uploads (a body or multipart part), server-side copies
   * and deletes.
   */
  function writes(id: string) {
    const folder = `/${BUCKET}/backups/backups/${id}/volumes/${namespace}/${pvc}/`;
    const all = readRequestLog(requestLog).filter((e) => e.path.startsWith(folder));
    // Through the plain-file gateway (src/volumes/files-gateway.ts) an uploaded file's modification time is set after
    // its body, which rclone's S3 backend does by copying the object onto itself with new metadata (rclone
    // backend/s3/s3.go SetModTime): a metadata write, not a copy of another backup's file.
    const mine = all.filter((e) => (e.method === 'PUT' || e.method === 'POST') && e.copySource?.replace(/^\//, '') !== e.path.replace(/^\//, ''));
    return {
      // one file's upload may be several requests: the gateway streams it as a multipart upload (POST, PUT part, POST)
      uploads: [...new Set(mine.filter((e) => !e.copySource).map((e) => e.path.slice(folder.length)))].sort(),
      copies: mine.filter((e) => e.copySource).map((e) => ({ to: e.path.slice(folder.length), from: e.copySource! })),
      deletes: all.filter((e) => e.method === 'DELETE').map((e) => e.path.slice(folder.length)).sort(),
    };
  }

  /** The files of backup `id`'s copy of the volume, as the bucket lists them. */
  async function storedFiles(id: string): Promise<string[]> {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    try {
      const prefix = `backups/backups/${id}/volumes/${namespace}/${pvc}/`;
      const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
      return (listed.Contents ?? []).map((o) => o.Key!.slice(prefix.length)).sort();
    } finally {
      client.destroy();
    }
  }

  async function manifestEntry(id: string): Promise<VolumeEntry> {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    try {
      const body = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${id}/kubeflow-upgrader.json` }))).Body!.transformToString();
      return (JSON.parse(body) as { volumes: VolumeEntry[] }).volumes.find((v) => v.namespace === namespace && v.pvc === pvc)!;
    } finally {
      client.destroy();
    }
  }

  it('copies unchanged files inside the bucket, uploads exactly the changed ones, and survives pruning of the older backups', async () => {
    const first = await backup();
    const firstWrites = writes(first.id);
    expect(firstWrites.copies, 'nothing to reuse in an empty location').to.have.length(0);
    expect(firstWrites.uploads).to.include.members(['weights.bin', 'config.json', 'untouched.npy']);
    expect(first.results['volume-bytes-reused']).to.equal('0');

    // Nothing changed: no file body is sent, every file is a server-side copy of the first backup's.
    const second = await backup();
    const secondWrites = writes(second.id);
    expect(secondWrites.uploads, 'no upload in the second backup').to.deep.equal([]);
    expect(secondWrites.copies.map((c) => c.to).sort()).to.deep.equal([...hashTree(volume).keys()].sort());
    for (const copy of secondWrites.copies) expect(copy.from.replace(/^\//, '')).to.equal(`${BUCKET}/backups/backups/${first.id}/volumes/${namespace}/${pvc}/${copy.to}`);
    // The earlier copy is listed, never looked up file by file (--copy-dest sent a HEAD there for every file).
    const earlierFolder = `/${BUCKET}/backups/backups/${first.id}/volumes/${namespace}/${pvc}/`;
    expect(readRequestLog(requestLog).filter((e) => e.method === 'HEAD' && e.path.startsWith(earlierFolder))).to.deep.equal([]);
    expect(second.results['volume-bytes-uploaded']).to.equal('0');
    expect(second.results['volume-bytes-reused']).to.equal(second.results['volume-bytes']);
    const secondEntry = await manifestEntry(second.id);
    expect(secondEntry).to.deep.include({ reusedFrom: first.id, bytesUploaded: 0, bytesReused: secondEntry.bytes, filesReused: secondEntry.files });

    // A change an mtime-and-size check would miss: same size, same modification time, other bytes.
    const weights = join(volume, 'weights.bin');
    const { atime, mtime } = statSync(weights);
    writeFileSync(weights, randomBytes(400_000));
    utimesSync(weights, atime, mtime);
    unlinkSync(join(volume, 'to-delete.csv'));
    writeFileSync(join(volume, 'new-empty.txt'), '');
    renameSync(join(volume, 'old-name.parquet'), join(volume, 'new-name.parquet'));
    const expected = hashTree(volume);

    const third = await backup();
    const thirdWrites = writes(third.id);
    expect(thirdWrites.uploads, 'exactly the changed, new and renamed files are uploaded').to.deep.equal(['new-empty.txt', 'new-name.parquet', 'weights.bin']);
    // The second backup's copy is copied whole inside the bucket, then the volume synced onto it: the changed file is
    // uploaded over its copy, and the deleted file and the renamed file's old name are deleted again.
    expect(thirdWrites.copies.map((c) => c.to).sort()).to.deep.equal(['config.json', 'old-name.parquet', 'to-delete.csv', 'untouched.npy', 'weights.bin']);
    expect(thirdWrites.deletes).to.deep.equal(['old-name.parquet', 'to-delete.csv']);
    expect(await storedFiles(third.id), 'the backup holds the volume\'s files and only them').to.deep.equal([...expected.keys()].sort());
    const thirdEntry = await manifestEntry(third.id);
    expect(thirdEntry).to.deep.include({ reusedFrom: second.id, bytesUploaded: 400_000 + 50_000, files: expected.size });

    // backup-retention=1: both older backups, the one the newest copied from among them, are deleted.
    const pruned = await action('prune-backups', {}, source, { 'backup-retention': 1 });
    expect(pruned.state.actionFailure, pruned.stderr.slice(-2000)).to.equal(undefined);
    expect(JSON.stringify(pruned.state.actionResults)).to.include(first.id).and.to.include(second.id);
    const verified = await action('verify-backup', { 'backup-id': third.id }, source);
    expect(verified.state.actionFailure, JSON.stringify(verified.state.actionResults)).to.equal(undefined);

    const restored = await action('restore-state', { 'backup-id': third.id }, target);
    expect(restored.state.actionFailure, restored.stderr.slice(-2000)).to.equal(undefined);
    expect(hashTree(target.kubelet.volumePath(namespace, pvc)), 'sha256 of every file').to.deep.equal(expected);

    // The restored volume, backed up from the other cluster into the same location, is the same data only where the
    // checksums say so: one file changed there at the same size is uploaded, the rest is copied.
    const restoredWeights = join(target.kubelet.volumePath(namespace, pvc), 'weights.bin');
    const before = statSync(restoredWeights);
    writeFileSync(restoredWeights, randomBytes(400_000));
    utimesSync(restoredWeights, before.atime, before.mtime);
    const fromTarget = await backup(target);
    const targetWrites = writes(fromTarget.id);
    expect(targetWrites.uploads).to.deep.equal(['weights.bin']);
    expect(targetWrites.copies.map((c) => c.to).sort()).to.deep.equal([...expected.keys()].sort());
    expect(targetWrites.deletes).to.deep.equal([]);
    expect(await manifestEntry(fromTarget.id)).to.deep.include({ reusedFrom: third.id, bytesUploaded: 400_000 });
  });

  it('with an encryption key, copies only from backups whose HMAC verifies under it', async function () {
    // The backups so far carry no HMAC: under a key they are not trusted as a source, so everything is uploaded.
    const keyed = await backup(source, 'the operator passphrase');
    expect(writes(keyed.id).copies).to.deep.equal([]);
    expect(keyed.results['volume-bytes-reused']).to.equal('0');
    const again = await backup(source, 'the operator passphrase');
    expect(writes(again.id).uploads).to.deep.equal([]);
    expect(await manifestEntry(again.id)).to.deep.include({ reusedFrom: keyed.id, bytesUploaded: 0 });
    // Under another key no earlier backup authenticates: nothing is copied from them.
    const otherKey = await backup(source, 'another passphrase');
    expect(writes(otherKey.id).copies).to.deep.equal([]);
  });
});
