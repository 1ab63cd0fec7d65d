// The restic repositories of a location as prune-backups reaches them (src/prune/restic.ts ResticRepositories): each
// namespace's repository at the key the movers write it under, and one check or prune Job per repository, run in
// that namespace (or, once it is gone, the fallback namespace) with the movers' image, the namespace's password,
// resources and start timeout.
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import { volumeKubeFromClient } from '../kube-client-port.ts';
import { parseMoverResources } from '../resources.ts';
import { moverS3Settings } from '../settings.ts';
import { DEFAULT_RESTIC_IMAGE, resticRepositoryKey } from './job.ts';
import { isKeyed, resticPassword } from './password.ts';
import { migrateToNamespacePasswords } from './rekey.ts';
import { runResticPruneJob, type ResticPruneMode, type ResticPruneResult } from './prune.ts';

export interface ResticPruneConfig {
  /** the restic image: the configured volume-mover-image with the restic engine, else the pinned default */
  image?: string | undefined;
  startTimeoutSeconds?: number;
  /** `volume-mover-resources` */
  resources?: string;
  /**
   * where a Job runs whose repository's namespace is gone (the charm's model namespace, the CLI's --job-namespace),
   * and the restic key Job that gives a repository written before the passwords were per namespace its own
   */
  fallbackNamespace?: string | undefined;
}

export function resticRepositoriesOf(kube: KubeClient, s3: S3Settings, encryptionKey: string | undefined, config: ResticPruneConfig = {}) {
  const mover = moverS3Settings(s3);
  const runId = `prune-${Date.now().toString(36)}`;
  const resources = parseMoverResources(config.resources ?? '');
  // A profile deleted since its backups were made leaves its repository behind: its Job runs elsewhere, or nowhere.
  const jobNamespace = async (namespace: string): Promise<string | undefined> => {
    const namespaces = await kube.findByResource('', 'namespaces');
    const found = namespaces ? await kube.tryGet(namespaces, namespace) : undefined;
    if (found && !found.metadata.deletionTimestamp) return undefined;
    if (config.fallbackNamespace) return config.fallbackNamespace;
    throw new Error(`namespace ${namespace} no longer exists, so the restic Job of its repository has nowhere to run`);
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
          image: config.image ?? DEFAULT_RESTIC_IMAGE, ...(config.startTimeoutSeconds ? { startTimeoutSeconds: config.startTimeoutSeconds } : {}),
        });
      })();
      migrations.set(namespace, pending);
    }
    return pending;
  };
  return {
    encryptionKey,
    repositoryKey: (namespace: string) => resticRepositoryKey(mover, namespace),
    locationKey: (namespace: string) => `restic/${namespace}`,
    repositoriesFolder: 'restic/',
    run: async (namespace: string, mode: ResticPruneMode, snapshots: readonly string[]): Promise<ResticPruneResult> => {
      await migrated(namespace);
      return runResticPruneJob(volumeKubeFromClient(kube), {
        runId, namespace, jobNamespace: await jobNamespace(namespace), mode, snapshots, s3: mover, password: resticPassword(encryptionKey, namespace), image: config.image ?? DEFAULT_RESTIC_IMAGE,
        ...(config.startTimeoutSeconds ? { startTimeoutSeconds: config.startTimeoutSeconds } : {}),
        resources,
      });
    },
  };
}
