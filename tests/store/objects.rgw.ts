// The object store (src/store/objects.ts) on a real radosgw where s3rver cannot stand in: s3rver has no
// ListMultipartUploads (it answers NotImplemented), so prune's sweep of unfinished uploads is seen on a real S3 here
// only. `npm run test:rgw`.
import { expect } from 'chai';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { openObjectStore } from '../../src/store/open.ts';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { rgwSettings } from '../support/rgw/settings.ts';

const BUCKET = 'kf-backups';
const KEY = 'kf/backups/kf-20250301-120000-abcdef/kf-20250301-120000-abcdef.tar.gz';

describe('store/objects on radosgw: the sweep of unfinished multipart uploads', function () {
  this.timeout(120_000);
  let rgw: RgwHandle;
  let raw: S3Client;
  before(async () => {
    rgw = await startRgw({ buckets: [BUCKET] });
    raw = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED' });
  });
  after(async () => {
    raw?.destroy();
    await rgw?.stop();
  });

  it('lists an upload left unfinished with its start time: one started after the cut-off is left, a dry run counts it, the sweep aborts it', async () => {
    const created = await raw.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: KEY }));
    await raw.send(new UploadPartCommand({ Bucket: BUCKET, Key: KEY, UploadId: created.UploadId, PartNumber: 1, Body: Buffer.from('half a tarball') }));
    const pending = async () => ((await raw.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: 'kf/backups/' }))).Uploads ?? []).map((u) => u.UploadId);
    const store = openObjectStore(rgwSettings(rgw, BUCKET, 'kf'), { maxAttempts: 1 });
    try {
      const later = new Date(Date.now() + 60_000);
      expect(await store.abortUploadsUnder('backups/', new Date(Date.now() - 3_600_000), false)).to.equal(0);
      expect(await store.abortUploadsUnder('backups/', later, true)).to.equal(1);
      expect(await pending()).to.deep.equal([created.UploadId]);
      expect(await store.abortUploadsUnder('backups/', later, false)).to.equal(1);
      expect(await pending()).to.deep.equal([]);
    } finally {
      store.client.destroy();
    }
  });
});
