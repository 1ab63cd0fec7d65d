// The key that seals Secrets in a backup (AES-256-GCM under a key derived from it): from a file or KFU_ENCRYPTION_KEY,
// never from a flag value.
import { readFileSync } from 'node:fs';
import type { OptionTable, Values } from './usage.ts';
import { stringValue, UsageError } from './usage.ts';
import { fromEnv } from './s3-options.ts';
import type { Trust } from '../archive/authenticate.ts';

export const encryptionOptions: OptionTable = {
  'encryption-key-file': {
    type: 'string', placeholder: '<path>', env: ['KFU_ENCRYPTION_KEY (the key itself)'],
    description: 'file holding the key that seals (backup) or opens (restore) Secrets; without one, Secrets are stored in clear',
  },
};

/** For the commands that check a backup's HMAC (verify, restore): accept one that carries none. */
export const allowUnauthenticatedOption: OptionTable = {
  'allow-unauthenticated': {
    type: 'boolean',
    description: 'with a key, also accept the backup named by its id (never latest) when it carries no HMAC (older, keyless or Velero\'s own), which anyone who can write the bucket could have forged; a wrong or malformed HMAC is never accepted',
  },
};

/** backup: the key the restic repositories were written under, when --encryption-key-file is a new one. */
export const previousEncryptionOptions: OptionTable = {
  'previous-encryption-key-file': {
    type: 'string', placeholder: '<path>',
    description: 'file holding the key the earlier backups were made with, when --encryption-key-file is a new one: before the backup, a Job adds the new key to every restic repository of the location that does not open with it yet (restic key add), so older volume snapshots stay readable',
  },
};

function keyFile(file: string, what: string): string {
  let key: string;
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch {
    throw new UsageError(`The ${what} file ${file} cannot be read.`);
  }
  if (!key) throw new UsageError(`The ${what} file ${file} is empty.`);
  return key;
}

export function encryptionKeyFrom(values: Values, env: NodeJS.ProcessEnv): string | undefined {
  const file = stringValue(values, 'encryption-key-file');
  if (file !== undefined) return keyFile(file, 'encryption key');
  return fromEnv(env, ['KFU_ENCRYPTION_KEY']);
}

/**
 * The previous key of --previous-encryption-key-file, checked against the new one before anything runs: it needs
 * --encryption-key-file (the key to add) and must differ from it.
 */
export function previousEncryptionKeyFrom(values: Values, newKey: string | undefined): string | undefined {
  const file = stringValue(values, 'previous-encryption-key-file');
  if (file === undefined) return undefined;
  if (stringValue(values, 'encryption-key-file') === undefined || newKey === undefined) {
    throw new UsageError('--previous-encryption-key-file needs --encryption-key-file with the new key, the one to add to the restic repositories.');
  }
  const previous = keyFile(file, 'previous encryption key');
  if (previous === newKey) throw new UsageError(`The previous encryption key file ${file} holds the same key as --encryption-key-file, so there is no key to change.`);
  return previous;
}

/** The trust verify and restore read a backup with: the key (encryptionKeyFrom), and `--allow-unauthenticated` as the CLI user gives it. */
export function trustFrom(values: Values, encryptionKey: string | undefined): Trust {
  return { encryptionKey, allowUnauthenticated: values['allow-unauthenticated'] === true, allowHint: '--allow-unauthenticated' };
}
