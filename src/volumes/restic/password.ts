// The password of the profile namespaces' restic repositories. restic encrypts and authenticates everything it stores
// under a master key, which each of its key files holds encrypted under one password (stretched with scrypt by restic
// itself, restic/restic internal/repository/key.go). The password is derived from `encryption-key`, so whoever holds the
// key can open the repositories and nobody else can: HKDF-SHA256 (RFC 5869) with a label no other key of ours uses, so
// it never equals the manifest HMAC key or the sealing key (src/archive/authenticate.ts, seal.ts).
import { hkdfSync } from 'node:crypto';

const PASSWORD_LABEL = 'kubeflow-upgrader restic repository password v1';
const PASSWORD_SALT = 'kubeflow-upgrader restic';

/**
 * Without `encryption-key` the repositories still need a password: this fixed one, as Velero's restic integration
 * uses a fixed one (vmware-tanzu/velero pkg/repository/keys/keys.go). It is published here, so volume data backed up
 * without a key is NOT confidential: anyone who can read the bucket can read it. restic still detects any change.
 */
export const UNKEYED_RESTIC_PASSWORD = 'kubeflow-upgrader-unkeyed-restic-repository';

export function resticPassword(encryptionKey: string | Buffer | undefined): string {
  if (encryptionKey === undefined || encryptionKey.length === 0) return UNKEYED_RESTIC_PASSWORD;
  return Buffer.from(hkdfSync('sha256', encryptionKey, PASSWORD_SALT, PASSWORD_LABEL, 32)).toString('hex');
}
