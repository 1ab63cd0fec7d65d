// One sentence for a failed backup, whatever failed: the user's input, S3, the API server or a mover Job.
import { BackupInputError } from '../backup/scope.ts';
import { LeaseHeldError } from '../backup/lease.ts';
import { describe } from '../errors/index.ts';

export function describeBackupFailure(error: unknown): string {
  const message = describe(error);
  if (error instanceof BackupInputError || LeaseHeldError.isInstance(error)) return message;
  const sentence = message.endsWith('.') ? message : `${message}.`;
  return `The backup failed and was not committed (no marker written): ${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}`;
}
