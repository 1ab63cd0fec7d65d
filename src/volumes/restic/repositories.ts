// The restic repositories of a location as prune-backups reaches them (src/prune/restic.ts ResticRepositories): each
// namespace's repository at the key the movers write it under, and one check or prune Job per repository, run in
// that namespace with the movers' image, password, resources and start timeout.
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import { volumeKubeFromClient } from '../kube-client-port.ts';
import { parseMoverResources } from '../resources.ts';
import { moverS3Settings } from '../settings.ts';
import { DEFAULT_RESTIC_IMAGE, resticRepositoryKey } from './job.ts';
import { resticPassword } from './password.ts';
import { runResticPruneJob, type ResticPruneMode, type ResticPruneResult } from './prune.ts';

export interface ResticPruneConfig {
  /** the restic image: the configured volume-mover-image with the restic engine, else the pinned default */
  image?: string | undefined;
  startTimeoutSeconds?: number;
  /** `volume-mover-resources` */
  resources?: string;
}

export function resticRepositoriesOf(kube: KubeClient, s3: S3Settings, encryptionKey: string | undefined, config: ResticPruneConfig = {}) {
  const mover = moverS3Settings(s3);
  const runId = `prune-${Date.now().toString(36)}`;
  const resources = parseMoverResources(config.resources ?? '');
  return {
    encryptionKey,
    repositoryKey: (namespace: string) => resticRepositoryKey(mover, namespace),
    locationKey: (namespace: string) => `restic/${namespace}`,
    run: (namespace: string, mode: ResticPruneMode, snapshots: readonly string[]): Promise<ResticPruneResult> => runResticPruneJob(volumeKubeFromClient(kube), {
      runId, namespace, mode, snapshots, s3: mover, password: resticPassword(encryptionKey), image: config.image ?? DEFAULT_RESTIC_IMAGE,
      ...(config.startTimeoutSeconds ? { startTimeoutSeconds: config.startTimeoutSeconds } : {}),
      resources,
    }),
  };
}
