// Restore rate into an empty cluster against the raw rate of concurrently CREATEing the same objects (Profiles,
// the wait for their namespaces, then everything else unordered) at the same client concurrency, in the same run.
// Both sides talk to their own fresh embedded cluster in this process, so they share the same conditions.
import { S3Client } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { startCluster } from '../tests/support/cluster/index.ts';
import { startS3Server } from '../tests/support/s3/server.ts';
import { KubeClient } from '../src/kube/client.ts';
import { ObjectStore } from '../src/store/objects.ts';
import { runBackup } from '../src/backup/engine.ts';
import { readItems, readManifest } from '../src/archive/index.ts';
import { runRestore } from '../src/restore/engine.ts';
import { restorable } from '../src/restore/normalize.ts';
import { waitForProfileNamespaces } from '../src/restore/wait.ts';
import type { KubeObject } from '../src/kube/types.ts';
import type { BenchOptions, BenchRow } from './types.ts';

const CONCURRENCY = 16;

export default async function restoreBench(opts: BenchOptions): Promise<BenchRow[]> {
  const profiles = opts.quick ? Math.min(opts.profiles, 50) : opts.profiles;
  const [source, s3] = await Promise.all([startCluster({ profiles, seed: 3 }), startS3Server({ buckets: ['bench'] })]);
  const clients: KubeClient[] = [];
  const stops: Array<() => Promise<void>> = [() => source.stop(), () => s3.stop()];
  try {
    const kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: CONCURRENCY });
    clients.push(kubeSource);
    const store = new ObjectStore({
      client: new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } }),
      bucket: 'bench', prefix: 'kf',
    });
    const backup = await runBackup(kubeSource, store, {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'bench',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    const read = await readManifest(store, backup.backupId);
    const objects: KubeObject[] = [];
    for await (const item of readItems(store, backup.backupId, { manifest: read.state === 'present' ? read.manifest : null })) objects.push(restorable(item.object));

    // Raw: concurrent CREATE of the same objects, Profiles first and their namespaces awaited (the profile controller must run).
    const raw = await startCluster({ seed: 3 });
    stops.push(() => raw.stop());
    const kubeRaw = await KubeClient.load({ kubeconfig: raw.kubeconfigPath, concurrency: CONCURRENCY });
    clients.push(kubeRaw);
    const resources = new Map<string, Awaited<ReturnType<KubeClient['findByKind']>>>();
    for (const o of objects) if (!resources.has(`${o.apiVersion}/${o.kind}`)) resources.set(`${o.apiVersion}/${o.kind}`, await kubeRaw.findByKind(o.apiVersion, o.kind));
    const limit = pLimit(CONCURRENCY * 2);
    const create = (o: KubeObject) => limit(() => kubeRaw.create(resources.get(`${o.apiVersion}/${o.kind}`)!, o));
    const profileObjects = objects.filter((o) => o.kind === 'Profile');
    const rawStarted = performance.now();
    await Promise.all(profileObjects.map(create));
    await waitForProfileNamespaces(kubeRaw, profileObjects, { timeoutMs: 600_000 });
    await Promise.all(objects.filter((o) => o.kind !== 'Profile').map(create));
    const rawMs = performance.now() - rawStarted;

    // Restore: the whole engine, preflight included.
    const target = await startCluster({ seed: 3 });
    stops.push(() => target.stop());
    const kubeTarget = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: CONCURRENCY });
    clients.push(kubeTarget);
    const restoreStarted = performance.now();
    const outcome = await runRestore(kubeTarget, store, { backupId: backup.backupId, waitTimeoutMs: 600_000 });
    const restoreMs = performance.now() - restoreStarted;
    if (outcome.totals.created !== objects.length) throw new Error(`the restore created ${outcome.totals.created} of ${objects.length} objects`);

    const rawRate = objects.length / (rawMs / 1000);
    const restoreRate = objects.length / (restoreMs / 1000);
    const ratio = restoreRate / rawRate;
    const note = `P=${profiles}, ${objects.length} objects, concurrency ${CONCURRENCY}`;
    return [
      { bench: 'restore', metric: 'raw concurrent CREATE', value: Math.round(rawRate), unit: 'objects/s', note },
      { bench: 'restore', metric: 'restore into an empty cluster', value: Math.round(restoreRate), unit: 'objects/s', note },
      { bench: 'restore', metric: 'restore rate / raw CREATE rate', value: Math.round(ratio * 100) / 100, unit: 'ratio', target: '>= 0.8', verdict: ratio >= 0.8 ? 'met' : 'missed', note },
    ];
  } finally {
    for (const client of clients) client.close();
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}
