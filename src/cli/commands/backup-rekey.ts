// backup --previous-encryption-key-file: the CLI's way to change the key, as the charm does when `encryption-key`
// changes (src/charm/restic-key.ts). Before the backup, one restic key Job (src/volumes/restic/rekey.ts), in
// --job-namespace, adds the new key's password of each namespace to that namespace's restic repository when it does
// not open with it yet, authenticated by the previous key's (its namespace's, or the shared one of before v2), then
// removes every other key; older snapshots stay readable under the new key and the backup opens the same repositories.
import type { KubeClient } from '../../kube/client.ts';
import type { S3Settings } from '../../store/settings.ts';
import type { MoverConfig } from '../../volumes/steps.ts';

const namespaces = (list: string[]) => `${list.length === 1 ? 'namespace' : 'namespaces'} ${list.join(', ')}`;

export interface KeyChange {
  previousKey: string;
  newKey: string;
  /** where the Job and its Secret run */
  jobNamespace: string;
}

/**
 * Adds the new key to the repositories; resolves with one line saying what was done, or throws one sentence (nothing
 * is backed up then) when a repository opens with neither key or the Job could not add it.
 */
export async function addNewKeyToRepositories(kube: KubeClient, settings: S3Settings, mover: MoverConfig, change: KeyChange): Promise<string> {
  const [{ openObjectStore }, { listResticRepositories }, { rekeyResticRepositories }, { volumeKubeFromClient }, { moverS3Settings }, { resticEngine }] = await Promise.all([
    import('../../store/open.ts'), import('../../volumes/restic/repositories.ts'), import('../../volumes/restic/rekey.ts'),
    import('../../volumes/kube-client-port.ts'), import('../../volumes/settings.ts'), import('../../volumes/engines.ts'),
  ]);
  const objects = openObjectStore(settings);
  let repositories: string[];
  try {
    repositories = await listResticRepositories(objects);
  } finally {
    objects.client.destroy();
  }
  if (repositories.length === 0) return 'restic repositories: none in this location yet, so there is no key to change';
  const { repositoryKeys } = await import('../../volumes/restic/rekey.ts');
  const outcome = await rekeyResticRepositories(volumeKubeFromClient(kube), {
    namespace: change.jobNamespace,
    repositories: repositoryKeys(repositories, change.newKey, [change.previousKey]),
    s3: moverS3Settings(settings),
    // one Job per run (never named after a key): a second CLI run does not adopt the first one's Job
    runId: `cli-backup-${Date.now().toString(36)}-${settings.bucket}/${settings.path}`,
    image: resticEngine.imageFor(mover),
    startTimeoutSeconds: mover.startTimeoutSeconds,
  });
  if (outcome.locked.length > 0) {
    throw new Error(`The restic repositories of ${namespaces(outcome.locked)} open with neither the previous nor the new encryption key, so nothing was backed up: pass the key they were written with as --previous-encryption-key-file.`);
  }
  if (outcome.failed.length > 0) {
    throw new Error(`Adding the new encryption key to the restic repositories of ${namespaces(outcome.failed)} failed (the restic key Job's log in namespace ${change.jobNamespace} says why), so nothing was backed up: run the backup again.`);
  }
  const added = outcome.added.length > 0 ? `added the new key to ${namespaces(outcome.added)}` : '';
  const removed = outcome.removed.length > 0 ? `removed the other keys of ${namespaces(outcome.removed)}` : '';
  const unchanged = outcome.unchanged.length > 0 ? `${namespaces(outcome.unchanged)} already opened with it alone` : '';
  return `restic repositories: ${[added, removed, unchanged].filter(Boolean).join('; ')}`;
}
