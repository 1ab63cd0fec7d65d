// Incremental volume backups: 1 GiB in 500 files on 5 PVCs backed up three times through the mover Jobs (simulated
// kubelet, this machine's rclone, s3rver), in the same run: a first backup into an empty location, a second of the
// unchanged volumes pointed at the first (--copy-dest), and a third after 1 % of the files were rewritten at the same
// size. Bytes uploaded are read from the S3 server's request log (bodies of PUTs and part uploads that carry no
// x-amz-copy-source), not from the mover's own account.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newBackupId } from '../src/store/layout.ts';
import { backupVolumes, type PvcRef } from '../src/volumes/mover.ts';
import { readRequestLog, startS3Server } from '../tests/support/s3/server.ts';
import { createBoundPvc, s3For, startVolumeCluster } from '../tests/volumes/helpers.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const MIB = 1024 * 1024;
const PVCS = 5;
const FILES = 500;

export default async function incrementalBench(opts: BenchOptions): Promise<BenchRow[]> {
  const totalBytes = (opts.quick ? 64 : 1024) * MIB;
  const fileBytes = Math.floor(totalBytes / FILES);
  const logDir = mkdtempSync(join(tmpdir(), 'bench-incremental-'));
  const requestLog = join(logDir, 'requests.jsonl');
  const s3 = await startS3Server({ buckets: ['incremental'], requestLog });
  const vc = await startVolumeCluster({ bindingMode: 'Immediate', readOnlyViews: 'bind-mount' });
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
    const settings = s3For(s3, 'incremental');
    const uploadedBytes = (id: string) => readRequestLog(requestLog)
      .filter((e) => e.path.includes(`/backups/${id}/volumes/`) && (e.method === 'PUT' || e.method === 'POST') && !e.copySource)
      .reduce((sum, e) => sum + e.contentLength, 0);
    const backup = async (copyFrom?: string) => {
      // the tree's dirty pages are written back before the clock starts, not billed to the copy
      spawnSync('sync', { stdio: 'ignore' });
      writeFileSync(requestLog, '');
      const id = newBackupId();
      const t0 = performance.now();
      await backupVolumes(vc.kube, {
        backupId: id, s3: settings, pvcs,
        ...(copyFrom ? { copyFrom: new Map(pvcs.map((p) => [`${p.namespace}/${p.name}`, copyFrom])) } : {}),
      });
      const ms = performance.now() - t0;
      // what the S3 server was asked during the backup, by kind, for the note
      const kinds = new Map<string, number>();
      for (const e of readRequestLog(requestLog)) {
        const kind = `${e.method}${e.copySource ? ' (copy)' : ''}`;
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      return { id, ms, uploaded: uploadedBytes(id), requests: [...kinds].map(([k, n]) => `${n} ${k}`).join(', ') };
    };

    const first = await backup();
    const second = await backup(first.id);
    // 1 % of the files rewritten in place at the same size: only their checksums differ
    const changed = files.filter((_, i) => i % 100 === 0);
    for (const file of changed) writeFileSync(file, randomBytes(fileBytes));
    const third = await backup(second.id);

    const data = fileBytes * FILES;
    const timeRatio = second.ms / first.ms;
    const uploadedShare = (second.uploaded / data) * 100;
    const changedRatio = third.uploaded / (changed.length * fileBytes);
    const setup = `${(data / MIB).toFixed(0)} MiB in ${FILES} files on ${PVCS} PVCs; first ${(first.ms / 1000).toFixed(1)} s, second ${(second.ms / 1000).toFixed(1)} s`;
    return [
      {
        bench: 'incremental', metric: 'second backup / first, wall time', value: Number(timeRatio.toFixed(3)), unit: 'ratio',
        target: '<= 0.2', verdict: timeRatio <= 0.2 ? 'met' : 'missed', note: setup,
      },
      {
        bench: 'incremental', metric: 'second backup, bytes uploaded', value: Number(uploadedShare.toFixed(3)), unit: '% of data',
        target: '<= 1', verdict: uploadedShare <= 1 ? 'met' : 'missed', note: `${second.uploaded} bytes of file bodies in the S3 server's request log; requests: ${second.requests}`,
      },
      {
        bench: 'incremental', metric: '1 % changed: bytes uploaded / bytes changed', value: Number(changedRatio.toFixed(3)), unit: 'ratio',
        target: '<= 1.1', verdict: changedRatio <= 1.1 ? 'met' : 'missed',
        note: `${changed.length} files of ${fileBytes} bytes rewritten at the same size; ${third.uploaded} bytes uploaded in ${(third.ms / 1000).toFixed(1)} s`,
      },
    ];
  } finally {
    await vc.stop();
    await s3.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}
