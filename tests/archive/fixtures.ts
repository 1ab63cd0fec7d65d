// Shared by the archive and store tests: a real s3rver and an ObjectStore over it; the Kubeflow-like objects are in
// sample-objects.ts (re-exported here), which starts nothing, for the tests that need only them.
import { S3Client } from '@aws-sdk/client-s3';
import { ObjectStore } from '../../src/store/objects.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';

export * from './sample-objects.ts';

export const BUCKET = 'kf-backups';

export function s3ClientFor(server: S3ServerHandle): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    maxAttempts: 1,
  });
}

export async function startStore(prefix = 'cluster-a/kubeflow'): Promise<{ server: S3ServerHandle; store: ObjectStore; client: S3Client }> {
  const server = await startS3Server({ buckets: [BUCKET] });
  const client = s3ClientFor(server);
  return { server, client, store: new ObjectStore({ client, bucket: BUCKET, prefix }) };
}
