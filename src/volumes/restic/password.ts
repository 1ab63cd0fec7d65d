// The passwords of the profile namespaces' restic repositories. restic encrypts and authenticates everything it stores
// under a master key, which each of its key files holds encrypted under one password (stretched with scrypt by restic
// itself, restic/restic internal/repository/key.go). Each namespace's repository has its own password, derived from
// `encryption-key` and the namespace's name: the mover Secret in a profile namespace holds that namespace's password,
// which its users can read, and it opens that namespace's repository only. HKDF-SHA256 (RFC 5869) with labels no
// other key of ours uses, so a password never equals the manifest HMAC key or the sealing key
// (src/archive/authenticate.ts, seal.ts), nor another namespace's password.
import { hkdfSync } from 'node:crypto';

/** The HKDF salt of every restic password (v1 and v2). */
export const PASSWORD_SALT = 'kubeflow-upgrader restic';
/**
 * The v2 label: HKDF's info is this label, one space and the namespace's name (a DNS label, which holds no space, so
 * no two namespaces give the same info).
 */
export const PASSWORD_LABEL = 'kubeflow-upgrader restic repository password v2';
/** The v1 label, one password for every namespace: kept to migrate the repositories written under it. */
export const LEGACY_PASSWORD_LABEL = 'kubeflow-upgrader restic repository password v1';

/**
 * Without `encryption-key` the repositories still need a password: this fixed one, the same for every namespace, as
 * Velero's restic integration uses a fixed one (vmware-tanzu/velero pkg/repository/keys/keys.go). It is published
 * here, so volume data backed up without a key is NOT confidential: anyone who can read the bucket can read it, and a
 * profile's users can read every namespace's. restic still detects any change.
 */
export const UNKEYED_RESTIC_PASSWORD = 'kubeflow-upgrader-unkeyed-restic-repository';

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const keyed = (key: string | Buffer | undefined): key is string | Buffer => key !== undefined && key.length > 0;

/** The password of `namespace`'s repository: opens that repository and no other. */
export function resticPassword(encryptionKey: string | Buffer | undefined, namespace: string): string {
  if (!NAMESPACE.test(namespace) || namespace.length > 63) throw new Error(`"${namespace}" is not a namespace name, so it has no restic repository password.`);
  if (!keyed(encryptionKey)) return UNKEYED_RESTIC_PASSWORD;
  return Buffer.from(hkdfSync('sha256', encryptionKey, PASSWORD_SALT, `${PASSWORD_LABEL} ${namespace}`, 32)).toString('hex');
}

/**
 * The password every repository had before v2, the same for all namespaces. Only the restic key Job in the charm's
 * own namespace (src/volumes/restic/rekey.ts) may hold it: it opens every repository written under it.
 */
export function legacyResticPassword(encryptionKey: string | Buffer | undefined): string {
  if (!keyed(encryptionKey)) return UNKEYED_RESTIC_PASSWORD;
  return Buffer.from(hkdfSync('sha256', encryptionKey, PASSWORD_SALT, LEGACY_PASSWORD_LABEL, 32)).toString('hex');
}

/** Whether a key is set: without one every namespace's password is the published unkeyed one. */
export function isKeyed(encryptionKey: string | Buffer | undefined): boolean {
  return keyed(encryptionKey);
}
