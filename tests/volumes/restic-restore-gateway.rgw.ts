// The restore gateway (restic-restore-gateway.ts) on a real Ceph RADOS Gateway (tests/support/rgw/server.ts): its
// ListObjectsV2, HeadObject, lock files and presigned GETs as Ceph answers them. `npm run test:rgw`.
import { startRgw } from '../support/rgw/server.ts';
import { describeRestoreGateway } from './restic-restore-gateway.ts';

describeRestoreGateway('radosgw', async () => {
  const rgw = await startRgw({ buckets: ['restores'] });
  return { endpoint: rgw.endpoint, region: rgw.region, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey, stop: () => rgw.stop() };
});
