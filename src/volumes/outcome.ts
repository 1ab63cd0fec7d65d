// Reading a finished mover Job: its conditions say whether it worked, its Pod's termination message says what moved
// (the plain-file engine's rclone stats here; the restic engine's summary in restic/outcome.ts).
import type { KubeObject } from '../kube/types.ts';
import { MOVER_CONTAINER } from './job.ts';

export { jobFailedCondition, jobFinished, jobSucceeded } from '../jobs/outcome.ts';

export interface MovedTree {
  files: number;
  bytes: number;
  checksumVerified: boolean;
  /** files and bytes copied inside the bucket from an earlier backup; undefined when this rclone does not count them apart */
  reused?: { files: number; bytes: number };
}

/** The mover container's termination message from the most recently finished Pod of a Job. */
export function terminationMessage(pods: KubeObject[]): string | undefined {
  let latest: { at: string; message: string } | undefined;
  for (const pod of pods) {
    const statuses = (pod.status as { containerStatuses?: unknown[] } | undefined)?.containerStatuses ?? [];
    for (const raw of statuses) {
      const s = raw as { name?: string; state?: { terminated?: { message?: string; finishedAt?: string } } };
      const terminated = s.state?.terminated;
      if (s.name !== MOVER_CONTAINER || !terminated) continue;
      const at = terminated.finishedAt ?? '';
      if (!latest || at >= latest.at) latest = { at, message: terminated.message ?? '' };
    }
  }
  return latest?.message;
}

interface CopyStats {
  bytes?: unknown;
  transfers?: unknown;
  checks?: unknown;
  errors?: unknown;
  serverSideCopies?: unknown;
  serverSideCopyBytes?: unknown;
}

/**
 * The JSON a successful mover writes: rclone's final stats. Files = transferred (hash-verified after transfer) plus
 * checked (already there, equal by hash under --checksum); bytes = bytes transferred, the whole tree on a fresh target.
 * A backup that reused an earlier copy (src/volumes/job.ts) adds the finished tree's size (`rclone size --json`: count,
 * bytes); its stats are the sync's, whose transfers are the uploads, so the rest of the tree was copied inside the bucket.
 */
export function parseMovedTree(message: string | undefined): MovedTree | undefined {
  if (!message) return undefined;
  try {
    const parsed = JSON.parse(message) as { volumeMover?: unknown; copy?: { stats?: CopyStats }; tree?: { count?: unknown; bytes?: unknown } };
    const stats = parsed.copy?.stats;
    const numbers = [stats?.bytes, stats?.transfers, stats?.checks, stats?.errors];
    if (parsed.volumeMover !== 2 || !numbers.every((n) => typeof n === 'number')) return undefined;
    const [bytes, transfers, checks, errors] = numbers as number[];
    if (parsed.tree !== undefined) {
      const { count, bytes: treeBytes } = parsed.tree;
      if (typeof count !== 'number' || typeof treeBytes !== 'number') return undefined;
      return {
        files: count, bytes: treeBytes, checksumVerified: errors === 0,
        reused: { files: Math.max(0, count - transfers!), bytes: Math.max(0, treeBytes - bytes!) },
      };
    }
    // rclone 1.64 and later count server-side copies apart as well as in bytes and transfers (fs/accounting/stats.go
    // AddServerSideCopy, accounting.go ServerSideCopyEnd); earlier ones only in bytes and transfers.
    const copies = stats?.serverSideCopies;
    const copyBytes = stats?.serverSideCopyBytes;
    const reused = typeof copies === 'number' && typeof copyBytes === 'number' ? { reused: { files: copies, bytes: copyBytes } } : {};
    return { files: transfers! + checks!, bytes: bytes!, checksumVerified: errors === 0, ...reused };
  } catch {
    return undefined;
  }
}

/** What a running copy has done so far, from rclone's periodic stats. */
export interface CopyProgress {
  files: number;
  totalFiles: number;
  bytes: number;
  totalBytes: number;
}

/**
 * The newest stats line in a piece of a running mover's log. rclone's JSON log (--use-json-log) carries them as a
 * `stats` object with bytes, totalBytes, transfers, totalTransfers, checks and totalChecks (rclone fs/accounting/stats.go).
 */
export function parseCopyProgress(log: string): CopyProgress | undefined {
  for (const line of log.split('\n').reverse()) {
    if (!line.includes('"stats"')) continue;
    try {
      const stats = (JSON.parse(line) as { stats?: Record<string, unknown> }).stats;
      const n = (key: string) => (typeof stats?.[key] === 'number' ? stats[key] as number : 0);
      if (!stats || typeof stats.bytes !== 'number') continue;
      return { files: n('transfers') + n('checks'), totalFiles: n('totalTransfers') + n('totalChecks'), bytes: n('bytes'), totalBytes: n('totalBytes') };
    } catch {
      continue; // a line cut by the tail, or not JSON
    }
  }
  return undefined;
}

/**
 * One line out of a failed mover's log tail: rclone ends with "Failed to <verb>: <why>"; timestamps and
 * request-id noise are dropped, and anything that equals a known secret is masked as a last line of defence.
 */
export function failureReason(message: string | undefined, secrets: string[]): string | undefined {
  if (!message) return undefined;
  // rclone logs JSON lines in the mover (--use-json-log); plain lines come from anything else in the container.
  const text = message.split('\n').map((line) => {
    try {
      const entry = JSON.parse(line) as { msg?: unknown };
      return typeof entry.msg === 'string' ? entry.msg : line;
    } catch {
      return line;
    }
  }).join('\n');
  const lines = text.split('\n').map((l) => l.replace(/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}\s+/, '').trim()).filter(Boolean);
  const chosen = [...lines].reverse().find((l) => /^Failed to /.test(l))
    ?? [...lines].reverse().find((l) => /ERROR|error/.test(l))
    ?? lines.at(-1);
  if (!chosen) return undefined;
  let reason = chosen.replace(/^Failed to \w+( with \d+ errors)?:\s*(last error was:\s*)?/, '');
  for (const secret of secrets) if (secret.length >= 4) reason = reason.split(secret).join('***');
  reason = reason.replace(/\s+status code: .*$/, '');
  return reason.length > 300 ? `${reason.slice(0, 297)}...` : reason;
}
