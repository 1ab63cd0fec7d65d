// Shared by the reliability tests and the soak: a store and a kube client that retry quickly (the policy is the
// product's; only its delays are shortened), the backup request the charm would make, and what the bucket holds.
import { createS3Client } from '../../src/store/s3-client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { backupKeys, backupNameOfFolder, BACKUPS_FOLDER } from '../../src/store/layout.ts';
import type { BackupRequest } from '../../src/backup/engine.ts';
import type { S3Settings } from '../../src/store/settings.ts';
import type { RetrySettings } from '../../src/retry/policy.ts';
import { backupStore } from '../support/backup-store.ts';

export const fastRetry: Partial<RetrySettings> = { baseDelayMs: 5, maxDelayMs: 50, deadlineMs: 20_000, maxAttempts: 10 };

export function s3Settings(endpoint: string, bucket: string, path: string, keys = { accessKey: 'S3RVER', secretKey: 'S3RVER' }): S3Settings {
  return { endpoint, bucket, path, region: 'us-east-1', uriStyle: 'path', ...keys };
}

export function storeAt(endpoint: string, bucket: string, path: string, retry: Partial<RetrySettings> = fastRetry): ObjectStore {
  const settings = s3Settings(endpoint, bucket, path);
  return new ObjectStore({ client: createS3Client(settings, { retry, requestTimeoutMs: 10_000 }), bucket, prefix: path });
}

export function kubeAt(kubeconfig: string, retry: Partial<RetrySettings> = fastRetry): Promise<KubeClient> {
  return KubeClient.load({ kubeconfig, retry, timeoutMs: 10_000 });
}

export function backupRequest(overrides: Partial<BackupRequest> = {}): BackupRequest {
  return {
    kind: 'backup-state',
    includeVolumes: false,
    includeControlPlane: false,
    profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile',
    protectedCrdGroups: ['kubeflow.org', 'tensorboard.kubeflow.org', 'serving.kserve.io'],
    toolVersion: 'test',
    modelNamespace: 'kubeflow',
    ...overrides,
  };
}

export interface BucketState {
  /** backup folders with their marker */
  committed: string[];
  /** backup folders without one */
  incomplete: string[];
}

export async function bucketState(store: ObjectStore): Promise<BucketState> {
  const state: BucketState = { committed: [], incomplete: [] };
  for await (const folder of store.listFolders(BACKUPS_FOLDER)) {
    const id = backupNameOfFolder(folder);
    if (!id) continue;
    (await store.exists(backupKeys(id).marker) ? state.committed : state.incomplete).push(id);
  }
  return state;
}

/** The sha256 of every tar entry of a committed backup, by entry path: equal maps mean the same items. */
export async function entryChecksums(store: ObjectStore, id: string): Promise<Record<string, string>> {
  const read = await backupStore(store).readManifest(id);
  if (read.state !== 'present') throw new Error(`backup ${id} has no usable manifest (${read.state})`);
  return read.checksums.toRecord();
}
