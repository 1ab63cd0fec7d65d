// Waits for an object of the in-process API to satisfy a condition: checked now, then on every watch event of its kind,
// as client-go's watch tools wait (upstream: github.com/kubernetes/client-go tools/watch/until.go UntilWithSync).
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi, ResourceRef } from '../../cluster/contract.ts';
import { sameRef } from '../refs.ts';

export function until(
  api: InProcessApi, ref: ResourceRef, name: string, namespace: string | undefined,
  done: (object: KubeObject | undefined) => boolean, timeoutMs = 10_000,
): Promise<KubeObject | undefined> {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => {};
    const check = (): boolean => {
      const object = api.get(ref, name, namespace);
      if (!done(object)) return false;
      clearTimeout(timer);
      unsubscribe();
      resolve(object);
      return true;
    };
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`${ref.resource} ${namespace ? `${namespace}/` : ''}${name} did not reach the expected state within ${timeoutMs} ms: ${JSON.stringify(api.get(ref, name, namespace))}`));
    }, timeoutMs);
    unsubscribe = api.subscribe((event) => { if (sameRef(event.ref, ref)) check(); });
    check();
  });
}
