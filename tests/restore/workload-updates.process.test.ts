// conflict-policy=update over apps/v1 workloads, against a server that refuses what a real one refuses
// (tests/support/cluster/apps.ts: immutable selectors, StatefulSet spec fields). An update of what may change goes
// through and converges; a live workload whose immutable fields differ from the backup's cannot be put back by any
// update, so that one object fails with the server's own sentence and the rest of the restore goes on.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { backupStore } from '../support/backup-store.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore } from '../../src/restore/engine.ts';

const STATEFULSETS = { group: 'apps', resource: 'statefulsets' };
const DEPLOYMENTS = { group: 'apps', resource: 'deployments' };
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };

function workload(kind: string, name: string, namespace: string, app: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1', kind, metadata: { name, namespace },
    spec: { replicas: 1, selector: { matchLabels: { app } }, template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'main', image: 'postgres:16' }] } }, ...extra },
  } as KubeObject;
}

describe('conflict-policy=update over apps/v1 workloads (strict server)', function () {
  this.timeout(120_000);
  let source: RunningCluster;
  let target: RunningCluster;
  let s3: S3ServerHandle;
  let kubeSource: KubeClient;
  let kubeTarget: KubeClient;
  let namespace: string;
  let restore: (conflictPolicy?: 'update') => ReturnType<typeof runRestore>;

  before(async () => {
    [source, target, s3] = await Promise.all([startCluster({ profiles: 1, seed: 5 }), startCluster({ seed: 5 }), startS3Server({ buckets: ['apps'] })]);
    kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: 4 });
    kubeTarget = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 });
    namespace = source.api.list(PROFILES)[0]!.metadata.name!;
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    source.api.create(STATEFULSETS, workload('StatefulSet', 'db', namespace, 'db', { serviceName: 'db', volumeClaimTemplates: [claim] }));
    source.api.create(DEPLOYMENTS, workload('Deployment', 'web', namespace, 'web'));
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const store = new ObjectStore({ client, bucket: 'apps', prefix: 'kf' });
    const backup = await runBackup(kubeSource, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', namespaces: [namespace],
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    restore = (conflictPolicy) => runRestore(kubeTarget, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000, ...(conflictPolicy ? { conflictPolicy } : {}) });
    const first = await restore();
    expect(first.failures).to.deep.equal([]);
  });
  after(async () => {
    kubeSource?.close();
    kubeTarget?.close();
    await Promise.all([source?.stop(), target?.stop(), s3?.stop()]);
  });

  it('puts back what may change, refuses nothing else, and a rerun writes nothing', async () => {
    target.api.mergePatch(STATEFULSETS, 'db', namespace, { spec: { replicas: 3, template: { spec: { containers: [{ name: 'main', image: 'postgres:17' }] } } } });
    const updated = await restore('update');
    expect(updated.failures).to.deep.equal([]);
    const db = target.api.get(STATEFULSETS, 'db', namespace)!;
    expect((db.spec as { replicas: number }).replicas).to.equal(1);
    expect((db.spec as { template: { spec: { containers: Array<{ image: string }> } } }).template.spec.containers[0]!.image).to.equal('postgres:16');
    const again = await restore('update');
    expect(again.totals).to.include({ updated: 0, failed: 0 });
  });

  it('fails only the workload whose immutable fields differ on the target, with the server\'s sentence', async () => {
    target.api.delete(DEPLOYMENTS, 'web', namespace);
    target.api.create(DEPLOYMENTS, workload('Deployment', 'web', namespace, 'web-v2'));
    target.api.mergePatch(STATEFULSETS, 'db', namespace, { spec: { replicas: 2 } });
    const result = await restore('update');
    expect(result.failures).to.have.length(1);
    expect(result.failures[0]).to.contain('Deployment.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable');
    expect(result.totals.updated).to.equal(1);
    expect((target.api.get(STATEFULSETS, 'db', namespace)!.spec as { replicas: number }).replicas).to.equal(1);
  });
});
