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

export function encryptionKeyFrom(values: Values, env: NodeJS.ProcessEnv): string | undefined {
  const file = stringValue(values, 'encryption-key-file');
  if (file !== undefined) {
    let key: string;
    try {
      key = readFileSync(file, 'utf8').trim();
    } catch {
      throw new UsageError(`The encryption key file ${file} cannot be read.`);
    }
    if (!key) throw new UsageError(`The encryption key file ${file} is empty.`);
    return key;
  }
  return fromEnv(env, ['KFU_ENCRYPTION_KEY']);
}

/** The trust verify and restore read a backup with: the key (encryptionKeyFrom), and `--allow-unauthenticated` as the CLI user gives it. */
export function trustFrom(values: Values, encryptionKey: string | undefined): Trust {
  return { encryptionKey, allowUnauthenticated: values['allow-unauthenticated'] === true, allowHint: '--allow-unauthenticated' };
}
