// The ways a restore stops before or while writing, each carrying the one sentence the user sees.
import { KfuError } from '../errors/index.ts';

/** Bad input (unknown backup, unknown Profile, missing key): nothing was written. */
export class RestoreInputError extends KfuError {
  static override readonly errorId = 'RestoreInputError';
  constructor(sentence: string) {
    super(sentence, { kind: 'input' });
  }
}

/** The archive or the target failed preflight; `offenders` lists every item or kind at fault. Nothing was written. */
export class RestoreRefusedError extends KfuError {
  static override readonly errorId = 'RestoreRefusedError';
  constructor(message: string, readonly offenders: readonly string[]) {
    super(message, { kind: 'refused' });
  }
}

/** The restore stopped part-way (conflict-policy=fail, or profile namespaces that never became ready). */
export class RestoreStoppedError extends KfuError {
  static override readonly errorId = 'RestoreStoppedError';
  constructor(sentence: string) {
    super(sentence, { kind: 'failed' });
  }
}

/** "a, b, c" or "a, b, … and 12 more" */
export function listOf(items: readonly string[], max = 20): string {
  if (items.length === 0) return 'none';
  return items.length > max ? `${items.slice(0, max).join(', ')} and ${items.length - max} more` : items.join(', ');
}
