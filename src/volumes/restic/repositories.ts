// Which profile namespaces have a restic repository in the location: every folder `restic/<namespace>/` that holds
// restic's `config` object (restic/restic internal/backend/layout: the config sits at the repository's root; a folder
// without one is an `init` that never finished). Read from the bucket, not the cluster: a namespace deleted since its
// last backup still has snapshots that a changed key must not orphan.
import type { ObjectStore } from '../../store/objects.ts';

export const RESTIC_FOLDER = 'restic/';

export async function listResticRepositories(objects: Pick<ObjectStore, 'listFolders' | 'exists'>): Promise<string[]> {
  const namespaces: string[] = [];
  for await (const folder of objects.listFolders(RESTIC_FOLDER)) {
    const namespace = folder.slice(RESTIC_FOLDER.length).replace(/\/$/, '');
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)) continue; // not a namespace's repository
    if (await objects.exists(`${RESTIC_FOLDER}${namespace}/config`)) namespaces.push(namespace);
  }
  return namespaces.sort();
}

/** Which of `namespaces` have a repository in the location (its `config` object), each once and sorted. */
export async function existingRepositories(objects: Pick<ObjectStore, 'exists'>, namespaces: readonly string[]): Promise<string[]> {
  const unique = [...new Set(namespaces)].sort();
  const found = await Promise.all(unique.map((namespace) => objects.exists(`${RESTIC_FOLDER}${namespace}/config`)));
  return unique.filter((_, i) => found[i]);
}
