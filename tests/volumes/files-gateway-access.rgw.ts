// The plain-file gateway's access rules (files-gateway-access.ts) on a real Ceph RADOS Gateway
// (tests/support/rgw/server.ts): the listings the gateway's VFS makes, the copies it seeds and the hashes it answers,
// as Ceph gives them. `npm run test:rgw`.
import { startRgw } from '../support/rgw/server.ts';
import { describeFilesGatewayAccess } from './files-gateway-access.ts';

describeFilesGatewayAccess('radosgw', (bucket) => startRgw({ buckets: [bucket] }));
