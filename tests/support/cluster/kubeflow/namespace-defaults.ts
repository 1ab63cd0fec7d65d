// What Kubernetes itself (and Istio) put in every namespace: the `default` ServiceAccount (service-account
// controller), the `kube-root-ca.crt` ConfigMap (root-ca-cert publisher) and, where sidecars are injected,
// Istio's `istio-ca-root-cert`. None of them carries an ownerReference: they are known by name.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi } from '../contract.ts';
import { refs } from './refs.ts';
import { ensure, reconciler } from './reconciler.ts';

const fakeCa = ['-----BEGIN CERTIFICATE-----', 'MIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAjMSEwHwYDVQQDDBhrM3Mtc2Vy', 'dmVyLWNhQDE3MDAwMDAwMDAwHhcNMjQwMTAxMDAwMDAwWhcNMzQwMTAxMDAwMDAw', '-----END CERTIFICATE-----', ''].join('\n');

function reconcileNamespace(api: InProcessApi, name: string): void {
  const namespace = api.get(refs.namespaces, name);
  if (!namespace || namespace.metadata.deletionTimestamp) return;
  const configMap = (cmName: string, key: string, labels?: Record<string, string>): KubeObject => ({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: cmName, namespace: name, ...(labels ? { labels } : {}) },
    data: { [key]: fakeCa },
  });
  ensure(api, refs.serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: name } }, []);
  ensure(api, refs.configMaps, configMap('kube-root-ca.crt', 'ca.crt'), ['data']);
  if (namespace.metadata.labels?.['istio-injection'] === 'enabled') {
    ensure(api, refs.configMaps, configMap('istio-ca-root-cert', 'root-cert.pem', { 'istio.io/config': 'true' }), ['data']);
  }
}

export function namespaceDefaultsController() {
  return reconciler({
    name: 'namespace-defaults',
    delayMs: 3,
    watches: [
      { ref: refs.namespaces, keys: (o, type) => (type === 'DELETED' ? [] : [o.metadata.name!]) },
      { ref: refs.serviceAccounts, keys: (o, type) => (type === 'DELETED' && o.metadata.name === 'default' ? [o.metadata.namespace!] : []) },
      { ref: refs.configMaps, keys: (o, type) => (type === 'DELETED' ? [o.metadata.namespace!] : []) },
    ],
    reconcile: reconcileNamespace,
  });
}
