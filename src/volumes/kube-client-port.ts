// The mover's port implemented over the shared kube seam, so engines pass their KubeClient through this one call.
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import type { ApiResource } from '../kube/types.ts';
import type { MoverResource, VolumeKube } from './kube-port.ts';

function apiResource(r: MoverResource): ApiResource {
  return {
    group: r.group, version: r.version, resource: r.resource, kind: r.kind, namespaced: r.namespaced ?? true,
    verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'], preferredVersion: r.version, versions: [r.version],
  };
}

function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('the wait was cancelled'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** a cluster-scoped resource's calls carry no namespace */
const scope = (r: MoverResource, namespace: string): string | undefined => (r.namespaced === false ? undefined : namespace);

export function volumeKubeFromClient(client: KubeClient): VolumeKube {
  return {
    get: (r, namespace, name) => client.tryGet(apiResource(r), name, scope(r, namespace)),
    list: async (r, namespace, labelSelector) =>
      (await client.listAll(apiResource(r), { ...(scope(r, namespace) !== undefined ? { namespace } : {}), ...(labelSelector ? { labelSelector } : {}) })).items,
    // Every mover object has a name fixed by backup, namespace and PVC, so a create whose answer was lost can be sent
    // again: at worst it answers 409, which the mover reads as "ours, already there".
    create: (r, object) => client.create(apiResource(r), object, { safeToRetry: true }),
    mergePatch: (r, namespace, name, patch) => client.patch(apiResource(r), name, scope(r, namespace), patch, 'merge'),
    podLog: (namespace, pod, container, tailLines) => client.podLog(namespace, pod, { container, tailLines }),
    delete: async (r, namespace, name) => {
      try {
        await client.delete(apiResource(r), name, scope(r, namespace), { propagationPolicy: 'Background' });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
    waitFor: (r, namespace, name, done, options) =>
      abortable(client.waitFor(apiResource(r), name, scope(r, namespace), done, { timeoutMs: options.timeoutMs, description: 'finish' }), options.signal),
  };
}
