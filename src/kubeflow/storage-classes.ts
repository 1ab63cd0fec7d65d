// storage-class-map: `old=new,old2=new2`, as Velero's change-storage-class restore action maps them
// (vmware-tanzu/velero pkg/restore/actions/change_storageclass_action.go): a restored PVC that asks for `old` asks for
// `new` instead; a PVC without a storage class, or with one not in the map, is left as it is. For blue/green onto a
// cluster whose storage is named differently.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

/** a storage class name is a DNS subdomain */
const className = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** throws one sentence naming the entry it cannot read */
export function parseStorageClassMap(text: string | undefined): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of (text ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const parts = entry.split('=').map((p) => p.trim());
    if (parts.length !== 2 || !className.test(parts[0]!) || !className.test(parts[1]!) || parts[0]!.length > 253 || parts[1]!.length > 253) {
      throw new Error(`storage-class-map: "${entry}" is not old=new with two storage class names (write e.g. microk8s-hostpath=ceph-rbd,standard=fast).`);
    }
    if (map.has(parts[0]!)) throw new Error(`storage-class-map: storage class ${parts[0]} is mapped twice.`);
    map.set(parts[0]!, parts[1]!);
  }
  return map;
}

export function isPvc(object: KubeObject): boolean {
  return object.kind === 'PersistentVolumeClaim' && groupOf(object.apiVersion) === '';
}

export function storageClassOf(pvc: KubeObject): string | undefined {
  const name = (pvc.spec as { storageClassName?: unknown } | undefined)?.storageClassName;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** the PVC with its storage class mapped, or the PVC itself when the map says nothing about it */
export function withMappedStorageClass(pvc: KubeObject, map: ReadonlyMap<string, string>): KubeObject {
  const from = storageClassOf(pvc);
  const to = from === undefined ? undefined : map.get(from);
  if (to === undefined) return pvc;
  return { ...pvc, spec: { ...(pvc.spec as Record<string, unknown>), storageClassName: to } };
}
