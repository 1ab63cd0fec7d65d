// Archive upload throughput against a raw multipart PUT of the same number of bytes to the same s3rver, same run:
// the ratio shows what tar + gzip + sha256 + backpressure cost on top of the transfer itself.
import { Readable } from 'node:stream';
import { BackupWriter } from '../src/archive/writer.ts';
import { ObjectStore } from '../src/store/objects.ts';
import { backupKeys } from '../src/store/layout.ts';
import { NOTEBOOKS, noise, notebook, s3ClientFor } from '../tests/archive/fixtures.ts';
import { startS3Server } from '../tests/support/s3/server.ts';

export interface BenchRow {
  bench: string;
  metric: string;
  value: number;
  unit: string;
  target?: number;
  verdict?: 'pass' | 'fail';
  note?: string;
}

export default async function archiveUpload(opts: { profiles: number; json: boolean; quick: boolean; workDir: string }): Promise<BenchRow[]> {
  const server = await startS3Server({ buckets: ['bench'] });
  try {
    const store = new ObjectStore({ client: s3ClientFor(server), bucket: 'bench', prefix: 'bench' });
    const items = opts.quick ? 400 : Math.max(1000, opts.profiles * 4);
    // 64 distinct fillers repeat 1 MiB apart, beyond gzip's 32 KiB window, so the bytes stay honest.
    const fillers = Array.from({ length: 64 }, (_, i) => noise(16 * 1024, i + 1));

    const archiveStart = performance.now();
    const writer = await BackupWriter.start({ store, toolVersion: 'bench', scope: { action: 'bench' } });
    for (let i = 0; i < items; i++) {
      const nb = notebook(`ns-${i % 50}`, `nb-${i}`);
      nb.metadata.annotations = { note: fillers[i % 64]! };
      await writer.addItem(NOTEBOOKS, nb);
    }
    const summary = await writer.commit();
    const archiveSeconds = (performance.now() - archiveStart) / 1000;

    // The raw baseline uploads as many bytes as the compressed tarball, in the same part size.
    const tarballBytes = summary.bytes;
    const block = Buffer.from(noise(1024 * 1024, 9));
    const blocks = function* () {
      for (let left = tarballBytes; left > 0; left -= block.length) yield left >= block.length ? block : block.subarray(0, left);
    };
    const rawStart = performance.now();
    await store.put('backups/raw/raw.bin', Readable.from(blocks()));
    const rawSeconds = (performance.now() - rawStart) / 1000;
    await store.deleteFolder(backupKeys(summary.id).folder);
    await store.deleteFolder('backups/raw/');

    const mib = tarballBytes / 2 ** 20;
    const ratio = archiveSeconds / rawSeconds;
    const note = `${items} items, ${mib.toFixed(1)} MiB gzipped`;
    return [
      { bench: 'archive-upload', metric: 'archive-throughput', value: round(summary.objects / archiveSeconds), unit: 'items/s', note },
      { bench: 'archive-upload', metric: 'archive-upload-rate', value: round(mib / archiveSeconds), unit: 'MiB/s', note },
      { bench: 'archive-upload', metric: 'raw-put-rate', value: round(mib / rawSeconds), unit: 'MiB/s', note: 'same bytes, multipart PUT' },
      // No target in the issue for this ratio; it is reported for trend-watching only.
      { bench: 'archive-upload', metric: 'archive-vs-raw-time', value: round(ratio), unit: 'x', note: 'archive wall time / raw PUT wall time (the archive also gzips its input)' },
    ];
  } finally {
    await server.stop();
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
