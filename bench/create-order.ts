// What the order of the creates costs the embedded cluster: the archive's objects of one backup created into a fresh
// cluster in one of four orders, with nothing of the restore's own work (docs/performance.md, "the order of the
// writes"). One process holds the cluster and the client, so the CPU printed is both, on one thread.
//   node --import tsx bench/create-order.ts [--profiles 1000] [--order archive|kind|namespace|batch] [--batch 64]
// archive: the archive's order (each kind in a run, as raw CREATE sends them); kind: the restore's order of kinds,
// all namespaces of one kind together; namespace: namespace after namespace, each in the restore's order of kinds;
// batch: --batch namespaces at a time, each batch kind after kind. Profiles and the wait for their namespaces come
// first in every order. Run each order in its own process, alternated, and compare.
import { parseArgs } from 'node:util';
import pLimit from 'p-limit';
import { startCluster } from '../tests/support/cluster/index.ts';
import { KubeClient } from '../src/kube/client.ts';
import { backedUpCluster } from './support/memory-backup.ts';
import { readItems } from '../src/catalog/read-items.ts';
import { restorable } from '../src/restore/normalize.ts';
import { waitForProfileNamespaces } from '../src/restore/wait.ts';
import { createOrders, inCreateOrder, type CreateOrder } from './support/create-orders.ts';
import type { ApiResource, KubeObject } from '../src/kube/types.ts';

const { values } = parseArgs({ options: { profiles: { type: 'string', default: '1000' }, order: { type: 'string', default: 'archive' }, batch: { type: 'string', default: '64' } } });
const profiles = Number(values.profiles);
const batchSize = Number(values.batch);
const order = values.order as CreateOrder;
if (!Number.isInteger(profiles) || profiles < 1 || !Number.isInteger(batchSize) || batchSize < 1 || !createOrders.includes(order)) {
  process.stderr.write(`--profiles and --batch must be positive whole numbers and --order one of ${createOrders.join(', ')}.\n`);
  process.exit(2);
}

/** the backup's objects as a restore sends them, from a cluster of `profiles` profiles */
async function archivedObjects(): Promise<KubeObject[]> {
  const { store, backupId, stop } = await backedUpCluster(profiles);
  try {
    const read = await store.readManifest(backupId);
    const objects: KubeObject[] = [];
    for await (const item of readItems(store, backupId, { expected: read.state === 'present' ? read : null })) objects.push(restorable(item.object));
    return objects;
  } finally {
    await stop();
  }
}

const objects = await archivedObjects();
const target = await startCluster({});
const kube = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 16 });
try {
  const resources = new Map<string, ApiResource>();
  for (const o of objects) {
    const key = `${o.apiVersion}/${o.kind}`;
    if (!resources.has(key)) resources.set(key, (await kube.findByKind(o.apiVersion, o.kind))!);
  }
  const resourceOf = (o: KubeObject) => resources.get(`${o.apiVersion}/${o.kind}`)!;
  const rest = inCreateOrder(objects.filter((o) => o.kind !== 'Profile'), order, resourceOf, batchSize);
  const profileObjects = objects.filter((o) => o.kind === 'Profile');
  const limit = pLimit(32);
  const create = (o: KubeObject) => limit(() => kube.create(resourceOf(o), o));
  const before = process.cpuUsage();
  const started = performance.now();
  await Promise.all(profileObjects.map(create));
  await waitForProfileNamespaces(kube, profileObjects, { timeoutMs: 600_000 });
  await Promise.all(rest.map(create));
  const spent = process.cpuUsage(before);
  process.stdout.write(`${order}${order === 'batch' ? ` of ${batchSize}` : ''}: ${objects.length} objects, ${Math.round(performance.now() - started)} ms, CPU ${Math.round((spent.user + spent.system) / 1000)} ms\n`);
} finally {
  kube.close();
  await target.stop();
}
