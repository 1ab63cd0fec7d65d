// The restic repositories of a location as prune-backups reaches them (src/prune/restic.ts ResticRepositories): each
// namespace's repository at the key the movers write it under, and one check or prune Job per repository, run in
// that namespace (or, once it is gone, the fallback namespace) with the movers' image, password, resources and start
// timeout.
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import { volumeKubeFromClient } from '../kube-client-port.ts';
import { parseMoverResources } from '../resources.ts';
import { moverS3Settings } from '../settings.ts';
import { DEFAULT_RESTIC_IMAGE, resticRepositoryKey } from './job.ts';
import { resticPassword } from './password.ts';
import { CONTROL_PLANE_REPOSITORY, controlPlaneResticPassword } from '../../controlplane/restic-password.ts';
import { runResticPruneJob, type ResticPruneMode, type ResticPruneResult } from './prune.ts';

export interface ResticPruneConfig {
  /** the restic image: the configured volume-mover-image with the restic engine, else the pinned default */
  image?: string | undefined;
  startTimeoutSeconds?: number;
  /** `volume-mover-resources` */
  resources?: string;
  /** where a Job runs whose repository's namespace is gone (the charm's model namespace) */
  fallbackNamespace?: string | undefined;
}

/** A namespace's repository opens with the volume movers' password; the control-plane one with its own, only under a key. */
function repositoryPassword(encryptionKey: string | undefined, namespace: string): string {
  if (namespace !== CONTROL_PLANE_REPOSITORY) return resticPassword(encryptionKey);
  if (!encryptionKey) throw new Error('the control-plane restic repository opens only with the encryption key its backups were made with');
  return controlPlaneResticPassword(encryptionKey);
}

export function resticRepositoriesOf(kube: KubeClient, s3: S3Settings, encryptionKey: string | undefined, config: ResticPruneConfig = {}) {
  const mover = moverS3Settings(s3);
  const runId = `prune-${Date.now().toString(36)}`;
  const resources = parseMoverResources(config.resources ?? '');
  // A profile deleted since its backups were made leaves its repository behind: its Job runs elsewhere, or nowhere.
  const jobNamespace = async (namespace: string): Promise<string | undefined> => {
    // the control-plane repository is no namespace's: its Job runs where its copies ran, the model's namespace
    if (namespace === CONTROL_PLANE_REPOSITORY) {
      if (config.fallbackNamespace) return config.fallbackNamespace;
      throw new Error('the control-plane restic repository has no namespace of its own, and no namespace was given for its restic Job');
    }
    const namespaces = await kube.findByResource('', 'namespaces');
    const found = namespaces ? await kube.tryGet(namespaces, namespace) : undefined;
    if (found && !found.metadata.deletionTimestamp) return undefined;
    if (config.fallbackNamespace) return config.fallbackNamespace;
    throw new Error(`namespace ${namespace} no longer exists, so the restic Job of its repository has nowhere to run`);
  };
  return {
    encryptionKey,
    repositoryKey: (namespace: string) => resticRepositoryKey(mover, namespace),
    locationKey: (namespace: string) => `restic/${namespace}`,
    repositoriesFolder: 'restic/',
    run: async (namespace: string, mode: ResticPruneMode, snapshots: readonly string[]): Promise<ResticPruneResult> => runResticPruneJob(volumeKubeFromClient(kube), {
      runId, namespace, jobNamespace: await jobNamespace(namespace), mode, snapshots, s3: mover, password: repositoryPassword(encryptionKey, namespace), image: config.image ?? DEFAULT_RESTIC_IMAGE,
      ...(config.startTimeoutSeconds ? { startTimeoutSeconds: config.startTimeoutSeconds } : {}),
      resources,
    }),
  };
}
