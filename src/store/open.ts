// The object store for a set of S3 settings: the client (CA chain, addressing style, region) and the location prefix.
import { createS3Client, type S3ClientOptions } from './s3-client.ts';
import { ObjectStore } from './objects.ts';
import { S3BackupStore } from './backup-store.ts';
import type { S3Settings } from './settings.ts';

export function openObjectStore(settings: S3Settings, options: S3ClientOptions = {}): ObjectStore {
  return new ObjectStore({
    client: createS3Client(settings, options),
    bucket: settings.bucket,
    prefix: settings.path,
    ...(settings.storageClass ? { storageClass: settings.storageClass } : {}),
  });
}

/** The backup store of a location: what every engine and action reads and writes backups through. */
export function openBackupStore(settings: S3Settings, options: S3ClientOptions = {}): S3BackupStore {
  return new S3BackupStore(openObjectStore(settings, options), settings.immutability);
}
