// Reading a restic mover: its termination message (src/volumes/restic/job.ts) and the status lines of its log. The
// field names are restic 0.14's JSON output (restic/restic internal/ui/backup/json.go; cmd/restic/cmd_stats.go).
import type { CopyProgress } from '../outcome.ts';

export interface ResticBackupOutcome {
  files: number;
  bytes: number;
  /** the snapshot's short id, as restic's summary names it (the first 4 bytes of the id in hex) */
  shortId: string;
  /** the full snapshot id, when the Job reported it (a Job of an earlier version, adopted after a crash) */
  snapshot?: string;
  /** bytes restic added to the repository (after deduplication and compression) */
  dataAdded: number;
  filesNew: number;
  filesChanged: number;
  filesUnmodified: number;
}

export interface ResticRestoreOutcome {
  snapshot: string;
  /** files and bytes, when the Job counted them (a Job of an earlier version ran `restic stats`) */
  size?: { files: number; bytes: number };
}

const SNAPSHOT_ID = /^[0-9a-f]{64}$/;
const SHORT_ID = /^[0-9a-f]{8}$/;
const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);

export function parseResticBackup(message: string | undefined): ResticBackupOutcome | undefined {
  try {
    const parsed = JSON.parse(message ?? '') as { volumeMover?: unknown; snapshot?: unknown; summary?: Record<string, unknown>; empty?: unknown };
    const s = parsed.summary;
    if (parsed.volumeMover !== 'restic' || !s || typeof s.snapshot_id !== 'string' || !SHORT_ID.test(s.snapshot_id)) return undefined;
    const shortId = s.snapshot_id;
    const full = typeof parsed.snapshot === 'string' && SNAPSHOT_ID.test(parsed.snapshot) && parsed.snapshot.startsWith(shortId) ? parsed.snapshot : undefined;
    if (parsed.snapshot !== undefined && !full) return undefined;
    const fields = ['total_files_processed', 'total_bytes_processed', 'data_added', 'files_new', 'files_changed', 'files_unmodified'].map((k) => count(s[k]));
    if (fields.some((f) => f === undefined)) return undefined;
    const [files, bytes, dataAdded, filesNew, filesChanged, filesUnmodified] = fields as number[];
    const ids = { shortId, ...(full ? { snapshot: full } : {}) };
    // an empty volume is saved as one empty marker file (src/volumes/restic/job.ts), which is not the volume's
    if (parsed.empty === true) return { files: 0, bytes: 0, ...ids, dataAdded: dataAdded!, filesNew: 0, filesChanged: 0, filesUnmodified: 0 };
    return { files: files!, bytes: bytes!, ...ids, dataAdded: dataAdded!, filesNew: filesNew!, filesChanged: filesChanged!, filesUnmodified: filesUnmodified! };
  } catch {
    return undefined;
  }
}

export function parseResticRestore(message: string | undefined): ResticRestoreOutcome | undefined {
  try {
    const parsed = JSON.parse(message ?? '') as { volumeMover?: unknown; restored?: unknown; size?: { total_size?: unknown; total_file_count?: unknown } };
    if (parsed.volumeMover !== 'restic' || typeof parsed.restored !== 'string') return undefined;
    const files = count(parsed.size?.total_file_count);
    const bytes = count(parsed.size?.total_size);
    return { snapshot: parsed.restored, ...(files !== undefined && bytes !== undefined ? { size: { files, bytes } } : {}) };
  } catch {
    return undefined;
  }
}

/** The newest status line of a running backup: files_done of total_files, bytes_done of total_bytes. */
export function parseResticProgress(log: string): CopyProgress | undefined {
  for (const line of log.split('\n').reverse()) {
    if (!line.includes('"message_type":"status"')) continue;
    try {
      const s = JSON.parse(line) as Record<string, unknown>;
      const n = (key: string) => count(s[key]) ?? 0;
      return { files: n('files_done'), totalFiles: n('total_files'), bytes: n('bytes_done'), totalBytes: n('total_bytes') };
    } catch {
      continue; // a line cut by the tail
    }
  }
  return undefined;
}

/**
 * One sentence out of a failed restic mover's stderr: restic's fatal line ("Fatal: ...") or its last error line, with
 * any known secret masked as a last line of defence.
 */
export function resticFailureReason(message: string | undefined, secrets: string[]): string | undefined {
  if (!message) return undefined;
  // restic's closing "There were N errors" says only that something went wrong; the lines before it say what.
  const lines = message.split('\n').map((l) => l.trim()).filter((l) => l && !/^(Fatal: )?There were \d+ errors?$/.test(l));
  const forged = lines.find((l) => /ciphertext verification failed|hash does not match|is damaged/.test(l));
  if (forged) {
    const detail = forged.length > 200 ? `${forged.slice(0, 197)}...` : forged;
    return `restic found data in the repository that fails its authentication, so a pack was changed or damaged in the bucket (${detail})`;
  }
  const chosen = [...lines].reverse().find((l) => /^Fatal: /.test(l))
    ?? [...lines].reverse().find((l) => /error|Error|failed|invalid|Load\(|ciphertext/.test(l))
    ?? lines.at(-1);
  if (!chosen) return undefined;
  let reason = chosen.replace(/^Fatal: /, '');
  for (const secret of secrets) if (secret.length >= 4) reason = reason.split(secret).join('***');
  return reason.length > 300 ? `${reason.slice(0, 297)}...` : reason;
}
