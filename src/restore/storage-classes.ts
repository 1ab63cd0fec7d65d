// The restore's look at storage classes before it writes: which archived PVCs storage-class-map moves to another
// class (shown on every run, dry-run included), and one warning per PVC whose class the target does not have and the
// map does not change — such a PVC would stay Pending, and so would whatever mounts it.
import { neutralWording, type Wording } from '../errors/remedy.ts';
import type { RestoreKube } from './kube-port.ts';
import type { Preflight } from './preflight.ts';

export interface StorageClassReview {
  /** `namespace/pvc: old → new`, one per PVC the map changes */
  changes: string[];
  warnings: string[];
}

export async function reviewStorageClasses(kube: RestoreKube, preflight: Preflight, map: ReadonlyMap<string, string>, wording: Wording = neutralWording): Promise<StorageClassReview> {
  const setting = wording.term({ term: 'storage-class-map' });
  const changes: string[] = [];
  const warnings: string[] = [];
  if (!preflight.steps.some((s) => s.group === '' && s.resource === 'persistentvolumeclaims')) return { changes, warnings };
  // the classes the preflight noted as it spooled the PVCs (no second read of the spool), namespace after namespace as
  // the spool gives them back
  const byNamespace = new Map<string, Array<{ where: string; from: string }>>();
  for (const { namespace, name, storageClass } of preflight.pvcClasses) {
    if (!preflight.namespaces.has(namespace)) continue;
    let list = byNamespace.get(namespace);
    if (!list) byNamespace.set(namespace, (list = []));
    list.push({ where: `${namespace}/${name}`, from: storageClass });
  }
  const asked = [...byNamespace.values()].flat();
  // PVCs that name no class get the target's default, as they got the source's: nothing to look up then
  if (asked.length === 0 && map.size === 0) return { changes, warnings };
  const resource = await kube.findByResource('storage.k8s.io', 'storageclasses');
  const existing = resource ? new Set((await kube.listAll(resource)).items.map((c) => c.metadata.name!)) : undefined;
  for (const target of new Set(map.values())) {
    if (existing && !existing.has(target)) warnings.push(`${setting} maps to storage class ${target}, which this cluster does not have: the PVCs mapped to it will stay Pending.`);
  }
  for (const { where, from } of asked) {
    const to = map.get(from);
    if (to !== undefined) changes.push(`${where}: ${from} → ${to}`);
    else if (existing && !existing.has(from)) {
      warnings.push(`PVC ${where} asks for storage class ${from}, which this cluster does not have and ${setting} does not map: it will stay Pending (${wording.remedy({ fix: 'map-storage-class', from })}).`);
    }
  }
  return { changes, warnings };
}
