// One contract, three backends: every case of the BackupStore contract (backup-store-contract.ts) runs against the S3
// backup store on a real s3rver, on s3rver answering as Ceph's radosgw (through the product's own client, as on a real
// radosgw in backup-store.rgw.ts, `npm run test:rgw`) and against the in-memory one, so engine tests that use the memory
// store rely on nothing S3 would not do.
import { MemoryBackupStore, S3BackupStore } from '../../src/store/backup-store.ts';
import { MemoryObjects } from '../../src/store/memory-objects.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { openObjectStore } from '../../src/store/open.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { BUCKET, startStore } from '../archive/fixtures.ts';
import { describeBackupStoreContract, type Backend } from './backup-store-contract.ts';

let server: S3ServerHandle | undefined;
let client: ObjectStore['client'];
let asRadosgw: S3ServerHandle | undefined;

const backends: Backend[] = [
  {
    name: 'S3BackupStore on s3rver',
    async before() {
      ({ server, client } = await startStore());
    },
    async after() {
      await server?.stop();
    },
    objects: (location) => new ObjectStore({ client, bucket: BUCKET, prefix: location }),
    store: (objects) => new S3BackupStore(objects as ObjectStore),
  },
  {
    name: 'S3BackupStore on s3rver answering as radosgw',
    async before() {
      asRadosgw = await startS3Server({ buckets: [BUCKET], radosgw: true });
    },
    async after() {
      await asRadosgw?.stop();
    },
    objects: (location) => openObjectStore({
      endpoint: asRadosgw!.endpoint, region: 'default', accessKey: asRadosgw!.accessKeyId, secretKey: asRadosgw!.secretAccessKey, bucket: BUCKET, path: location, uriStyle: 'path',
    }, { maxAttempts: 1 }),
    store: (objects) => new S3BackupStore(objects as ObjectStore),
  },
  {
    name: 'MemoryBackupStore',
    objects: (location) => new MemoryObjects({ bucket: BUCKET, prefix: location }),
    store: (objects) => new MemoryBackupStore(objects as MemoryObjects),
  },
];

for (const backend of backends) describeBackupStoreContract(backend);
