// How the rules below name an object: its API group (core = ''), kind, namespace and name, read from the object.
import type { KubeObject } from '../kube/types.ts';

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** `Kind/name` or `Kind/namespace/name`, the way reasons and plans print an object */
export function describeObject(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${object.kind}/${namespace}/${name}` : `${object.kind}/${name}`;
}
