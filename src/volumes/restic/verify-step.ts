// verify's repository check as the charm's action and the CLI command call it: the restic repositories a verified
// backup's volume index pins snapshots in, checked by Jobs (check.ts) with the settings of the volume movers.
import type { ControlPlaneEntry, VolumeEntry } from '../../archive/manifest.ts';
import { CONTROL_PLANE_REPOSITORY, controlPlaneResticPassword } from '../../controlplane/restic-password.ts';
import type { Wording } from '../../errors/remedy.ts';
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import type { ProgressSink } from '../../steps.ts';
import { parseMoverResources } from '../resources.ts';
import { moverS3Settings } from '../settings.ts';
import type { MoverConfig } from '../steps.ts';
import { resticEngine } from './engine.ts';
import { checkResticRepositories, repositoriesToCheck, type RepositoryCheck, type RepositoryToCheck } from './check.ts';
import { resticRepositoryKey } from './job.ts';
import type { VolumeKube } from '../kube-port.ts';
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

/**
 * Checks the repositories `volumes` pins snapshots in, and the control-plane repository when `controlPlane` pins
 * snapshots there; none (a backup of plain files, or without volumes) is [].
 */
export async function checkPinnedRepositories(volumes: readonly VolumeEntry[] | undefined, request: RepositoryCheckRequest, controlPlane?: readonly ControlPlaneEntry[]): Promise<RepositoryCheck[]> {
  const repositories = repositoriesToCheck(volumes ?? []);
  const controlPlaneRepository = controlPlaneToCheck(controlPlane ?? []);
  if (repositories.length === 0 && !controlPlaneRepository) return [];
  const [{ volumeKubeFromClient }, kube] = await Promise.all([import('../kube-client-port.ts'), request.kube()]);
  const volumeChecks = repositories.length === 0 ? [] : await checkNamespaceRepositories(volumeKubeFromClient(kube), request, repositories);
  if (!controlPlaneRepository) return volumeChecks;
  const key = request.encryptionKey;
  if (key === undefined || key.length === 0) {
    // its password exists only under a key: without one there is nothing to open it with
    return [...volumeChecks, {
      namespace: CONTROL_PLANE_REPOSITORY, repository: `s3://${request.s3.bucket}/${resticRepositoryKey(moverS3Settings(request.s3), CONTROL_PLANE_REPOSITORY)}`,
      status: 'not-checked', checked: 'nothing', snapshots: controlPlaneRepository.pinned.length,
      problem: `the control-plane data is stored encrypted in its restic repository, which opens only with the ${request.wording.term({ term: 'encryption-key' })} the backup was made with`,
    }];
  }
  return [...volumeChecks, ...await checkRepositories(volumeKubeFromClient(kube), request, [controlPlaneRepository], () => controlPlaneResticPassword(key), true)];
}

/** The control-plane repository with the snapshots `entries` pin there, or undefined when they pin none. */
export function controlPlaneToCheck(entries: readonly ControlPlaneEntry[]): RepositoryToCheck | undefined {
  const pinned = entries.flatMap((entry) => (entry.restic ? [{ pvc: entry.part === 'minio' ? `minio/${entry.bucket}` : entry.part, snapshot: entry.restic.snapshot, what: 'control-plane part' }] : []));
  return pinned.length > 0 ? { namespace: CONTROL_PLANE_REPOSITORY, pinned } : undefined;
}

/**
 * The profile namespaces' repositories: one written before the passwords were per namespace gets its own first, in the
 * same job namespace (a missing one is left to the check, which reports it).
 */
async function checkNamespaceRepositories(kube: VolumeKube, request: RepositoryCheckRequest, repositories: RepositoryToCheck[]): Promise<RepositoryCheck[]> {
  const [{ migrateToNamespacePasswords }, { existingRepositories }, { openObjectStore }] = await Promise.all([
    import('./rekey.ts'), import('./repositories.ts'), import('../../store/open.ts'),
  ]);
  const objects = openObjectStore(request.s3);
  const existing = await existingRepositories(objects, repositories.map((r) => r.namespace)).finally(() => objects.client.destroy());
  await migrateToNamespacePasswords(kube, {
    jobNamespace: request.jobNamespace, namespaces: existing, s3: moverS3Settings(request.s3),
    encryptionKey: request.encryptionKey, runId: `verify ${request.backupId}`, image: resticEngine.imageFor(request.config), startTimeoutSeconds: request.config.startTimeoutSeconds,
  });
  return checkRepositories(kube, request, repositories, (namespace) => resticPassword(request.encryptionKey, namespace), isKeyed(request.encryptionKey));
}

function checkRepositories(kube: VolumeKube, request: RepositoryCheckRequest, repositories: RepositoryToCheck[], password: (namespace: string) => string, keyed: boolean): Promise<RepositoryCheck[]> {
  return checkResticRepositories(kube, {
    backupId: request.backupId, jobNamespace: request.jobNamespace, repositories,
    s3: moverS3Settings(request.s3), password, keyed, image: resticEngine.imageFor(request.config),
    readData: request.readData, concurrency: request.config.concurrency, startTimeoutSeconds: request.config.startTimeoutSeconds,
    resources: parseMoverResources(request.config.resources), wording: request.wording,
    imageSetting: request.imageSetting, resourcesSetting: request.resourcesSetting,
    ...(request.progressIntervalMs ? { progressIntervalMs: request.progressIntervalMs } : {}),
    onProgress: (line) => void request.progress(line),
  });
}
