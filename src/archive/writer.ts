// Encodes one backup as a stream: item → tar entry → gzip → sha256 → the backup store's tarball upload. Each addItem
// resolves only once the tar stream has room again, so a producer awaiting it holds at most the upload's parts in
// memory. At commit it encodes Velero's side files, our own, the manifest and the marker, and hands them to the
// store's PendingBackup, which alone knows where they go and stores the marker last (src/store/backup-store.ts).
import { hash } from 'node:crypto';
import { createGzip, gzipSync, type Gzip } from 'node:zlib';
import type { input as ZodInput } from 'zod';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import type { BackupFile, PendingBackup, TarballUpload } from './pending-backup.ts';
import {
  MANIFEST_FORMAT_VERSION,
  ManifestSchema,
  type ApplicationEntry,
  type BackupScope,
  type BackupSource,
  type CrdSnapshot,
  type Manifest,
  type ManifestExtras,
  type VolumeEntry,
  withoutEntries,
} from './manifest.ts';
import { ChecksumIndex } from './checksum-index.ts';
import { itemPaths, METADATA_VERSION_PATH, PREFERRED_VERSION_SUFFIX, RESOURCES_ROOT, resourceFolder, SEALED_ROOT, VELERO_FORMAT_VERSION } from './paths.ts';
import { Digest } from './digest.ts';
import { streamManifest } from './manifest-stream.ts';
import { SecretSealer } from './seal.ts';
import { TarEncoder } from './tar.ts';
import { veleroBackupObject } from './velero-backup.ts';

export interface BackupWriterOptions {
  /** the backup being written, opened by the store (BackupStore.beginBackup), which alone knows where its files go */
  pending: PendingBackup;
  toolVersion: string;
  scope: BackupScope;
  description?: string;
  source?: BackupSource;
  /** the user's encryption-key; when set, every Secret is sealed */
  encryptionKey?: string | Buffer;
  storageLocation?: string;
  /** when the backup started, the time its id was made from; defaults to now() */
  started?: Date;
  now?: () => Date;
}

export interface BackupSummary {
  id: string;
  location: string;
  objects: number;
  bytes: number;
  sealedSecrets: number;
  clearSecrets: number;
  /** the manifest as stored, but its entries */
  manifest: Manifest;
  /** the entries' checksums, built when asked (2×N paths) */
  checksums(): ChecksumIndex;
}

type ManifestInput = ZodInput<typeof ManifestSchema>;
type Problems = { velero: string[]; cluster: string[]; namespaces: Record<string, string[]> };

function sha256(data: Buffer | string): string {
  return hash('sha256', data, 'hex');
}

// The hashing stage between gzip and the upload, exported here for the bench that times it.
export { Digest };

/**
 * Bytes of tar gathered before one gzip write. Every write is a zlib call on the thread pool, and one call per small
 * tar chunk left the backup waiting on them; a chunk this size makes that cost vanish and stays small beside the
 * upload's parts.
 */
const CHUNK_BYTES = 256 * 1024;

/**
 * Every tar entry's mode, as Velero writes its own (vmware-tanzu/velero pkg/backup/item_backupper.go and backup.go).
 * Velero's restore creates each entry's parent folders with the entry's mode (pkg/archive/extractor.go) and runs as
 * a non-root user: with 0644 it could not enter the folders it had just made and would restore nothing.
 */
export const ENTRY_MODE = 0o755;

/** One digest per item (both tar paths hold the same bytes), kept raw: 32 bytes each instead of two hex strings. */
class DigestList {
  private buf = Buffer.alloc(32 * 1024);
  length = 0;
  push(digest: Buffer): number {
    if ((this.length + 1) * 32 > this.buf.length) {
      const bigger = Buffer.alloc(this.buf.length * 2);
      this.buf.copy(bigger);
      this.buf = bigger;
    }
    digest.copy(this.buf, this.length * 32);
    return this.length++;
  }
  hex(index: number): string {
    return this.buf.toString('hex', index * 32, index * 32 + 32);
  }
}

/** Per item: its unversioned path, the resource it came from and its resource-list key, as small indexes. */
interface ItemRecord {
  resource: number;
  listKey: number;
}

export class BackupWriter {
  readonly id: string;
  private readonly pending: PendingBackup;
  private options: BackupWriterOptions;
  private readonly started: Date;
  private readonly gzip: Gzip;
  private readonly tar: TarEncoder;
  private readonly digest = new Digest();
  private readonly upload: TarballUpload;
  private readonly sealer: SecretSealer | undefined;
  /** entries that are not items (metadata/version): path → sha256 hex */
  private readonly plainEntries: Array<[string, string]> = [];
  /** every item's unversioned path, in the order written (also the check against adding an object twice) */
  private readonly itemPaths = new Set<string>();
  private readonly itemDigests = new DigestList();
  private readonly itemRecords: ItemRecord[] = [];
  private readonly resources: ApiResource[] = [];
  private readonly resourceIndex = new Map<ApiResource, number>();
  private readonly listKeys: string[] = [];
  private readonly listKeyIndex = new Map<string, number>();
  private readonly counts: Record<string, number> = {};
  private readonly logChunks: string[] = [];
  private readonly errors: Problems = { velero: [], cluster: [], namespaces: {} };
  private readonly warnings: Problems = { velero: [], cluster: [], namespaces: {} };
  private errorCount = 0;
  private warningCount = 0;
  private objects = 0;
  private sealedSecrets = 0;
  private clearSecrets = 0;
  private volumes: VolumeEntry[] = [];
  private applications: ApplicationEntry[] = [];
  private crds: CrdSnapshot[] = [];
  private extras: ManifestExtras = {};
  /** files of our own beside the Velero ones (name in the backup folder, bytes, type); the manifest records their sha256 */
  private readonly ownFiles: Array<[string, Buffer, string]> = [];
  private state: 'open' | 'committing' | 'committed' | 'aborted' = 'open';
  private streamError: Error | undefined;
  private tail: Promise<void> = Promise.resolve();

  private constructor(options: BackupWriterOptions, pending: PendingBackup, started: Date) {
    this.options = options;
    this.id = pending.id;
    this.pending = pending;
    this.started = started;
    this.sealer = options.encryptionKey !== undefined ? SecretSealer.create(options.encryptionKey, pending.id, undefined, pending.home) : undefined;
    // Level 1: the backup's main thread waits on gzip's drain, and gzip shares the cores with it, the API server and
    // the GC; faster backups for a somewhat larger tarball (docs/performance.md). Any level reads back the same.
    const gzip = (this.gzip = createGzip({ level: 1 }));
    this.tar = new TarEncoder(CHUNK_BYTES, (chunk) => {
      if (!gzip.destroyed) gzip.write(chunk);
    });
    const failed = (error: Error) => {
      this.streamError ??= error;
      // Without a reader downstream, a waiting addItem would never resume: tear the chain down so it fails instead.
      gzip.destroy();
      this.digest.destroy();
    };
    gzip.on('error', failed);
    this.digest.on('error', failed);
    gzip.pipe(this.digest);
    this.upload = pending.uploadTarball(this.digest);
    this.upload.done().catch((error: Error) => failed(error));
  }

  /**
   * Starts encoding into a backup the store opened (BackupStore.beginBackup refuses an id that already has files, so a
   * retried action can never mix two backups). Call `commit()` or `abort()` exactly once afterwards.
   */
  static async start(options: BackupWriterOptions): Promise<BackupWriter> {
    const now = options.started ?? options.now?.() ?? new Date();
    const writer = new BackupWriter(options, options.pending, now);
    const version = Buffer.from(`${VELERO_FORMAT_VERSION}\n`);
    writer.plainEntries.push([METADATA_VERSION_PATH, sha256(version)]);
    writer.writeEntry(METADATA_VERSION_PATH, version);
    await writer.room();
    return writer;
  }

  get location(): string {
    return this.pending.location;
  }

  get itemCount(): number {
    return this.objects;
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new Error(`Backup ${this.id} is ${this.state}; nothing more can be added.`);
    if (this.streamError) throw this.streamError;
  }

  private writeEntry(name: string, content: Buffer): void {
    this.tar.add({ name, mode: ENTRY_MODE, mtimeSeconds: Math.floor(this.started.getTime() / 1000) }, content);
  }

  /** Resolves once gzip can take more (the backpressure of the whole chain down to the upload), or fails. */
  private async room(): Promise<void> {
    if (this.gzip.writableNeedDrain && !this.gzip.destroyed) {
      // Plain listeners: events.once with an AbortSignal made (and threw away) a DOMException on every wait.
      const gzip = this.gzip;
      await new Promise<void>((resolve) => {
        const done = () => {
          gzip.off('drain', done);
          gzip.off('close', done);
          resolve();
        };
        gzip.on('drain', done);
        gzip.on('close', done);
      });
    }
    if (this.streamError) throw this.streamError;
  }

  /**
   * Adds one object at its unversioned and `<preferred>-preferredversion/` paths. Secrets are sealed first when a
   * key was given. Concurrent calls are serialised; await each call (or batches) to respect backpressure.
   */
  addItem(resource: ApiResource, object: KubeObject): Promise<void> {
    return this.addItems(resource, [object]);
  }

  /**
   * Adds objects of one resource in order, like addItem for each, waiting only when the gzip stream is full: a
   * page of a LIST costs one await instead of one per object. Stops at the first object that cannot be added.
   */
  addItems(resource: ApiResource, objects: readonly KubeObject[]): Promise<void> {
    const run = this.tail.then(async () => {
      for (const object of objects) {
        this.writeItem(resource, object);
        if (this.gzip.writableNeedDrain) await this.room();
      }
      if (this.streamError) throw this.streamError;
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private writeItem(resource: ApiResource, object: KubeObject): void {
    this.assertOpen();
    const sealed = object.kind === 'Secret' && object.apiVersion === 'v1' && this.sealer !== undefined;
    const paths = itemPaths(resource, object, sealed ? SEALED_ROOT : RESOURCES_ROOT);
    if (this.itemPaths.has(paths.unversioned)) {
      throw new Error(`${resource.kind} ${paths.unversioned} was added twice to backup ${this.id}.`);
    }
    const stored = sealed ? this.sealer!.seal(object) : object;
    // Both paths hold the same bytes, encoded once and hashed once.
    const mtimeSeconds = Math.floor(this.started.getTime() / 1000);
    const digest = this.tar.addText([{ name: paths.unversioned, mode: ENTRY_MODE, mtimeSeconds }, { name: paths.preferred, mode: ENTRY_MODE, mtimeSeconds }], JSON.stringify(stored));
    if (object.kind === 'Secret' && object.apiVersion === 'v1') {
      if (sealed) this.sealedSecrets++;
      else this.clearSecrets++;
    }
    this.objects++;
    this.itemPaths.add(paths.unversioned);
    this.itemDigests.push(digest);
    let r = this.resourceIndex.get(resource);
    if (r === undefined) {
      r = this.resources.push(resource) - 1;
      this.resourceIndex.set(resource, r);
    }
    const key = `${stored.apiVersion}/${stored.kind}`;
    let k = this.listKeyIndex.get(key);
    if (k === undefined) {
      k = this.listKeys.push(key) - 1;
      this.listKeyIndex.set(key, k);
    }
    this.itemRecords.push({ resource: r, listKey: k });
    const folder = resourceFolder(resource.resource, resource.group);
    this.counts[folder] = (this.counts[folder] ?? 0) + 1;
  }

  /** Each item's paths, digest and resource-list name, rebuilt from the compact records in the order written. */
  private *items(): Generator<{ unversioned: string; preferred: string; sha256: string; listKey: string; listName: string }> {
    let i = 0;
    for (const unversioned of this.itemPaths) {
      const record = this.itemRecords[i]!;
      const resource = this.resources[record.resource]!;
      // <root>/<folder>/<where>: neither root nor folder has a '/', and <where> is cluster/<n>.json or namespaces/<ns>/<n>.json
      const slash = unversioned.indexOf('/', unversioned.indexOf('/') + 1);
      const where = unversioned.slice(slash + 1);
      const file = where.startsWith('cluster/') ? where.slice('cluster/'.length) : where.slice('namespaces/'.length);
      yield {
        unversioned,
        preferred: `${unversioned.slice(0, slash)}/${resource.preferredVersion}${PREFERRED_VERSION_SUFFIX}/${where}`,
        sha256: this.itemDigests.hex(i),
        listKey: this.listKeys[record.listKey]!,
        listName: file.slice(0, -'.json'.length),
      };
      i++;
    }
  }

  /** A line for `<id>-logs.gz`. Never pass secret values here. */
  log(message: string, level: 'info' | 'warning' | 'error' = 'info'): void {
    const at = (this.options.now?.() ?? new Date()).toISOString();
    this.logChunks.push(`time="${at}" level=${level} msg=${JSON.stringify(message)} backup=${this.id}\n`);
  }

  /** A warning for `<id>-results.gz`, filed under its namespace (or the cluster). */
  warn(message: string, namespace?: string): void {
    this.warningCount++;
    file(this.warnings, message, namespace);
    this.log(message, 'warning');
  }

  /** An error for `<id>-results.gz`; any error makes the Velero phase PartiallyFailed. */
  error(message: string, namespace?: string): void {
    this.errorCount++;
    file(this.errors, message, namespace);
    this.log(message, 'error');
  }

  /** The scope as the manifest and the marker record it, when it was not known yet at start(). */
  setScope(scope: BackupScope): void {
    this.options = { ...this.options, scope };
  }

  setVolumes(volumes: VolumeEntry[]): void {
    this.volumes = volumes;
  }
  setInventory(applications: ApplicationEntry[]): void {
    this.applications = applications;
  }
  setCrds(crds: CrdSnapshot[]): void {
    this.crds = crds;
  }
  /** One section of the manifest's extras; the typed ones (manifest.ts) take only their own shape. */
  setExtra<K extends keyof ManifestExtras & string>(key: K, value: ManifestExtras[K]): void {
    this.extras[key] = value;
  }
  /** A file of ours in the backup folder (e.g. the data-files index), checksummed in the manifest like Velero's files. */
  addFile(name: string, content: Buffer, contentType: string): void {
    this.ownFiles.push([name, content, contentType]);
  }

  /** path → sha256 hex of every tar entry, in the order written: what the manifest records */
  private *entryPairs(): Generator<[string, string]> {
    yield* this.plainEntries;
    for (const item of this.items()) {
      yield [item.unversioned, item.sha256];
      yield [item.preferred, item.sha256];
    }
  }

  /** The entries as a ChecksumIndex, built only when asked: at 2×N paths it costs more than the backup's peak. */
  private checksumIndex(): ChecksumIndex {
    return ChecksumIndex.fromPairs(this.entryPairs(), this.plainEntries.length + 2 * this.objects);
  }

  /** Finishes the tarball, writes the other files and finally the marker. On failure it aborts and rethrows. */
  async commit(): Promise<BackupSummary> {
    await this.tail;
    this.assertOpen();
    this.state = 'committing';
    try {
      this.tar.finish();
      this.gzip.end();
      await this.upload.done();
      // The upload read the digest stream to its end, so every byte has passed through the hash by now.
      if (this.streamError) throw this.streamError;
      const tarballSha = this.digest.hash.digest('hex');
      const names: string[][] = this.listKeys.map(() => []);
      const keyIndex = new Map(this.listKeys.map((key, i) => [key, i]));
      for (const item of this.items()) names[keyIndex.get(item.listKey)!]!.push(item.listName);
      const resourceList: Record<string, string[]> = {};
      for (const key of [...this.listKeys].sort()) resourceList[key] = names[keyIndex.get(key)!]!.sort();
      const files: Record<string, string> = {};
      const toStore: BackupFile[] = [];
      const addFile = (name: string, content: Buffer, contentType: string) => {
        files[name] = sha256(content);
        toStore.push({ name, content, contentType });
      };
      const veleroFiles = this.pending.fileNames;
      addFile(veleroFiles.resourceList, gzipSync(JSON.stringify(resourceList)), 'application/gzip');
      addFile(veleroFiles.logs, gzipSync(this.logChunks.join('')), 'application/gzip');
      addFile(veleroFiles.results, gzipSync(JSON.stringify({ errors: this.errors, warnings: this.warnings })), 'application/gzip');
      for (const [name, content, type] of this.ownFiles) addFile(name, content, type);
      const completed = this.options.now?.() ?? new Date();
      const manifest = withoutEntries(ManifestSchema.parse({
        formatVersion: MANIFEST_FORMAT_VERSION,
        veleroFormatVersion: VELERO_FORMAT_VERSION,
        tool: { name: 'kubeflow-upgrader', version: this.options.toolVersion },
        backupId: this.id,
        description: this.options.description,
        created: this.started.toISOString(),
        completed: completed.toISOString(),
        source: this.options.source ?? {},
        scope: this.options.scope,
        counts: this.counts,
        objects: this.objects,
        bytes: this.digest.bytes,
        // entries are attached after parsing: they are made here, and checking 2×N digests against a regex is costly
        checksums: { algorithm: 'sha256', tarball: tarballSha, entries: {}, files },
        encryption: this.sealer ? { ...this.sealer.parameters, sealedSecrets: this.sealedSecrets } : null,
        volumes: this.volumes,
        inventory: { applications: this.applications },
        crds: this.crds,
        warnings: this.warningCount,
        errors: this.errorCount,
        extras: this.extras,
      } satisfies ManifestInput));
      const encoded = streamManifest(manifest, this.entryPairs(), this.options.encryptionKey);
      await this.pending.commit({
        files: toStore,
        manifest: encoded.stream,
        marker: async () => {
          const digests = await encoded.digests;
          const marker = veleroBackupObject({
            id: this.id,
            started: this.started,
            completed,
            namespaces: this.options.scope.namespaces ?? [],
            items: this.objects,
            errors: this.errorCount,
            warnings: this.warningCount,
            storageLocation: this.options.storageLocation ?? 'default',
            toolVersion: this.options.toolVersion,
            manifestSha256: digests.sha256,
            manifestHmac: digests.hmac,
          });
          return Buffer.from(JSON.stringify(marker, null, 1));
        },
      });
      this.state = 'committed';
      return {
        id: this.id, location: this.location, objects: this.objects, bytes: this.digest.bytes,
        sealedSecrets: this.sealedSecrets, clearSecrets: this.clearSecrets, manifest, checksums: () => this.checksumIndex(),
      };
    } catch (error) {
      this.state = 'open';
      // The original failure is the one worth reporting; cleanup problems would only hide it.
      await this.abort().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Stops the backup and removes every file under its folder, so no marker (and no partial data) remains.
   * Safe to call more than once and after a failed commit.
   */
  async abort(): Promise<void> {
    if (this.state === 'aborted' || this.state === 'committed') return;
    this.state = 'aborted';
    this.streamError ??= new Error(`Backup ${this.id} was aborted.`);
    this.gzip.destroy();
    await this.pending.abort();
  }
}

function file(problems: Problems, message: string, namespace: string | undefined): void {
  if (namespace === undefined) problems.cluster.push(message);
  else (problems.namespaces[namespace] ??= []).push(message);
}
