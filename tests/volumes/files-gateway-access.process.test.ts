// The plain-file gateway's access rules (files-gateway-access.ts) on s3rver, the fast tests' S3 server.
import { startS3Server } from '../support/s3/server.ts';
import { describeFilesGatewayAccess } from './files-gateway-access.ts';

describeFilesGatewayAccess('s3rver', (bucket) => startS3Server({ buckets: [bucket] }));
