// The restic repository that holds the control-plane copies when `encryption-key` is set, and its password. The
// repository sits beside the profile namespaces' (`<path>/restic/<namespace>`, src/volumes/restic/job.ts) under a name
// no namespace can have: namespaces are DNS labels (RFC 1123: lower-case letters, digits and `-`), and `_` is none of
// those, so no profile namespace's repository can ever be this one. Velero reads only the top-level `restic/` folder
// name (src/store/layout.ts VELERO_TOP_LEVEL_FOLDERS); it never lists the repositories under it.
//
// The password is derived from the key with HKDF-SHA256 (RFC 5869) under a label of its own, so it never equals a
// namespace repository's password (src/volumes/restic/password.ts), the manifest HMAC key or the sealing key: the
// Secrets of the copy Jobs in the model namespace hold this password only, and it opens this repository only.
import { hkdfSync } from 'node:crypto';

/** The repository's name under `<path>/restic/`: not a DNS label, so never a namespace's. */
export const CONTROL_PLANE_REPOSITORY = '_control-plane';

export const CONTROL_PLANE_PASSWORD_SALT = 'kubeflow-upgrader restic';
export const CONTROL_PLANE_PASSWORD_LABEL = 'kubeflow-upgrader control-plane restic repository password v1';

/**
 * The control-plane repository's password under `encryptionKey`. There is none without a key: the control-plane copies
 * are then stored as plain compressed files, as before (and are not confidential).
 */
export function controlPlaneResticPassword(encryptionKey: string | Buffer): string {
  if (encryptionKey.length === 0) throw new Error('the control-plane restic repository has a password only under an encryption key');
  return Buffer.from(hkdfSync('sha256', encryptionKey, CONTROL_PLANE_PASSWORD_SALT, CONTROL_PLANE_PASSWORD_LABEL, 32)).toString('hex');
}
