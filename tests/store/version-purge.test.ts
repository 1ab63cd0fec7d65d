// What prune asks of a versioned bucket once backups are gone: the old versions nothing retains are deleted by version
// id, a retained one is never asked to go, and a delete marker goes only once no version of its key is left (else what
// it hides would come back). The port here answers from a list of versions and retention dates the test writes out, as
// ListObjectVersions and HeadObject would (AWS S3 API reference; ceph/ceph src/rgw/rgw_rest_s3.cc
// RGWListBucket_ObjStore_S3 with versions); it models no S3 rule, and it records every delete asked of it.
import { expect } from 'chai';
import { versionTable, type VersionRow } from './version-table.ts';
import { purgeVersions } from '../../src/store/version-purge.ts';

const now = new Date('2026-12-07T12:00:00.000Z');
const future = new Date('2026-12-08T00:00:00.000Z');
const past = new Date('2026-12-07T00:00:00.000Z');

type Row = VersionRow;
const port = (rows: Row[]) => versionTable(rows, now, 10);

describe('store/version-purge: old versions go once nothing retains them', () => {
  it('a pack restic pruned (a delete marker over a version whose retention ended) goes whole', async () => {
    const p = port([{ key: 'restic/a/data/00/p1', id: 'm', latest: true, marker: true }, { key: 'restic/a/data/00/p1', id: 'v1', size: 100, until: past }]);
    const outcome = await purgeVersions(p, 'restic/', now, { includeCurrent: false });
    expect(p.deleted).to.deep.equal(['restic/a/data/00/p1@v1', 'restic/a/data/00/p1@m']);
    expect(outcome).to.deep.include({ versionsDeleted: 1, markersDeleted: 1, bytesFreed: 100 });
  });

  it('a pack restic pruned while a later backup still retains its version: the version and its marker stay', async () => {
    const p = port([{ key: 'restic/a/data/00/p2', id: 'm', latest: true, marker: true }, { key: 'restic/a/data/00/p2', id: 'v1', size: 100, until: future }]);
    const outcome = await purgeVersions(p, 'restic/', now, { includeCurrent: false });
    expect(p.deleted).to.deep.equal([]);
    expect(outcome.retained).to.deep.equal({ versions: 1, bytes: 100, until: future });
  });

  it('the current version stays unless asked for; the old ones under it go, retained ones excepted', async () => {
    const rows: Row[] = [
      { key: 'backups/kf-1/kubeflow-upgrader-running.json', id: 'v3', latest: true },
      { key: 'backups/kf-1/kubeflow-upgrader-running.json', id: 'v2' },
      { key: 'backups/kf-1/kubeflow-upgrader.json', id: 'forged', latest: true },
      { key: 'backups/kf-1/kubeflow-upgrader.json', id: 'original', until: future },
    ];
    const p = port(rows);
    await purgeVersions(p, 'backups/', now, { includeCurrent: false });
    expect(p.deleted).to.deep.equal(['backups/kf-1/kubeflow-upgrader-running.json@v2']);
  });

  it('a backup folder prune deletes: every version, current ones included, but never one still retained', async () => {
    const p = port([
      { key: 'backups/kf-1/velero-backup.json', id: 'm', latest: true, marker: true },
      { key: 'backups/kf-1/velero-backup.json', id: 'v1', until: past },
      { key: 'backups/kf-1/kf-1.tar.gz', id: 'v1', latest: true, until: past },
      { key: 'backups/kf-1/volumes/ns/pvc/file', id: 'v1', latest: true, until: future },
    ]);
    const outcome = await purgeVersions(p, 'backups/kf-1/', now, { includeCurrent: true });
    expect(p.deleted).to.deep.equal(['backups/kf-1/velero-backup.json@v1', 'backups/kf-1/velero-backup.json@m', 'backups/kf-1/kf-1.tar.gz@v1']);
    expect(outcome.retained.versions).to.equal(1);
  });

  it("a delete marker that is not the newest goes at once; a removed lock file's version and marker go", async () => {
    const p = port([
      { key: 'restic/a/keys/k', id: 'v2', latest: true, until: future },
      { key: 'restic/a/keys/k', id: 'old-marker', marker: true },
      { key: 'restic/a/locks/l', id: 'm', latest: true, marker: true },
      { key: 'restic/a/locks/l', id: 'v1' },
    ]);
    await purgeVersions(p, 'restic/', now, { includeCurrent: false });
    expect(p.deleted).to.deep.equal(['restic/a/keys/k@old-marker', 'restic/a/locks/l@v1', 'restic/a/locks/l@m']);
  });
});
