// The archive's upload against a raw multipart PUT of the same bytes to the same s3rver, same run (issue 9 item 4).
// Two things are timed:
//   upload stage: the tarball's bytes through what the writer puts between gzip and S3 (the sha256/count pass-through
//                 and ObjectStore.startUpload with the product's part size and queue) vs @aws-sdk/lib-storage's Upload
//                 with the SDK's defaults, the multipart PUT a user would script; alternated, best of 3 each.
//   writer end to end: BackupWriter from objects to a committed backup (JSON, sha256, tar, gzip, upload), reported
//                 for trend-watching: its items carry incompressible 16 KiB fillers, so gzip is its largest cost.
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
import { Digest } from '../src/archive/writer.ts';
import { startWriter } from '../tests/support/backup-store.ts';
import { ObjectStore } from '../src/store/objects.ts';
import { S3BackupStore } from '../src/store/backup-store.ts';
import { backupKeys } from '../src/store/layout.ts';
import { NOTEBOOKS, noise, notebook, s3ClientFor } from '../tests/archive/fixtures.ts';
import { startS3Server } from '../tests/support/s3/server.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const BUCKET = 'bench';
/** what gzip hands the pass-through at a time in the writer (Node's zlib chunk) */
const GZIP_CHUNK = 16 * 1024;

function chunksOf(bytes: Buffer): Readable {
  return Readable.from((function* () {
    for (let at = 0; at < bytes.length; at += GZIP_CHUNK) yield bytes.subarray(at, at + GZIP_CHUNK);
  })());
}

export default async function archiveUpload(opts: BenchOptions): Promise<BenchRow[]> {
  const server = await startS3Server({ buckets: [BUCKET] });
  try {
    const client = s3ClientFor(server);
    const store = new ObjectStore({ client, bucket: BUCKET, prefix: 'bench' });
    const items = opts.quick ? 400 : Math.max(1000, opts.profiles * 4);
    // 64 distinct fillers repeat 1 MiB apart, beyond gzip's 32 KiB window, so the bytes stay honest.
    const fillers = Array.from({ length: 64 }, (_, i) => noise(16 * 1024, i + 1));

    const archiveStart = performance.now();
    const writer = await startWriter(new S3BackupStore(store), { toolVersion: 'bench', scope: { action: 'bench' } });
    for (let i = 0; i < items; i++) {
      const nb = notebook(`ns-${i % 50}`, `nb-${i}`);
      nb.metadata.annotations = { note: fillers[i % 64]! };
      await writer.addItem(NOTEBOOKS, nb);
    }
    const summary = await writer.commit();
    const archiveSeconds = (performance.now() - archiveStart) / 1000;
    const tarball = await store.getBytes(backupKeys(summary.id).tarball);

    const rounds = opts.quick ? 1 : 3;
    let ours = Infinity;
    let raw = Infinity;
    for (let round = 0; round < rounds; round++) {
      const ourStart = performance.now();
      const digest = new Digest();
      chunksOf(tarball).pipe(digest);
      await store.startUpload(`backups/stage-${round}/tarball.tar.gz`, digest, 'application/gzip').done();
      ours = Math.min(ours, performance.now() - ourStart);
      if (digest.bytes !== tarball.length) throw new Error(`the upload stage passed ${digest.bytes} bytes of ${tarball.length}`);

      const rawStart = performance.now();
      await new Upload({ client, params: { Bucket: BUCKET, Key: `bench/backups/raw-${round}/raw.bin`, Body: chunksOf(tarball) } }).done();
      raw = Math.min(raw, performance.now() - rawStart);
    }
    await store.deleteFolder('backups/');

    const mib = tarball.length / 2 ** 20;
    const stageRatio = raw / ours;
    const stageNote = `${mib.toFixed(1)} MiB tarball (${items} items); best of ${rounds}, alternated; ours: sha256 pass-through + ObjectStore.startUpload (the product's 5 MiB parts, queue 4); raw: lib-storage Upload, SDK defaults`;
    return [
      { bench: 'archive-upload', metric: 'archive upload stage', value: round2(mib / (ours / 1000)), unit: 'MiB/s', note: `${Math.round(ours)} ms; ${stageNote}` },
      { bench: 'archive-upload', metric: 'raw multipart PUT of the same bytes', value: round2(mib / (raw / 1000)), unit: 'MiB/s', note: `${Math.round(raw)} ms` },
      { bench: 'archive-upload', metric: 'archive upload / raw PUT throughput', value: round2(stageRatio), unit: 'ratio', target: '>= 0.8', verdict: stageRatio >= 0.8 ? 'met' : 'missed', note: stageNote },
      { bench: 'archive-upload', metric: 'writer end to end (JSON, sha256, tar, gzip, upload)', value: round2(summary.objects / archiveSeconds), unit: 'items/s', note: `${(archiveSeconds * 1000).toFixed(0)} ms for ${items} items with incompressible 16 KiB fillers; ${mib.toFixed(1)} MiB gzipped` },
    ];
  } finally {
    await server.stop();
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
