// Items spooled to local files, one JSON line per object and one file per restore step, so that an archive larger
// than memory is read from S3 once and then applied step by step in restore order. The folder is private to this
// process (0700) and removed when the restore ends; sealed Secrets stay sealed on disk.
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import type { KubeObject } from '../kube/types.ts';

export class Spool {
  private readonly files = new Map<string, { path: string; stream: WriteStream; count: number }>();

  private constructor(private readonly dir: string) {}

  static async create(parent: string = tmpdir()): Promise<Spool> {
    return new Spool(await mkdtemp(join(parent, 'kubeflow-restore-')));
  }

  async append(step: string, object: KubeObject): Promise<void> {
    let file = this.files.get(step);
    if (!file) {
      const path = join(this.dir, `${this.files.size}.jsonl`);
      file = { path, stream: createWriteStream(path, { mode: 0o600 }), count: 0 };
      this.files.set(step, file);
    }
    file.count++;
    if (!file.stream.write(`${JSON.stringify(object)}\n`)) await once(file.stream, 'drain');
  }

  count(step: string): number {
    return this.files.get(step)?.count ?? 0;
  }

  /** Ends every file; call once, after the last append. */
  async seal(): Promise<void> {
    await Promise.all([...this.files.values()].map(async (file) => {
      file.stream.end();
      await once(file.stream, 'finish');
    }));
  }

  async *read(step: string): AsyncGenerator<KubeObject> {
    const file = this.files.get(step);
    if (!file) return;
    const lines = createInterface({ input: createReadStream(file.path), crlfDelay: Infinity });
    for await (const line of lines) if (line) yield JSON.parse(line) as KubeObject;
  }

  async remove(): Promise<void> {
    for (const file of this.files.values()) file.stream.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}
