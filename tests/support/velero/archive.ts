// Writes backups into an object store as Velero itself writes them, so our reader, list and restore can be tested on
// Velero's archives rather than on our own idea of them. Built from Velero's format, behaviour by behaviour:
// - vmware-tanzu/velero pkg/persistence/object_store_layout.go: the keys under backups/<name>/ (velero-backup.json,
//   <name>.tar.gz, -logs.gz, -resource-list.json.gz, -results.gz, -volumesnapshots.json.gz,
//   -itemoperations.json.gz, -podvolumebackups.json.gz, -volumeinfo.json.gz).
// - pkg/backup/backup.go (writeBackupVersion): metadata/version first, "1.1.0\n", a regular file at mode 0755.
// - pkg/backup/item_backupper.go (backupItem, getFileForArchive) and pkg/archive/filesystem.go
//   (GetVersionedItemFilePath): each item at resources/<resource>[.<group>]/[<version>/](cluster|namespaces/<ns>)/
//   <name>.json, mode 0755, the object's JSON unchanged (names with ':' included); the preferred version's item twice,
//   unversioned and under <v>-preferredversion/; with EnableAPIGroupVersions, every other version the API serves under
//   its plain <v>/ folder.
// - Velero writes no directory entries, but tarballs repacked by other tools carry some; its extractor
//   (pkg/archive/extractor.go) makes them, so a reader must take them too: `directoryEntries` adds a few.
// - pkg/apis/velero/v1/backup_types.go: the Backup object in velero-backup.json, with Velero's defaults from
//   pkg/controller/backup_controller.go (ttl 720h0m0s and status.expiration = start + ttl, csiSnapshotTimeout 10m0s,
//   itemOperationTimeout 4h0m0s); times as apimachinery writes them (RFC 3339, whole seconds, UTC).
// - pkg/controller/backup_controller.go: the marker is uploaded for phases other than Completed too
//   (WaitingForPluginOperations, Finalizing, their PartiallyFailed forms, PartiallyFailed, Failed); a completion
//   time only for Completed, PartiallyFailed and Failed.
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import type { KubeObject } from '../../../src/kube/types.ts';
import { backupKeys } from '../../../src/store/layout.ts';
import type { ObjectStore } from '../../../src/store/objects.ts';

const MODE = 0o755;

export interface VeleroItem {
  /** plural resource name */
  resource: string;
  /** '' for the core group */
  group: string;
  /** the object as the API served it at its preferred version */
  object: KubeObject;
  /** the same object as served at other versions: written only with EnableAPIGroupVersions */
  otherVersions?: KubeObject[];
}

export interface VeleroBackup {
  name: string;
  items: VeleroItem[];
  phase?: string;
  started?: Date;
  /** EnableAPIGroupVersions: write every other version's copy as well */
  enableApiGroupVersions?: boolean;
  /** add directory entries for resources/ and each resource folder, as a repacking tool would */
  directoryEntries?: boolean;
  /** the optional files that Velero writes when it has something to put in them */
  volumeSnapshots?: unknown[];
  itemOperations?: unknown[];
  podVolumeBackups?: unknown[];
}

const versionOf = (object: KubeObject) => object.apiVersion.slice(object.apiVersion.indexOf('/') + 1);

function itemPath(item: VeleroItem, object: KubeObject, versionFolder: string): string {
  const groupResource = item.group ? `${item.resource}.${item.group}` : item.resource;
  const ns = object.metadata.namespace;
  const where = ns ? `namespaces/${ns}/${object.metadata.name!}.json` : `cluster/${object.metadata.name!}.json`;
  return ['resources', groupResource, versionFolder, where].filter(Boolean).join('/');
}

/** The tarball's entries in the order Velero writes them. */
export function tarEntries(backup: VeleroBackup): Array<{ name: string; body: string | undefined }> {
  const entries: Array<{ name: string; body: string | undefined }> = [{ name: 'metadata/version', body: '1.1.0\n' }];
  if (backup.directoryEntries) entries.push({ name: 'resources/', body: undefined });
  const folders = new Set<string>();
  for (const item of backup.items) {
    const folder = `resources/${item.group ? `${item.resource}.${item.group}` : item.resource}/`;
    if (backup.directoryEntries && !folders.has(folder)) entries.push({ name: folder, body: undefined });
    folders.add(folder);
    const json = JSON.stringify(item.object);
    entries.push({ name: itemPath(item, item.object, ''), body: json });
    entries.push({ name: itemPath(item, item.object, `${versionOf(item.object)}-preferredversion`), body: json });
    if (backup.enableApiGroupVersions) {
      for (const other of item.otherVersions ?? []) entries.push({ name: itemPath(item, other, versionOf(other)), body: JSON.stringify(other) });
    }
  }
  return entries;
}

async function tarball(backup: VeleroBackup, mtime: Date): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => { chunks.push(chunk as Buffer); });
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for (const entry of tarEntries(backup)) {
    if (entry.body === undefined) pack.entry({ name: entry.name, type: 'directory', mode: MODE, mtime });
    else pack.entry({ name: entry.name, type: 'file', mode: MODE, mtime }, entry.body);
  }
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

const rfc3339 = (time: Date) => time.toISOString().replace(/\.\d+Z$/, 'Z');

/** The Backup object of velero-backup.json as Velero serialises it. */
export function veleroMarker(backup: VeleroBackup): Record<string, unknown> {
  const started = backup.started ?? new Date();
  const phase = backup.phase ?? 'Completed';
  const finished = ['Completed', 'PartiallyFailed', 'Failed'].includes(phase);
  const items = backup.items.length;
  return {
    kind: 'Backup',
    apiVersion: 'velero.io/v1',
    metadata: {
      name: backup.name, namespace: 'velero', uid: '5f0b5d0e-1c1e-4f0b-9d5a-0c5b5e1f0a11', resourceVersion: '48213', generation: 7,
      creationTimestamp: rfc3339(started),
      labels: { 'velero.io/storage-location': 'default' },
      annotations: { 'velero.io/resource-timeout': '10m0s', 'velero.io/source-cluster-k8s-gitversion': 'v1.29.4', 'velero.io/source-cluster-k8s-major-version': '1', 'velero.io/source-cluster-k8s-minor-version': '29' },
    },
    spec: {
      metadata: {}, includedNamespaces: ['*'], ttl: '720h0m0s', hooks: {}, storageLocation: 'default', volumeSnapshotLocations: ['default'],
      defaultVolumesToFsBackup: false, csiSnapshotTimeout: '10m0s', itemOperationTimeout: '4h0m0s', snapshotMoveData: false,
    },
    status: {
      version: 1, formatVersion: '1.1.0', expiration: rfc3339(new Date(started.getTime() + 720 * 3600_000)), phase,
      startTimestamp: rfc3339(started),
      ...(finished ? { completionTimestamp: rfc3339(new Date(started.getTime() + 60_000)) } : {}),
      ...(phase === 'Failed' ? { failureReason: 'error uploading backup tarball' } : {}),
      ...(phase.includes('PartiallyFailed') ? { errors: 2 } : {}),
      progress: { totalItems: items, itemsBackedUp: items },
      hookStatus: {},
    },
  };
}

/** Puts a Velero backup into `store` under backups/<name>/, in the order Velero's PutBackup does: log, marker, tarball, the rest. */
export async function putVeleroBackup(store: ObjectStore, backup: VeleroBackup): Promise<void> {
  const keys = backupKeys(backup.name);
  const folder = keys.folder;
  const started = backup.started ?? new Date();
  await store.put(keys.logs, gzipSync(`time="${rfc3339(started)}" level=info msg="Setting up backup log" backup=velero/${backup.name}\n`));
  await store.put(keys.marker, JSON.stringify(veleroMarker(backup)));
  await store.put(keys.tarball, await tarball(backup, started));
  const resourceList: Record<string, string[]> = {};
  for (const { object } of backup.items) {
    const ns = object.metadata.namespace;
    (resourceList[`${object.apiVersion}/${object.kind}`] ??= []).push(ns ? `${ns}/${object.metadata.name!}` : object.metadata.name!);
  }
  for (const names of Object.values(resourceList)) names.sort();
  await store.put(keys.resourceList, gzipSync(JSON.stringify(resourceList)));
  await store.put(keys.results, gzipSync(JSON.stringify({ errors: {}, warnings: {} })));
  await store.put(`${folder}${backup.name}-volumeinfo.json.gz`, gzipSync('[]'));
  if (backup.volumeSnapshots) await store.put(`${folder}${backup.name}-volumesnapshots.json.gz`, gzipSync(JSON.stringify(backup.volumeSnapshots)));
  if (backup.itemOperations) await store.put(`${folder}${backup.name}-itemoperations.json.gz`, gzipSync(JSON.stringify(backup.itemOperations)));
  if (backup.podVolumeBackups) await store.put(`${folder}${backup.name}-podvolumebackups.json.gz`, gzipSync(JSON.stringify(backup.podVolumeBackups)));
}
