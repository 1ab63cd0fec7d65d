// One contract, two backends: every case of the BackupStore contract (backup-store-contract.ts) runs against the S3
// backup store on a real s3rver and against the in-memory one, so engine tests that use the memory store rely on nothing
// S3 would not do. The same contract runs on a real radosgw in backup-store.rgw.ts (`npm run test:rgw`).
import { MemoryBackupStore, S3BackupStore } from '../../src/store/backup-store.ts';
import { MemoryObjects } from '../../src/store/memory-objects.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { BUCKET, startStore } from '../archive/fixtures.ts';
import { describeBackupStoreContract, type Backend } from './backup-store-contract.ts';

let server: S3ServerHandle | undefined;
let client: ObjectStore['client'];

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
    name: 'MemoryBackupStore',
    objects: (location) => new MemoryObjects({ bucket: BUCKET, prefix: location }),
    store: (objects) => new MemoryBackupStore(objects as MemoryObjects),
  },
];

for (const backend of backends) describeBackupStoreContract(backend);
