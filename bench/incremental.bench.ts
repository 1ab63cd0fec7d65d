// Incremental volume backups: 1 GiB in 500 files on 5 PVCs backed up three times through the mover Jobs (simulated
// kubelet, this machine's rclone, s3rver), in the same run: a first backup into an empty location, a second of the
// unchanged volumes reusing the first (its copy copied inside the bucket, the volume synced onto it), and a third after 1 % of the files were rewritten at the same
// size. Bytes uploaded are read from the S3 server's request log (bodies of PUTs and part uploads that carry no
// x-amz-copy-source), not from the mover's own account. Each backup's CPU is read apart: the movers' (sh and rclone,
// the product's cost on the cluster's nodes), the S3 server's (its own process, a real S3's cost on its own machines)
// and this process's (the embedded API server, the simulated kubelet and the mover orchestration).
// The test S3 server performs a server-side copy by linking the body (tests/support/s3/shared-copies.ts); the first and
// second backups are run once more in the same run against s3rver as published, which copies the bytes on this
// machine's cores, so the share of the ratio that is the test server's copy shows beside it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { newBackupId } from '../src/store/layout.ts';
import { backupVolumes, type PvcRef } from '../src/volumes/mover.ts';
import { readRequestLog, startS3Server, type S3ServerHandle } from '../tests/support/s3/server.ts';
import { createBoundPvc, s3For, startVolumeCluster } from '../tests/volumes/helpers.ts';
import { cpuSeconds, cpuSpent } from './cpu.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const MIB = 1024 * 1024;
const PVCS = 5;
const FILES = 500;

export default async function incrementalBench(opts: BenchOptions): Promise<BenchRow[]> {
  const totalBytes = (opts.quick ? 64 : 1024) * MIB;
  const fileBytes = Math.floor(totalBytes / FILES);
  const logDir = mkdtempSync(join(tmpdir(), 'bench-incremental-'));
  const requestLog = join(logDir, 'requests.jsonl');
  const vc = await startVolumeCluster({ bindingMode: 'Immediate', readOnlyViews: 'bind-mount' });
  const servers: S3ServerHandle[] = [];
  try {
    const pvcs: PvcRef[] = [];
    const files: string[] = [];
    for (let p = 0; p < PVCS; p++) {
      const name = `workspace-${p}`;
      const folder = await createBoundPvc(vc, 'alice', name);
      pvcs.push({ namespace: 'alice', name });
      for (let f = 0; f < FILES / PVCS; f++) {
        const dir = join(folder, `run-${f % 4}`);
        mkdirSync(dir, { recursive: true });
        const file = join(dir, `shard-${f}.bin`);
        writeFileSync(file, randomBytes(fileBytes));
        files.push(file);
      }
    }
    const uploadedBytes = (id: string) => readRequestLog(requestLog)
      .filter((e) => e.path.includes(`/backups/${id}/volumes/`) && (e.method === 'PUT' || e.method === 'POST') && !e.copySource)
      .reduce((sum, e) => sum + e.contentLength, 0);
    const backup = async (s3: S3ServerHandle, copyFrom?: string) => {
      // the tree's dirty pages are written back before the clock starts, not billed to the copy
      spawnSync('sync', { stdio: 'ignore' });
      writeFileSync(requestLog, '');
      const id = newBackupId();
      const [here0, server0] = [cpuSeconds('self'), cpuSeconds(s3.pid)];
      const t0 = performance.now();
      await backupVolumes(vc.kube, {
        backupId: id, s3: s3For(s3, 'incremental'), pvcs,
        ...(copyFrom ? { copyFrom: new Map(pvcs.map((p) => [`${p.namespace}/${p.name}`, copyFrom])) } : {}),
      });
      const ms = performance.now() - t0;
      const [here, server] = [cpuSpent(here0, cpuSeconds('self')), cpuSpent(server0, cpuSeconds(s3.pid))];
      const cpu = { mover: here.children, server: server.own, cluster: here.own };
      // what the S3 server was asked during the backup, by kind, for the note
      const kinds = new Map<string, number>();
      for (const e of readRequestLog(requestLog)) {
        const kind = `${e.method}${e.copySource ? ' (copy)' : ''}`;
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      return { id, ms, cpu, uploaded: uploadedBytes(id), requests: [...kinds].map(([k, n]) => `${n} ${k}`).join(', ') };
    };
    const server = async (serverSideCopy: 'link' | 'bytes') => {
      const s3 = await startS3Server({ buckets: ['incremental'], requestLog, serverSideCopy });
      servers.push(s3);
      return s3;
    };

    const loadBefore = loadavg()[0]!;
    const linked = await server('link');
    const first = await backup(linked);
    const second = await backup(linked, first.id);
    // 1 % of the files rewritten in place at the same size: only their checksums differ
    const changed = files.filter((_, i) => i % 100 === 0);
    for (const file of changed) writeFileSync(file, randomBytes(fileBytes));
    const third = await backup(linked, second.id);
    // the same two backups against s3rver as published, whose server-side copy copies the bytes on this machine
    const published = await server('bytes');
    const firstPublished = await backup(published);
    const secondPublished = await backup(published, firstPublished.id);
    const loadAfter = loadavg()[0]!;

    const data = fileBytes * FILES;
    const timeRatio = second.ms / first.ms;
    const publishedRatio = secondPublished.ms / firstPublished.ms;
    const moverRatio = second.cpu.mover / first.cpu.mover;
    const uploadedShare = (second.uploaded / data) * 100;
    const changedRatio = third.uploaded / (changed.length * fileBytes);
    const seconds = (n: number) => `${n.toFixed(1)} s`;
    const times = (a: typeof first, b: typeof first) => `first ${seconds(a.ms / 1000)}, second ${seconds(b.ms / 1000)}`;
    const cpuNote = (b: typeof first) => `movers ${seconds(b.cpu.mover)}, S3 server ${seconds(b.cpu.server)}, cluster and orchestration ${seconds(b.cpu.cluster)}`;
    return [
      {
        bench: 'incremental', metric: 'second backup / first, wall time', value: Number(timeRatio.toFixed(3)), unit: 'ratio',
        target: '<= 0.2', verdict: timeRatio <= 0.2 ? 'met' : 'missed',
        note: `${(data / MIB).toFixed(0)} MiB in ${FILES} files on ${PVCS} PVCs; ${times(first, second)}; load average ${loadBefore.toFixed(1)} before the run, ${loadAfter.toFixed(1)} after`,
      },
      {
        bench: 'incremental', metric: 'the same, S3 server copying the bytes', value: Number(publishedRatio.toFixed(3)), unit: 'ratio',
        note: `s3rver as published, in the same run: ${times(firstPublished, secondPublished)}; CPU of its second backup: ${cpuNote(secondPublished)}`,
      },
      {
        bench: 'incremental', metric: 'second backup / first, mover CPU', value: Number(moverRatio.toFixed(3)), unit: 'ratio',
        note: `CPU of the first backup: ${cpuNote(first)}; of the second: ${cpuNote(second)}`,
      },
      {
        bench: 'incremental', metric: 'second backup, bytes uploaded', value: Number(uploadedShare.toFixed(3)), unit: '% of data',
        target: '<= 1', verdict: uploadedShare <= 1 ? 'met' : 'missed', note: `${second.uploaded} bytes of file bodies in the S3 server's request log; requests: ${second.requests}`,
      },
      {
        bench: 'incremental', metric: '1 % changed: bytes uploaded / bytes changed', value: Number(changedRatio.toFixed(3)), unit: 'ratio',
        target: '<= 1.1', verdict: changedRatio <= 1.1 ? 'met' : 'missed',
        note: `${changed.length} files of ${fileBytes} bytes rewritten at the same size; ${third.uploaded} bytes uploaded in ${seconds(third.ms / 1000)}`,
      },
    ];
  } finally {
    await vc.stop();
    for (const s3 of servers) await s3.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}
