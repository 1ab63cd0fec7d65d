// prune-backups and the control-plane restic repository: a deleted backup's control-plane snapshots (pinned in its
// manifest's control-plane entries with encryption-key) are forgotten in the repository `_control-plane`, beside its
// volume snapshots, less any a kept backup pins too; a backup of plain control-plane files pins nothing there. Over the
// product's in-memory store with hand-written manifests and a recording stand-in for the restic Jobs.
import { expect } from 'chai';
import { pruneBackups } from '../../src/prune/engine.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { recordingRepositories } from './recording-repositories.ts';

const snap = (n: number) => n.toString(16).padStart(64, '0');
const NOW = new Date('2026-12-02T12:00:00Z');
const REPOSITORY = 'kf/restic/_control-plane';

/** `controlPlane`: the snapshots of kfp-db and of MinIO bucket mlpipeline, or undefined for plain files. */
async function backup(store: MemoryBackupStore, id: string, volume: number, controlPlane: [number, number] | undefined): Promise<void> {
  const keys = backupKeys(id);
  const pin = (n: number) => (controlPlane ? { restic: { repository: REPOSITORY, snapshot: snap(n) } } : {});
  const manifest = {
    formatVersion: 1, veleroFormatVersion: '1.1.0', tool: { name: 'kubeflow-upgrader', version: 'test' }, backupId: id,
    created: '2026-12-01T10:00:00.000Z', completed: '2026-12-01T10:00:00.000Z', scope: { action: 'backup-state' }, counts: {}, objects: 0, bytes: 0,
    checksums: { algorithm: 'sha256', tarball: '0'.repeat(64), entries: {}, files: {} }, encryption: null,
    volumes: [{ namespace: 'alice', pvc: 'ws', key: 'restic/alice', files: 1, bytes: 10, restic: { repository: 'kf/restic/alice', snapshot: snap(volume) } }],
    extras: {
      controlPlane: {
        entries: [
          { part: 'kfp-db', database: 'mlpipeline', key: controlPlane ? REPOSITORY : `kf/backups/${id}/control-plane/mysql/mlpipeline.sql.gz`, bytes: 10, sha256: 'a'.repeat(64), tool: 'mysqldump', rclone: 'restic 0.14.0', ...pin(controlPlane?.[0] ?? 0) },
          { part: 'minio', bucket: 'mlpipeline', keyPrefix: controlPlane ? REPOSITORY : `kf/backups/${id}/control-plane/minio/mlpipeline/`, objects: 1, bytes: 10, listingSha256: 'b'.repeat(64), tool: 'rclone', ...pin(controlPlane?.[1] ?? 0) },
        ],
      },
    },
  };
  await store.objects.put(keys.manifest, JSON.stringify(manifest));
  await store.objects.put(keys.marker, '{}');
}

const repositories = () => recordingRepositories();

const movers = { list: async () => [], delete: async () => undefined };

describe('prune: the control-plane restic repository', () => {
  const ids = ['kf-20261201-090000-aaaaaa', 'kf-20261201-100000-bbbbbb', 'kf-20261201-110000-cccccc', 'kf-20261201-120000-dddddd'];

  it("forgets a deleted backup's control-plane snapshots in _control-plane, keeping those a kept backup pins", async () => {
    const store = new MemoryBackupStore();
    await backup(store, ids[0]!, 1, undefined); // plain control-plane files: nothing pinned there
    await backup(store, ids[1]!, 2, [10, 11]);
    // the MinIO bucket unchanged since: restic made no new snapshot content, but each backup pins its own id
    await backup(store, ids[2]!, 3, [12, 11]);
    await backup(store, ids[3]!, 4, [13, 14]);
    const { calls, restic } = repositories();
    const outcome = await pruneBackups(store, { retention: 2, dryRun: false, now: NOW, movers, restic });
    expect(outcome.deleted.map((d) => d.id)).to.have.members([ids[0], ids[1]]);
    expect(calls).to.have.deep.members([
      { namespace: 'alice', mode: 'prune', snapshots: [snap(1), snap(2)] },
      { namespace: '_control-plane', mode: 'prune', snapshots: [snap(10)] },
    ]);
    expect(outcome.restic.find((r) => r.namespace === '_control-plane')?.backups).to.deep.equal([ids[1]]);
  });
});
