// The orders a bench creates an archive's objects in (bench/create-order.ts, and raw CREATE in the restore's order in
// bench/support/client.ts): the archive's own; the restore's order of kinds (src/kubeflow/restore-order.ts) with all
// namespaces of one kind together; namespace after namespace, each in that order of kinds; or batches of namespaces,
// each batch kind after kind. Within one place of an order, the archive's order is kept.
import { restorePriority } from '../../src/kubeflow/restore-order.ts';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';

export const createOrders = ['archive', 'kind', 'namespace', 'batch'] as const;
export type CreateOrder = (typeof createOrders)[number];

export function inCreateOrder(objects: readonly KubeObject[], order: CreateOrder, resourceOf: (o: KubeObject) => ApiResource, batchSize = 64): KubeObject[] {
  if (order === 'archive') return [...objects];
  const namespaceOf = (o: KubeObject) => o.metadata.namespace ?? '';
  const batchOf = new Map([...new Set(objects.map(namespaceOf))].sort().map((name, i) => [name, Math.floor(i / batchSize)]));
  const keyed = objects.map((o, i) => {
    const resource = resourceOf(o);
    return { o, i, ns: namespaceOf(o), rank: restorePriority(resource.group, resource.resource), batch: batchOf.get(namespaceOf(o))! };
  });
  type Keyed = (typeof keyed)[number];
  const byNamespace = (a: Keyed, b: Keyed) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0);
  keyed.sort((a, b) => {
    if (order === 'kind') return a.rank - b.rank || byNamespace(a, b) || a.i - b.i;
    if (order === 'namespace') return byNamespace(a, b) || a.rank - b.rank || a.i - b.i;
    return a.batch - b.batch || a.rank - b.rank || byNamespace(a, b) || a.i - b.i;
  });
  return keyed.map((k) => k.o);
}
