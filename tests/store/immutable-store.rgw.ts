// The backup store with backup-immutability on a real Ceph RADOS Gateway (tests/support/rgw), through the product's
// own client: a backup that fails after its retained tarball went up, and what prune then does with its folder. radosgw
// enforces the retention (ceph/ceph src/rgw/rgw_op.cc RGWDeleteObj), so the oracle is its own listing of versions and
// its HeadObject answer. `npm run test:rgw`.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { HeadObjectCommand, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { S3BackupStore } from '../../src/store/backup-store.ts';
import { openObjectStore } from '../../src/store/open.ts';
import { pruneBackups } from '../../src/prune/engine.ts';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { rgwSettings } from '../support/rgw/settings.ts';

const BUCKET = 'kf-locked-store';
const ID = 'kf-20261207-120000-abcdef';

describe('store: a backup that fails under backup-immutability, on radosgw', function () {
  this.timeout(120_000);
  let rgw: RgwHandle;
  let client: S3Client;

  before(async () => {
    rgw = await startRgw({ objectLockBuckets: [BUCKET] });
    client = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
  });
  after(async () => {
    client?.destroy();
    await rgw?.stop();
  });

  const versions = async (prefix: string) => {
    const page = await client.send(new ListObjectVersionsCommand({ Bucket: BUCKET, Prefix: prefix }));
    return [...(page.Versions ?? []).map((v) => `${v.Key}${v.IsLatest ? '' : ' (old)'}`), ...(page.DeleteMarkers ?? []).map((m) => `${m.Key} (delete marker)`)].sort();
  };

  it('leaves its retained tarball visible and unhidden, its run record gone for good; prune keeps the folder with the date', async () => {
    const store = new S3BackupStore(openObjectStore(rgwSettings(rgw, BUCKET, 'loc'), { maxAttempts: 1 }), { mode: 'COMPLIANCE', seconds: 3_600, text: '1h' });
    const pending = await store.beginBackup(ID, { started: new Date() });
    await pending.uploadTarball(Readable.from([Buffer.from('the archive so far')])).done();
    await pending.abort();
    // the tarball stays current (a plain delete would only have hidden it); the run record is deleted by version
    expect(await versions('loc/backups/')).to.deep.equal([`loc/backups/${ID}/${ID}.tar.gz`]);
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `loc/backups/${ID}/${ID}.tar.gz` }));
    expect(head.ObjectLockMode).to.equal('COMPLIANCE');
    expect(await store.coveredObjects(new Date())).to.deep.equal({ hidden: 0, overwritten: 0, repositoryHidden: 0, hiddenBackups: [] });

    const outcome = await pruneBackups(store, { retention: 1, dryRun: false, incompleteGraceMs: 0 });
    expect(outcome.deleted).to.deep.equal([]);
    expect(outcome.retained).to.deep.equal([{ id: ID, mode: 'COMPLIANCE', until: head.ObjectLockRetainUntilDate }]);
    expect(outcome.kept).to.deep.include({ id: ID, why: `under Object Lock retention (COMPLIANCE) until ${head.ObjectLockRetainUntilDate!.toISOString()}` });
    expect(await versions('loc/backups/')).to.deep.equal([`loc/backups/${ID}/${ID}.tar.gz`]);
  });
});
