// The restic passwords as docs/architecture.md and src/volumes/restic/password.ts document them, derived here with
// node:crypto so that a test's oracle never calls the product's derivation: HKDF-SHA256, salt
// "kubeflow-upgrader restic", info "kubeflow-upgrader restic repository password v2 <namespace>" (v2, per namespace)
// or "kubeflow-upgrader restic repository password v1" (the shared legacy one), 32 bytes as hex; without a key the
// published fixed password. Starts nothing.
import { hkdfSync } from 'node:crypto';

const hkdf = (key: string, info: string) => Buffer.from(hkdfSync('sha256', key, 'kubeflow-upgrader restic', info, 32)).toString('hex');

export const UNKEYED = 'kubeflow-upgrader-unkeyed-restic-repository';

/** One namespace's repository password under `key`. */
export function namespacePassword(key: string | undefined, namespace: string): string {
  return key ? hkdf(key, `kubeflow-upgrader restic repository password v2 ${namespace}`) : UNKEYED;
}

/** The one password every repository had before v2. */
export function legacyPassword(key: string | undefined): string {
  return key ? hkdf(key, 'kubeflow-upgrader restic repository password v1') : UNKEYED;
}
