// A PVC that was never bound has no volume and so no data: backup-state records it as unbound with no data (not as an
// archived tree of 0 files), and restore-state creates it without a fill mark and starts no mover for it, while the
// bound PVCs beside it are filled as usual. The charm's actions run in process (runEvent); the mover Jobs run on the
// simulated kubelet.
import { expect } from 'chai';
import { S3Client, GetObjectCommand } from '@aws-sdk/client-s3';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { storageClass } from '../support/kubelet/index.ts';
import { startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { LABEL_FILL } from '../../src/volumes/fill-mark.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const BUCKET = 'unbound';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const CLASSES = { group: 'storage.k8s.io', resource: 'storageclasses' };

describe('unbound PVCs: recorded with no data, restored without a mover (the charm in process)', function () {
  this.timeout(180_000);
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let target: KubeletCluster;
  let namespace: string;
  const jobsFor = new Map<string, number>();

  before(async () => {
    [s3, source, target] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 51 }), startKubeletCluster({ profiles: 0, seed: 51 })]);
    namespace = source.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!.metadata.namespace!;
    for (const side of [source, target]) side.cluster.api.create(CLASSES, storageClass('late', { volumeBindingMode: 'WaitForFirstConsumer' }));
    source.cluster.api.create(PVCS, {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'never-used', namespace },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'late', resources: { requests: { storage: '1Gi' } } },
    });
    target.cluster.api.subscribe((e) => {
      const pvc = e.object.metadata.annotations?.['kubeflow-upgrader/pvc'];
      if (e.ref.resource === 'jobs' && e.type === 'ADDED' && pvc) jobsFor.set(pvc, (jobsFor.get(pvc) ?? 0) + 1);
    });
  });
  after(async () => {
    await Promise.all([s3?.stop(), source?.stop(), target?.stop()]);
  });

  function action(name: string, params: Record<string, unknown>, side: KubeletCluster): Promise<EventOutcome> {
    const state = emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params, config: { 'restore-wait-timeout': 60 } });
    return runEvent(state, { event: `actions/${name}`, env: { KUBECONFIG: side.cluster.kubeconfigPath } });
  }

  it('backs up the unbound claim as unbound, and restores it without filling it', async () => {
    const bound = source.cluster.api.list(PVCS, { namespace }).filter((p) => p.metadata.name !== 'never-used');
    const backup = await action('backup-state', { 'include-control-plane': false }, source);
    expect(backup.state.actionFailure, backup.stderr.slice(-2000)).to.equal(undefined);
    const id = backup.state.actionResults['backup-id']!;
    expect(backup.state.actionResults.volumes).to.equal(String(bound.length));
    expect(Object.entries(backup.state.actionResults).filter(([k]) => k.startsWith('notes.')).map(([, v]) => v)).to.include('1 PVC(s) were never bound: recorded as unbound, with no data');

    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    try {
      const body = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${id}/kubeflow-upgrader.json` }))).Body!.transformToString();
      const entry = (JSON.parse(body) as { volumes: Array<{ pvc: string; unbound?: boolean; files: number }> }).volumes.find((v) => v.pvc === 'never-used');
      expect(entry).to.deep.include({ unbound: true, files: 0 });
    } finally {
      client.destroy();
    }

    const restore = await action('restore-state', { 'backup-id': id }, target);
    expect(restore.state.actionFailure, restore.stderr.slice(-2000)).to.equal(undefined);
    expect(restore.state.actionResults.volumes).to.equal(`${bound.length} PVC(s) filled`);
    const restored = target.cluster.api.get(PVCS, 'never-used', namespace) as KubeObject;
    expect(restored.metadata.labels?.[LABEL_FILL]).to.equal(undefined);
    expect((restored.status as { phase?: string } | undefined)?.phase ?? 'Pending', 'nothing mounted it, so it still waits for its first consumer').to.equal('Pending');
    expect(jobsFor.get('never-used') ?? 0).to.equal(0);
    for (const p of bound) expect(jobsFor.get(p.metadata.name!), p.metadata.name).to.equal(1);
  });
});
