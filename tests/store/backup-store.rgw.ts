// The BackupStore contract (backup-store-contract.ts) on a real Ceph RADOS Gateway (tests/support/rgw/server.ts), the
// S3 store of Ceph-backed Charmed Kubeflow deployments, through the product's own client (openObjectStore: the
// client settings a backup uses, checksums only when an operation needs one). `npm run test:rgw`.
import { S3BackupStore } from '../../src/store/backup-store.ts';
import { openObjectStore } from '../../src/store/open.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { describeBackupStoreContract } from './backup-store-contract.ts';
import { rgwSettings } from '../support/rgw/settings.ts';

const BUCKET = 'kf-backups';
let rgw: RgwHandle | undefined;

describeBackupStoreContract({
  name: 'S3BackupStore on radosgw',
  async before() {
    rgw = await startRgw({ buckets: [BUCKET] });
  },
  async after() {
    await rgw?.stop();
  },
  objects: (location) => openObjectStore({ ...rgwSettings(rgw!, BUCKET), path: location }, { maxAttempts: 1 }),
  store: (objects) => new S3BackupStore(objects as ObjectStore),
});
