// Items spooled to one local file, one JSON line per object, so that an archive larger than memory is read from S3
// once and then applied in restore order. The archive is filed by kind, but the restore runs namespace by namespace
// (each namespace's steps in order, many namespaces at once), so the spool keeps an index: for each step and
// namespace, the byte ranges of its lines. Reading one namespace's step is a few positioned reads, never a scan.
// Objects are spooled as the archive holds them (its verified bytes, copied as they are) and made restorable when
// read back: the preflight, which nothing can overlap, then spends no time serializing, and the work moves to the
// phase that waits on the API server anyway.
// The folder is private to this process (0700) and removed when the restore ends; sealed Secrets stay sealed on disk.
import { closeSync, createWriteStream, openSync, readSync, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import type { KubeObject } from '../kube/types.ts';
import { restoresStatus } from '../kubeflow/status-kinds.ts';
import { restorableView } from './normalize.ts';

/** One spooled object as the restore writes it, and the uid it had in the source cluster (to relink its dependents). */
export interface SpooledItem {
  uid: string | undefined;
  object: KubeObject;
  /** the archived status, for the kinds whose status the restore writes back (src/kubeflow/status-kinds.ts) */
  status?: unknown;
}

/**
 * A status with something in it: an empty one (`{}`, null) says nothing a controller decides from, and an object
 * created without status has that already, so it costs no write and no suspend-and-resume.
 */
function hasStatus(status: unknown): boolean {
  if (status === undefined || status === null) return false;
  return typeof status !== 'object' || Object.keys(status).length > 0;
}

/** Lines are written a batch at a time: one write per line cost more than the line's own bytes. */
const BATCH_BYTES = 256 * 1024;
const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.of(NEWLINE);

export class Spool {
  private stream: WriteStream | undefined;
  private size = 0;
  /** step → namespace → [offset, length, offset, length, …]; adjacent lines share one range */
  private readonly index = new Map<string, Map<string, number[]>>();
  private readonly counts = new Map<string, number>();
  private reader: number | undefined;
  private batch: Buffer[] = [];
  private batchBytes = 0;

  private constructor(private readonly dir: string) {}

  static async create(parent: string = tmpdir()): Promise<Spool> {
    return new Spool(await mkdtemp(join(parent, 'kubeflow-restore-')));
  }

  private get path(): string {
    return join(this.dir, 'items.jsonl');
  }

  /**
   * Spools one archived object: `json` is its archived text (one JSON value), `object` the same parsed. The bytes are
   * kept as they are unless they span lines (a pretty-printed foreign archive), which are written compact instead.
   */
  async append(step: string, namespace: string, json: Buffer, object: KubeObject): Promise<void> {
    const line = json.includes(NEWLINE) ? Buffer.from(JSON.stringify(object)) : json;
    const length = line.length + 1;
    let byNamespace = this.index.get(step);
    if (!byNamespace) this.index.set(step, (byNamespace = new Map()));
    const ranges = byNamespace.get(namespace);
    if (!ranges) byNamespace.set(namespace, [this.size, length]);
    else if (ranges[ranges.length - 2]! + ranges[ranges.length - 1]! === this.size) ranges[ranges.length - 1]! += length;
    else ranges.push(this.size, length);
    this.size += length;
    this.counts.set(step, (this.counts.get(step) ?? 0) + 1);
    // held until the batch is joined (a copy), so the caller must not change the bytes meanwhile; the reader never does
    this.batch.push(line, NEWLINE_BYTES);
    this.batchBytes += length;
    if (this.batchBytes >= BATCH_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    this.stream ??= createWriteStream(this.path, { mode: 0o600 });
    const chunk = Buffer.concat(this.batch, this.batchBytes);
    this.batch = [];
    this.batchBytes = 0;
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  count(step: string): number {
    return this.counts.get(step) ?? 0;
  }

  /** the namespaces that have items in `step` */
  namespaces(step: string): string[] {
    return [...(this.index.get(step)?.keys() ?? [])];
  }

  /** Ends the file; call once, after the last append. */
  async seal(): Promise<void> {
    await this.flush();
    if (!this.stream) return;
    this.stream.end();
    await once(this.stream, 'finish');
  }

  /** one namespace's items of one step, in archive order (synchronous: positioned reads of the page cache, see above) */
  readNamespace(step: string, namespace: string): SpooledItem[] {
    const ranges = this.index.get(step)?.get(namespace);
    if (!ranges) return [];
    // Positioned reads of a file this process has just written, so from the page cache: cheap when synchronous.
    // FileHandle.read goes through the thread pool at several times the CPU per call, and on a loaded machine it held
    // the restore's event loop for seconds (docs/performance.md).
    this.reader ??= openSync(this.path, 'r');
    const items: SpooledItem[] = [];
    for (let i = 0; i < ranges.length; i += 2) {
      const buffer = Buffer.allocUnsafe(ranges[i + 1]!);
      const bytesRead = readSync(this.reader, buffer, 0, buffer.length, ranges[i]!);
      if (bytesRead !== buffer.length) throw new Error(`The restore spool ${this.path} was cut short (read ${bytesRead} of ${buffer.length} bytes).`);
      for (const line of buffer.toString('utf8').split('\n')) {
        if (!line) continue;
        const archived = JSON.parse(line) as KubeObject;
        const status = hasStatus(archived.status) && restoresStatus(archived) ? { status: archived.status } : {};
        items.push({ uid: archived.metadata.uid, object: restorableView(archived), ...status });
      }
    }
    return items;
  }

  /** the items of one step, namespace after namespace (only those in `namespaces` when given) */
  async *read(step: string, namespaces?: ReadonlySet<string>): AsyncGenerator<SpooledItem> {
    for (const namespace of this.namespaces(step)) {
      if (namespaces && !namespaces.has(namespace)) continue;
      yield* this.readNamespace(step, namespace);
    }
  }

  async remove(): Promise<void> {
    this.stream?.destroy();
    if (this.reader !== undefined) closeSync(this.reader);
    this.reader = undefined;
    await rm(this.dir, { recursive: true, force: true });
  }
}
