// backup-immutability (the charm's config) and --immutability (the CLI): how long every object a backup needs stays
// under S3 Object Lock retention, and in which mode. The syntax is what an operator reads at once: a duration, then
// optionally the mode, `30d` (COMPLIANCE, the default: nobody can delete or shorten it, the bucket's owner included)
// or `30d governance` (whoever holds s3:BypassGovernanceRetention and sends its header may). Retention modes as S3
// defines them (AWS S3 user guide, "Object Lock": retention modes; Ceph's radosgw enforces the same, ceph/ceph
// src/rgw/rgw_op.cc RGWDeleteObj and RGWPutObjRetention).
import { z } from 'zod';

export type RetentionMode = 'COMPLIANCE' | 'GOVERNANCE';

export interface Immutability {
  mode: RetentionMode;
  /** how long after a backup starts its objects stay retained */
  seconds: number;
  /** as the operator wrote it, normalised (`30d`, `30d governance`): for sentences */
  text: string;
}

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800, y: 31_536_000 } as const;
/** S3 refuses a retain-until date beyond this (AWS: at most 100 years); a longer one is surely a typo */
const MAX_SECONDS = 100 * UNIT_SECONDS.y;
const SYNTAX = /^(\d{1,12})\s*([smhdwy])(?:\s+(compliance|governance))?$/i;
const EXAMPLE = 'a duration and an optional mode, like 30d, 12w compliance or 90d governance (units s, m, h, d, w, y)';

/** The option's value: '' (off) → undefined; otherwise the policy, or a zod issue naming the form it takes. */
export const ImmutabilitySchema = z
  .string()
  .default('')
  .transform((raw, ctx): Immutability | undefined => {
    const text = raw.trim();
    if (text === '' || text.toLowerCase() === 'off') return undefined;
    const match = SYNTAX.exec(text.replace(/\s+/g, ' '));
    if (!match) {
      ctx.addIssue({ code: 'custom', message: `must be ${EXAMPLE}, not "${text.slice(0, 40)}"` });
      return z.NEVER;
    }
    const seconds = Number(match[1]) * UNIT_SECONDS[match[2]!.toLowerCase() as keyof typeof UNIT_SECONDS];
    if (seconds < 1 || seconds > MAX_SECONDS) {
      ctx.addIssue({ code: 'custom', message: `must be between 1s and 100y, not "${text.slice(0, 40)}"` });
      return z.NEVER;
    }
    const mode: RetentionMode = match[3]?.toLowerCase() === 'governance' ? 'GOVERNANCE' : 'COMPLIANCE';
    return { mode, seconds, text: `${match[1]}${match[2]!.toLowerCase()}${mode === 'GOVERNANCE' ? ' governance' : ''}` };
  });

/** The policy, undefined when off, or the one sentence that says what is wrong with `raw` (`name` is the setting's). */
export function parseImmutability(raw: string | undefined, name: string): { ok: true; immutability: Immutability | undefined } | { ok: false; problem: string } {
  const parsed = ImmutabilitySchema.safeParse(raw ?? '');
  if (parsed.success) return { ok: true, immutability: parsed.data };
  return { ok: false, problem: `${name} ${parsed.error.issues[0]?.message ?? 'is invalid'}.` };
}

/** The date a backup that starts at `started` is retained until. */
export function retainUntil(immutability: Immutability, started: Date): Date {
  return new Date(started.getTime() + immutability.seconds * 1_000);
}
