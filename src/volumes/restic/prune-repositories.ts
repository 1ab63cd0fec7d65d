// The restic repositories of a location as prune-backups reaches them (src/prune/restic.ts ResticRepositories): each
// namespace's repository at the key the movers write it under, and one check or prune Job per repository, run in the
// model's namespace (never a profile's: the Job holds the bucket credentials) with the movers' image, the repository's
// own password, resources and start timeout.
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import { volumeKubeFromClient } from '../kube-client-port.ts';
import { parseMoverResources } from '../resources.ts';
import { moverS3Settings } from '../settings.ts';
import { resticRepositoryKey } from './job.ts';
import { RESTIC_IMAGE } from '../engine.ts';
import { isKeyed, resticPassword } from './password.ts';
import { migrateToNamespacePasswords } from './rekey.ts';
import { CONTROL_PLANE_REPOSITORY, controlPlaneResticPassword } from '../../controlplane/restic-password.ts';
import { runResticPruneJob, type ResticPruneMode, type ResticPruneResult } from './prune.ts';

export interface ResticPruneConfig {
  /** the restic image (the restic engine's imageFor); unset, its pinned image */
  image?: string | undefined;
  startTimeoutSeconds?: number;
  /** `volume-mover-resources` */
  resources?: string;
  /**
   * where every Job runs (the charm's model namespace, the CLI's --job-namespace), and the restic key Job that gives a
   * repository written before the passwords were per namespace its own
   */
  fallbackNamespace?: string | undefined;
}

/** A namespace's repository opens with the volume movers' password; the control-plane one with its own, only under a key. */
function repositoryPassword(encryptionKey: string | undefined, namespace: string): string {
  if (namespace !== CONTROL_PLANE_REPOSITORY) return resticPassword(encryptionKey, namespace);
  if (!encryptionKey) throw new Error('the control-plane restic repository opens only with the encryption key its backups were made with');
  return controlPlaneResticPassword(encryptionKey);
}

export function resticRepositoriesOf(kube: KubeClient, s3: S3Settings, encryptionKey: string | undefined, config: ResticPruneConfig = {}) {
  const mover = moverS3Settings(s3);
  const runId = `prune-${Date.now().toString(36)}`;
  const resources = parseMoverResources(config.resources ?? '');
  // Every Job runs in the model's namespace (the CLI's --job-namespace), never in a profile's: it holds the bucket's
  // credentials, which that profile's users could read there (Velero's data movers likewise run in Velero's own
  // namespace, vmware-tanzu/velero pkg/exposer). A deleted profile's repository is pruned from there all the same.
  const jobNamespace = (): string => {
    if (config.fallbackNamespace) return config.fallbackNamespace;
    throw new Error('the restic Jobs of prune hold the bucket credentials and run only in the model namespace, and none was given');
  };
  // once per repository and run, before its first Job: never in the profile namespace, whose users would read the
  // shared password in the key Job's Secret
  const migrations = new Map<string, Promise<unknown>>();
  const migrated = (namespace: string): Promise<unknown> => {
    let pending = migrations.get(namespace);
    if (!pending) {
      pending = (async () => {
        if (!isKeyed(encryptionKey)) return;
        if (!config.fallbackNamespace) throw new Error(`the restic repository of namespace ${namespace} may still need its own password, and no namespace was given for the restic key Job that sets it`);
        await migrateToNamespacePasswords(volumeKubeFromClient(kube), {
          jobNamespace: config.fallbackNamespace, namespaces: [namespace], s3: mover, encryptionKey, runId: `${runId} ${namespace}`,
          image: config.image ?? RESTIC_IMAGE, ...(config.startTimeoutSeconds ? { startTimeoutSeconds: config.startTimeoutSeconds } : {}),
        });
      })();
      migrations.set(namespace, pending);
    }
    return pending;
  };
  return {
    repositoryKey: (namespace: string) => resticRepositoryKey(mover, namespace),
    locationKey: (namespace: string) => `restic/${namespace}`,
    repositoriesFolder: 'restic/',
    run: async (namespace: string, mode: ResticPruneMode, snapshots: readonly string[]): Promise<ResticPruneResult> => {
      // the control-plane repository was never under the shared v1 password: it has its own since it exists
      if (namespace !== CONTROL_PLANE_REPOSITORY) await migrated(namespace);
      return runResticPruneJob(volumeKubeFromClient(kube), {
        runId, namespace, jobNamespace: jobNamespace(), mode, snapshots, s3: mover, password: repositoryPassword(encryptionKey, namespace), image: config.image ?? RESTIC_IMAGE,
        ...(config.startTimeoutSeconds ? { startTimeoutSeconds: config.startTimeoutSeconds } : {}),
        resources,
      });
    },
  };
}
