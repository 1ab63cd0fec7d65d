// Reads the items of a stored backup: the store opens the tarball, the format decodes it (src/archive/reader.ts).
import { ArchiveError, decodeItems, type ArchiveItem, type Problem, type ReadItemsOptions, type TarballStats } from '../archive/reader.ts';
import type { BackupStore } from '../store/backup-store.ts';

/**
 * Streams the items of backup `id`. When the iteration completes, the tarball checksum and the set of entries
 * are compared with the manifest too, so a full pass is a full verification. `stats` is filled at the end.
 */
export async function* readItems(
  store: BackupStore,
  id: string,
  options: ReadItemsOptions,
  stats: Partial<TarballStats> = {},
): AsyncGenerator<ArchiveItem> {
  const tarball = store.keys(id).tarball;
  const source = await store.openTarball(id);
  if (!source) {
    const problem: Problem = { kind: 'missing-tarball', path: tarball, message: `Backup ${id} has no tarball ${store.url(tarball)}.` };
    if (!options.onProblem) throw new ArchiveError(problem);
    options.onProblem(problem);
    return;
  }
  yield* decodeItems(source, id, tarball, options, stats);
}
