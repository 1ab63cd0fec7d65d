// The object store for a set of S3 settings: the client (CA chain, addressing style, region) and the location prefix.
import { createS3Client, type S3ClientOptions } from './s3-client.ts';
import { ObjectStore } from './objects.ts';
import type { S3Settings } from './settings.ts';

export function openObjectStore(settings: S3Settings, options: S3ClientOptions = {}): ObjectStore {
  return new ObjectStore({
    client: createS3Client(settings, options),
    bucket: settings.bucket,
    prefix: settings.path,
    ...(settings.storageClass ? { storageClass: settings.storageClass } : {}),
  });
}
