// Pieces several commands share: the output flags, opening the store, and reading a backup id argument (or `latest`,
// which catalog/latest.ts resolves).
import type { BackupStore } from '../../store/backup-store.ts';
import type { S3Settings } from '../../store/settings.ts';
import type { CommandContext, OptionTable } from '../usage.ts';
import { stringValue, UsageError } from '../usage.ts';
import { s3SettingsFrom } from '../s3-options.ts';
import { TLS_CODES, errorCodes, isNetworkCode } from '../../errors/codes.ts';
import { cliProblemSentence } from '../s3-wording.ts';
import { describe } from '../../errors/index.ts';

export const outputOptions: OptionTable = {
  json: { type: 'boolean', description: 'print the result as one JSON document on stdout (progress stays on stderr)' },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

export const BACKUP_ID = /^kf-\d{8}-\d{6}-[0-9a-f]{6}$/;

const KUBE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** --job-namespace: where a command's restic Jobs (verify's checks, backup's key change) and their Secret run. */
export function jobNamespaceFrom(ctx: CommandContext): string {
  const namespace = stringValue(ctx.values, 'job-namespace') ?? 'kubeflow';
  if (!KUBE_NAME.test(namespace) || namespace.length > 63) throw new UsageError(`--job-namespace must be a namespace name, not "${namespace}".`);
  return namespace;
}

export async function openStore(ctx: CommandContext): Promise<{ settings: S3Settings; store: BackupStore }> {
  const settings = s3SettingsFrom(ctx.values, ctx.env);
  ctx.out.hide(settings.secretKey);
  const { openBackupStore } = await import('../../store/open.ts');
  const store = openBackupStore(settings);
  if (settings.immutability) {
    // a bucket only gets Object Lock at its creation: refused before anything is written, with how to get one
    const { bucketHasObjectLock, objectLockMissing } = await import('../../store/object-lock.ts');
    let locked: boolean;
    try {
      locked = await bucketHasObjectLock(store.objects.client, settings.bucket);
    } catch (error) {
      throw new Error(`The Object Lock of bucket "${settings.bucket}" could not be checked: ${await describeFailure(error, settings)}`);
    }
    if (!locked) throw new UsageError(`The ${objectLockMissing(settings.bucket, '--immutability')}.`);
  }
  return { settings, store };
}

/** The backup id argument: a backup name (ours or a Velero one) or `latest`. */
export function backupIdArgument(ctx: CommandContext, required: boolean): string | undefined {
  const id = ctx.positionals[0];
  if (id === undefined) {
    if (required) throw new UsageError('Name the backup: a backup id from `kubeflow-upgrader list`, or latest.');
    return undefined;
  }
  if (id !== 'latest' && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(id)) throw new UsageError(`"${id}" is not a backup id (kf-YYYYMMDD-HHMMSS-xxxxxx) or latest.`);
  return id;
}

/** One sentence for any failure: S3 errors are classified, engine errors keep their own sentence. */
export async function describeFailure(error: unknown, settings?: S3Settings): Promise<string> {
  const fromS3 = error !== null && typeof error === 'object' && '$metadata' in error;
  if (settings && (fromS3 || errorCodes(error).some((code) => isNetworkCode(code) || TLS_CODES.has(code)))) {
    const { classifyS3Error } = await import('../../store/s3-client.ts');
    return cliProblemSentence(classifyS3Error(error, settings));
  }
  const message = describe(error);
  return /[.!?]$/.test(message) ? message : `${message}.`;
}
