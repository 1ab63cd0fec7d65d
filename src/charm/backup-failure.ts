// One sentence for a failed backup, whatever failed: the user's input, S3, the API server or a mover Job.
import { BackupInputError } from '../backup/scope.ts';

export function describeBackupFailure(error: unknown): string {
  const message = error instanceof Error ? error.message.split('\n')[0]!.trim() : String(error);
  if (error instanceof BackupInputError) return message;
  const sentence = message.endsWith('.') ? message : `${message}.`;
  return `The backup failed and was not committed (no marker written): ${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}`;
}
