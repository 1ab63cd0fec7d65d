// verify's repository check as the charm's action and the CLI command call it: the restic repositories a verified
// backup's volume index pins snapshots in, checked by Jobs (check.ts) with the settings of the volume movers.
import type { VolumeEntry } from '../../archive/manifest.ts';
import type { Wording } from '../../errors/remedy.ts';
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import type { ProgressSink } from '../../steps.ts';
import { parseMoverResources } from '../resources.ts';
import { moverS3Settings } from '../settings.ts';
import { resticImageFor, type MoverConfig } from '../steps.ts';
import { checkResticRepositories, repositoriesToCheck, type RepositoryCheck } from './check.ts';
import { isKeyed, resticPassword } from './password.ts';
import type { ReadData } from './read-data.ts';

export interface RepositoryCheckRequest {
  /** the verified backup: it names the Jobs and labels them */
  backupId: string;
  kube: () => Promise<KubeClient>;
  s3: S3Settings;
  config: MoverConfig;
  encryptionKey: string | Buffer | undefined;
  readData: ReadData;
  /** where the Jobs run: the charm's model namespace, the CLI's --job-namespace */
  jobNamespace: string;
  wording: Wording;
  /** the edge's names of the image and resources settings, for a Job that cannot start */
  imageSetting: string;
  resourcesSetting: string;
  progress: ProgressSink;
  progressIntervalMs?: number;
}

/** Checks the repositories `volumes` pins snapshots in; none (a backup of plain files, or without volumes) is []. */
export async function checkPinnedRepositories(volumes: readonly VolumeEntry[] | undefined, request: RepositoryCheckRequest): Promise<RepositoryCheck[]> {
  const repositories = repositoriesToCheck(volumes ?? []);
  if (repositories.length === 0) return [];
  const [{ volumeKubeFromClient }, { migrateToNamespacePasswords }, { existingRepositories }, { openObjectStore }, kube] = await Promise.all([
    import('../kube-client-port.ts'), import('./rekey.ts'), import('./repositories.ts'), import('../../store/open.ts'), request.kube(),
  ]);
  // a repository written before the passwords were per namespace gets its own first, in the same job namespace (a
  // missing one is left to the check, which reports it)
  const objects = openObjectStore(request.s3);
  const existing = await existingRepositories(objects, repositories.map((r) => r.namespace)).finally(() => objects.client.destroy());
  await migrateToNamespacePasswords(volumeKubeFromClient(kube), {
    jobNamespace: request.jobNamespace, namespaces: existing, s3: moverS3Settings(request.s3),
    encryptionKey: request.encryptionKey, runId: `verify ${request.backupId}`, image: resticImageFor(request.config), startTimeoutSeconds: request.config.startTimeoutSeconds,
  });
  return checkResticRepositories(volumeKubeFromClient(kube), {
    backupId: request.backupId, jobNamespace: request.jobNamespace, repositories,
    s3: moverS3Settings(request.s3), password: (namespace) => resticPassword(request.encryptionKey, namespace), keyed: isKeyed(request.encryptionKey),
    image: resticImageFor(request.config),
    readData: request.readData, concurrency: request.config.concurrency, startTimeoutSeconds: request.config.startTimeoutSeconds,
    resources: parseMoverResources(request.config.resources), wording: request.wording,
    imageSetting: request.imageSetting, resourcesSetting: request.resourcesSetting,
    ...(request.progressIntervalMs ? { progressIntervalMs: request.progressIntervalMs } : {}),
    onProgress: (line) => void request.progress(line),
  });
}
