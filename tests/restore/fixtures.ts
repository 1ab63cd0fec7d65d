// Archives built by hand for restore tests: a foreign Velero layout (no manifest) with whatever entries a test wants,
// including ones the archive writer would never produce (`../` paths, cluster-admin bindings).
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { backupKeys } from '../../src/store/layout.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import { veleroBackupObject } from '../../src/archive/velero-backup.ts';
import type { KubeObject } from '../../src/kube/types.ts';

export interface RawEntry {
  path: string;
  object: KubeObject | string;
}

export async function putForeignArchive(store: ObjectStore, id: string, entries: readonly RawEntry[]): Promise<void> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => { chunks.push(chunk as Buffer); });
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  pack.entry({ name: 'metadata/version' }, '1.1.0\n');
  for (const entry of entries) pack.entry({ name: entry.path }, typeof entry.object === 'string' ? entry.object : JSON.stringify(entry.object));
  pack.finalize();
  await ended;
  const keys = backupKeys(id);
  await store.put(keys.tarball, gzipSync(Buffer.concat(chunks)));
  const now = new Date();
  await store.put(keys.marker, JSON.stringify(veleroBackupObject({
    id, started: now, completed: now, namespaces: [], items: entries.length,
    errors: 0, warnings: 0, storageLocation: 'default', toolVersion: 'velero',
  })));
}
