// The JSON a copy Job leaves in its termination message, validated: the only way its result reaches the engine.
import { z } from 'zod';

export const CopyFailure = z.object({ ok: z.literal(false), error: z.string().min(1), detail: z.string().default('') });

export const MysqlCopySuccess = z.object({
  ok: z.literal(true),
  database: z.string(),
  path: z.string(),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  /** tables and views in the dumped database (backups only) */
  tables: z.number().int().nonnegative().optional(),
  tool: z.string(),
  rclone: z.string(),
  /** with `encryption-key`: the short id of the snapshot restic made of it ('' for a database without tables, not stored) */
  restic: z.string().regex(/^([0-9a-f]{8})?$/).optional(),
});

export const MinioCopySuccess = z.object({
  ok: z.literal(true),
  bucket: z.string(),
  path: z.string(),
  objects: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  listingSha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  tool: z.string(),
  /** with `encryption-key`: the short id of the snapshot restic made of the bucket */
  restic: z.string().regex(/^[0-9a-f]{8}$/).optional(),
});

export type MysqlCopySuccess = z.infer<typeof MysqlCopySuccess>;
export type MinioCopySuccess = z.infer<typeof MinioCopySuccess>;

export type CopyOutcome<T> = { ok: true; value: T } | { ok: false; error: string; detail: string };

/** Reads a termination message; anything unreadable is a failure that says so. */
export function parseCopyOutcome<T>(message: string | undefined, success: z.ZodType<T>): CopyOutcome<T> {
  if (!message || message.trim() === '') {
    return { ok: false, error: 'the copy Job ended without reporting an outcome', detail: '' };
  }
  let document: unknown;
  try {
    document = JSON.parse(message);
  } catch {
    return { ok: false, error: 'the copy Job reported an outcome that is not JSON', detail: message.slice(0, 300) };
  }
  const failure = CopyFailure.safeParse(document);
  if (failure.success) return { ok: false, error: failure.data.error, detail: failure.data.detail };
  const parsed = success.safeParse(document);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, error: 'the copy Job reported an outcome of the wrong shape', detail: message.slice(0, 300) };
}
