// The Kubernetes operations the restore engine and its helpers (preflight, waits, nudges, the writes where a
// controller is involved) use. The shared KubeClient (src/kube/client.ts) satisfies this as it is, so callers pass
// their client; naming only what the restore touches keeps its needs visible, and a fake needs only these.
import type { KubeClient } from '../kube/client.ts';

export type RestoreKube = Pick<
  KubeClient,
  'concurrency' | 'discover' | 'findByResource' | 'listAll' | 'tryGet' | 'create' | 'replace' | 'patch' | 'patchStatus' | 'watch'
>;
