// Kubernetes' token controller, simulated after kubernetes/kubernetes pkg/controller/serviceaccount/tokens_controller.go
// (syncSecret): a Secret of type kubernetes.io/service-account-token names its ServiceAccount in the annotation
// kubernetes.io/service-account.name (and, once filled, its uid in kubernetes.io/service-account.uid). When no live
// ServiceAccount matches that name and uid, the Secret is deleted; when one does and the Secret has no token yet,
// the controller writes token, ca.crt and namespace into its data and records the ServiceAccount's uid. Since
// Kubernetes 1.24 it makes no such Secret on its own: each one was asked for by a user.
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { keyOf, reconciler, splitKey } from './reconciler.ts';

export const tokenType = 'kubernetes.io/service-account-token';
const nameAnnotation = 'kubernetes.io/service-account.name';
const uidAnnotation = 'kubernetes.io/service-account.uid';

const base64 = (text: string) => Buffer.from(text).toString('base64');

function syncSecret(api: InProcessApi, key: string): void {
  const { namespace, name } = splitKey(key);
  const secret = api.get(refs.secrets, name, namespace);
  if (!secret || secret.type !== tokenType || secret.metadata.deletionTimestamp) return;
  const annotations = secret.metadata.annotations ?? {};
  const account = api.get(refs.serviceAccounts, annotations[nameAnnotation] ?? '', namespace);
  const wantedUid = annotations[uidAnnotation];
  if (!account || (wantedUid && wantedUid !== account.metadata.uid)) {
    api.delete(refs.secrets, name, namespace);
    return;
  }
  const data = (secret.data ?? {}) as Record<string, string>;
  if (data.token && wantedUid) return;
  const filled: KubeObject = {
    ...secret,
    metadata: { ...secret.metadata, annotations: { ...annotations, [uidAnnotation]: account.metadata.uid! } },
    data: { ...data, token: base64(`eyJhbGciOiJSUzI1NiJ9.${randomBytes(24).toString('base64url')}`), 'ca.crt': base64('-----BEGIN CERTIFICATE-----\n'), namespace: base64(namespace!) },
  };
  api.update(refs.secrets, filled);
}

export function tokenController() {
  return reconciler({
    name: 'token-controller',
    delayMs: 5,
    watches: [
      { ref: refs.secrets, keys: (o, type) => (type !== 'DELETED' && o.type === tokenType ? [keyOf(o)] : []) },
    ],
    reconcile: syncSecret,
  });
}
