// The Kubernetes operations the backup engine and its helpers (scope, inventory) use. The shared KubeClient
// (src/kube/client.ts) satisfies this as it is, so callers pass their client; naming only what the backup reads keeps
// its needs visible, and a fake needs only these (as src/guard/kube-port.ts and src/volumes/kube-port.ts do).
import type { KubeClient } from '../kube/client.ts';

export type BackupKube = Pick<KubeClient, 'pageSize' | 'discover' | 'findByResource' | 'listPages' | 'listAll'>;
