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
import { restorePriority } from '../src/kubeflow/restore-order.ts';
import type { ApiResource, KubeObject } from '../src/kube/types.ts';

const orders = ['archive', 'kind', 'namespace', 'batch'] as const;
const { values } = parseArgs({ options: { profiles: { type: 'string', default: '1000' }, order: { type: 'string', default: 'archive' }, batch: { type: 'string', default: '64' } } });
const profiles = Number(values.profiles);
const batchSize = Number(values.batch);
const order = values.order as (typeof orders)[number];
if (!Number.isInteger(profiles) || profiles < 1 || !Number.isInteger(batchSize) || batchSize < 1 || !orders.includes(order)) {
  process.stderr.write(`--profiles and --batch must be positive whole numbers and --order one of ${orders.join(', ')}.\n`);
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

function ordered(objects: KubeObject[], resourceOf: (o: KubeObject) => ApiResource): KubeObject[] {
  if (order === 'archive') return objects;
  const namespace = (o: KubeObject) => o.metadata.namespace ?? '';
  const rank = (o: KubeObject) => restorePriority(resourceOf(o).group, resourceOf(o).resource);
  const batchOf = new Map([...new Set(objects.map(namespace))].sort().map((name, i) => [name, Math.floor(i / batchSize)]));
  const keyed = objects.map((o, i) => ({ o, i, ns: namespace(o), rank: rank(o), batch: batchOf.get(namespace(o))! }));
  const byNamespace = (a: (typeof keyed)[number], b: (typeof keyed)[number]) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0);
  keyed.sort((a, b) => {
    if (order === 'kind') return a.rank - b.rank || byNamespace(a, b) || a.i - b.i;
    if (order === 'namespace') return byNamespace(a, b) || a.rank - b.rank || a.i - b.i;
    return a.batch - b.batch || a.rank - b.rank || byNamespace(a, b) || a.i - b.i;
  });
  return keyed.map((k) => k.o);
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
  const rest = ordered(objects.filter((o) => o.kind !== 'Profile'), resourceOf);
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
