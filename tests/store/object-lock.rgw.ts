// Object Lock on a real radosgw, through the product's own S3 client (createS3Client): the behaviour issue #45's
// backup-immutability is to be built on, pinned down before it is (nothing in src/ writes retention yet). radosgw 16
// enforces retention on object versions (ceph/ceph src/rgw/rgw_op.cc, RGWDeleteObj and RGWPutObjRetention: "forbidden
// by object lock", "shortens an existing retention period"); a bucket has Object Lock only if it was created with it
// (src/rgw/rgw_rest_s3.cc, RGWCreateBucket_ObjStore_S3 x-amz-bucket-object-lock-enabled). What the design must take
// from it, each a case below:
// - the bucket check: GetObjectLockConfiguration answers Enabled, or 404 ObjectLockConfigurationNotFoundError;
// - a plain DeleteObject (what prune's folder delete sends) "succeeds" under retention by adding a delete marker: the
//   backup vanishes from listings while its retained version stays, readable by version id; so prune must work on
//   versions, and a restore can find a hidden backup again;
// - deleting a retained version is refused AccessDenied in COMPLIANCE mode, bypass or not; in GOVERNANCE mode only
//   with x-amz-bypass-governance-retention;
// - retention can be extended (as kept backups' shared restic packs need) and never shortened; once it has passed,
//   the version can be deleted.
// `npm run test:rgw`.
import { expect } from 'chai';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectLockConfigurationCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectRetentionCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/store/s3-client.ts';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { rgwSettings } from '../support/rgw/settings.ts';

const LOCKED = 'locked-backups';
const PLAIN = 'plain-backups';

/** The S3 code and HTTP status a refused request answered. */
async function refusal(work: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  const error = await work.then(() => undefined, (e: unknown) => e as Error & { $metadata?: { httpStatusCode?: number } });
  expect(error, 'the request was refused').to.be.instanceOf(Error);
  return { name: error!.name, status: error!.$metadata?.httpStatusCode };
}

describe('store: Object Lock on radosgw, as backup-immutability is to rely on it', function () {
  this.timeout(120_000);
  let rgw: RgwHandle;
  let client: S3Client;
  const inAnHour = () => new Date(Date.now() + 3_600_000);
  const put = (key: string, mode: 'COMPLIANCE' | 'GOVERNANCE', until: Date) =>
    client.send(new PutObjectCommand({ Bucket: LOCKED, Key: key, Body: Buffer.from(`bytes of ${key}`), ObjectLockMode: mode, ObjectLockRetainUntilDate: until }));

  before(async () => {
    rgw = await startRgw({ buckets: [PLAIN], objectLockBuckets: [LOCKED] });
    client = createS3Client(rgwSettings(rgw, LOCKED), { maxAttempts: 1 });
  });
  after(async () => {
    client?.destroy();
    await rgw?.stop();
  });

  it('tells a bucket created with Object Lock from one without, and refuses retention on the latter', async () => {
    expect((await client.send(new GetObjectLockConfigurationCommand({ Bucket: LOCKED }))).ObjectLockConfiguration?.ObjectLockEnabled).to.equal('Enabled');
    expect(await refusal(client.send(new GetObjectLockConfigurationCommand({ Bucket: PLAIN })))).to.deep.equal({ name: 'ObjectLockConfigurationNotFoundError', status: 404 });
    expect(await refusal(client.send(new PutObjectCommand({ Bucket: PLAIN, Key: 'x', Body: Buffer.from('x'), ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: inAnHour() }))))
      .to.deep.equal({ name: 'InvalidRequest', status: 400 });
  });

  it('COMPLIANCE: a plain delete only hides the object behind a delete marker; its version cannot be deleted, bypass or not', async () => {
    const written = await put('backups/kf-1/velero-backup.json', 'COMPLIANCE', inAnHour());
    expect(written.VersionId).to.be.a('string');
    const head = await client.send(new HeadObjectCommand({ Bucket: LOCKED, Key: 'backups/kf-1/velero-backup.json' }));
    expect(head.ObjectLockMode).to.equal('COMPLIANCE');
    const hidden = await client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: 'backups/kf-1/velero-backup.json' }));
    expect(hidden.DeleteMarker).to.equal(true);
    expect(await refusal(client.send(new GetObjectCommand({ Bucket: LOCKED, Key: 'backups/kf-1/velero-backup.json' })))).to.deep.equal({ name: 'NoSuchKey', status: 404 });
    const kept = await client.send(new GetObjectCommand({ Bucket: LOCKED, Key: 'backups/kf-1/velero-backup.json', VersionId: written.VersionId }));
    expect(await kept.Body!.transformToString()).to.equal('bytes of backups/kf-1/velero-backup.json');
    for (const bypass of [false, true]) {
      expect(await refusal(client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: 'backups/kf-1/velero-backup.json', VersionId: written.VersionId, BypassGovernanceRetention: bypass }))))
        .to.deep.equal({ name: 'AccessDenied', status: 403 });
    }
    // the delete marker itself is no retained version: removing it brings the object back
    await client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: 'backups/kf-1/velero-backup.json', VersionId: hidden.VersionId }));
    expect((await client.send(new HeadObjectCommand({ Bucket: LOCKED, Key: 'backups/kf-1/velero-backup.json' }))).VersionId).to.equal(written.VersionId);
  });

  it('retention is extended, never shortened', async () => {
    const written = await put('restic/alice/data/00/pack', 'COMPLIANCE', inAnHour());
    const target = { Bucket: LOCKED, Key: 'restic/alice/data/00/pack', VersionId: written.VersionId };
    expect(await refusal(client.send(new PutObjectRetentionCommand({ ...target, Retention: { Mode: 'COMPLIANCE', RetainUntilDate: new Date(Date.now() + 60_000) } }))))
      .to.deep.equal({ name: 'AccessDenied', status: 403 });
    const later = new Date(Date.now() + 7_200_000);
    await client.send(new PutObjectRetentionCommand({ ...target, Retention: { Mode: 'COMPLIANCE', RetainUntilDate: later } }));
    const head = await client.send(new HeadObjectCommand(target));
    expect(Math.abs(head.ObjectLockRetainUntilDate!.getTime() - later.getTime())).to.be.below(1_000);
  });

  it('GOVERNANCE: a version is deleted only with the bypass header', async () => {
    const written = await put('backups/kf-2/manifest', 'GOVERNANCE', inAnHour());
    const version = { Bucket: LOCKED, Key: 'backups/kf-2/manifest', VersionId: written.VersionId };
    expect(await refusal(client.send(new DeleteObjectCommand(version)))).to.deep.equal({ name: 'AccessDenied', status: 403 });
    await client.send(new DeleteObjectCommand({ ...version, BypassGovernanceRetention: true }));
    const left = await client.send(new ListObjectVersionsCommand({ Bucket: LOCKED, Prefix: 'backups/kf-2/' }));
    expect(left.Versions ?? []).to.deep.equal([]);
  });

  it('once the retain-until date has passed, the version can be deleted', async () => {
    const until = new Date(Date.now() + 2_000);
    const written = await put('backups/kf-3/manifest', 'COMPLIANCE', until);
    const version = { Bucket: LOCKED, Key: 'backups/kf-3/manifest', VersionId: written.VersionId };
    expect(await refusal(client.send(new DeleteObjectCommand(version)))).to.deep.equal({ name: 'AccessDenied', status: 403 });
    // the sign is the clock passing the date the server holds (radosgw compares it with its own clock, this machine's)
    while (Date.now() <= until.getTime() + 1_000) await new Promise((resolve) => setTimeout(resolve, until.getTime() + 1_001 - Date.now()));
    await client.send(new DeleteObjectCommand(version));
    expect((await client.send(new ListObjectVersionsCommand({ Bucket: LOCKED, Prefix: 'backups/kf-3/' }))).Versions ?? []).to.deep.equal([]);
  });
});
