// What list and verify say about retained versions someone hid or wrote over, and what recover removes. The port
// answers from versions and retention dates the test writes out, as ListObjectVersions and HeadObject would (AWS S3
// API reference; ceph/ceph src/rgw/rgw_rest_s3.cc); it models no S3 rule, and records every delete asked of it.
import { expect } from 'chai';
import { versionTable, type VersionRow } from './version-table.ts';
import { coveredReport, coveredSentence, findCovered, uncover } from '../../src/store/version-reveal.ts';

const now = new Date('2026-12-07T12:00:00.000Z');
const future = new Date('2026-12-08T00:00:00.000Z');
const past = new Date('2026-12-07T00:00:00.000Z');

type Row = VersionRow;
const port = (rows: Row[]) => versionTable(rows, now, 1);

const attacked: Row[] = [
  // a backup's marker hidden by a plain delete
  { key: 'backups/kf-1/velero-backup.json', id: 'm', latest: true, marker: true },
  { key: 'backups/kf-1/velero-backup.json', id: 'v1', until: future },
  // its manifest written over
  { key: 'backups/kf-1/kubeflow-upgrader.json', id: 'forged', latest: true },
  { key: 'backups/kf-1/kubeflow-upgrader.json', id: 'v1', until: future },
  // a pack hidden: by restic prune or by a key holder, the bucket cannot tell
  { key: 'restic/ns/data/00/p', id: 'm', latest: true, marker: true },
  { key: 'restic/ns/data/00/p', id: 'v1', until: future },
  // an old version no longer retained: nothing to recover
  { key: 'backups/kf-0/velero-backup.json', id: 'm', latest: true, marker: true },
  { key: 'backups/kf-0/velero-backup.json', id: 'v1', until: past },
  // a current retained object: untouched
  { key: 'restic/ns/config', id: 'v1', latest: true, until: future },
];

describe('store/version-reveal: retained versions hidden or written over', () => {
  it('finds each retained version that is not current, and tells the backups folder from the repositories', async () => {
    const report = coveredReport(await findCovered(port(attacked), '', now));
    expect(report).to.deep.equal({ hidden: 1, overwritten: 1, repositoryHidden: 1, hiddenBackups: ['kf-1'], until: future });
  });

  it('a listing counts what restic prune also leaves only once verify found the repository damaged', () => {
    const report = { hidden: 0, overwritten: 0, repositoryHidden: 3, hiddenBackups: [] };
    expect(coveredSentence(report, 'run recover-backups')).to.equal(undefined);
    expect(coveredSentence({ ...report, until: future }, 'run recover-backups', true)).to.equal(
      '3 object(s) still under Object Lock retention are hidden by a delete marker and 0 written over, so someone holding the bucket key deleted or rewrote them; their retained versions, kept until 2026-12-08T00:00:00.000Z at the latest, become current again: run recover-backups.',
    );
  });

  it('recover removes what lies on top of each retained version, and nothing else', async () => {
    const p = port(attacked);
    const outcome = await uncover(p, await findCovered(p, '', now), now);
    expect(outcome).to.deep.equal({ uncovered: 3, refused: [] });
    expect(p.deleted).to.deep.equal(['backups/kf-1/velero-backup.json@m', 'backups/kf-1/kubeflow-upgrader.json@forged', 'restic/ns/data/00/p@m']);
  });

  it('a version written on top with a retention of its own is named, not removed', async () => {
    const p = port([{ key: 'backups/kf-1/kubeflow-upgrader.json', id: 'forged', latest: true, until: future }, { key: 'backups/kf-1/kubeflow-upgrader.json', id: 'v1', until: future }]);
    const outcome = await uncover(p, await findCovered(p, '', now), now);
    expect(outcome.refused).to.deep.equal([`backups/kf-1/kubeflow-upgrader.json: the version written over it is retained too, until ${future.toISOString()}`]);
    expect(p.deleted).to.deep.equal([]);
  });
});
